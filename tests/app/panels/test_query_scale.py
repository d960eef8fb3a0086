"""Gemma's own query scale (and Gemma 2's score cap) in the views that write the arithmetic out.

Gemma divides q·k by √query_pre_attn_scalar, not √d_k, and Gemma 2 then caps the scores at
cap · tanh(s / cap). The worked arithmetic, the cell inspector and the player's caption (which the
step-through export writes too) must show the divisor the engine used and numbers that follow from
it. The tiny Gemma 2 folder has d_k = 16, query_pre_attn_scalar = 24 and a cap of 2, so √d_k = 4,
the right divisor √24 = 4.899 and a cap that bends every score are told apart.
"""
from __future__ import annotations

import json
import math
import shutil
from tests import FIXTURES

import numpy as np
import pytest

from engine.analysis.explain import explain
from engine.analysis.inspect import inspect_cell
from engine.models.families.loading import load_folder

FAMILIES = FIXTURES / "families"
TEXT = "The cat sat on the mat, then 小猫 slept."
LAYER, HEAD = 1, 3  # the Gemma 2 fixture's full-attention layer; head 3 reads key/value head 1


@pytest.fixture(scope="module")
def gemma2():
    model = load_folder(FAMILIES / "gemma2")
    trace = model.run(TEXT, use_cache=False)
    return model, trace, model.layer_view(trace, LAYER)


def reference_row(model, trace, head: int, query: int) -> tuple[np.ndarray, np.ndarray]:
    """(capped scores, weights) of one row in float64 from the trace's q and k, key by key."""
    config = model.config
    q = trace.q[LAYER][head].astype(np.float64)  # (n, d_k)
    k = trace.k[LAYER][head // (config.num_heads // config.num_kv_heads)].astype(np.float64)  # (n, d_k)
    capped = []
    for j in range(query + 1):  # causal: the keys up to the query
        dot = sum(q[query, c] * k[j, c] for c in range(q.shape[1]))
        capped.append(2.0 * math.tanh(dot / math.sqrt(24.0) / 2.0))
    capped = np.array(capped)
    weights = np.exp(capped - capped.max())
    return capped, weights / weights.sum()


def test_gemma_arithmetic_uses_the_engines_divisor_and_cap(gemma2):
    model, trace, view = gemma2
    assert (model.config.head_dim, model.config.query_scale, model.config.attn_softcap) == (16, 24.0, 2.0)
    query = view.n - 1
    capped, weights = reference_row(model, trace, HEAD, query)
    explanation = explain(view, HEAD, query)
    assert explanation.divisor == model.config.score_divisor == math.sqrt(24.0)  # the engine's, not √16
    assert (explanation.query_scale, explanation.softcap) == (24.0, 2.0)
    np.testing.assert_allclose([t.scaled for t in explanation.terms], capped, atol=2e-5)
    np.testing.assert_allclose([t.weight for t in explanation.terms], weights, atol=2e-6)
    lines = explanation.to_text().splitlines()  # the plain-text form says the same
    assert "2. Scale: divide by √query_pre_attn_scalar = √24 = 4.899 (this model's query scale, not √d_k)" in lines
    assert f"   <s>: 2 · tanh({explanation.terms[0].score:.3f} / 4.899 / 2) = {capped[0]:.3f}" in lines
    for key in (0, 5, query):
        cell = inspect_cell(view, HEAD, query, key)
        assert cell.divisor == math.sqrt(24.0)
        assert cell.scaled == pytest.approx(capped[key], abs=1e-9)  # recomputed in float64 as the loop
        assert cell.weight == pytest.approx(weights[key], abs=1e-9)
        assert cell.weight == pytest.approx(cell.engine_weight, abs=2e-6)


def test_worked_arithmetic_writes_the_query_scale_in_english_and_chinese(gemma2, standalone_panel):
    from PySide6.QtWidgets import QApplication

    from app import i18n
    from app.panels.arithmetic_panel import ArithmeticPanel, number

    _, trace, view = gemma2
    _, panel = standalone_panel(ArithmeticPanel, 700, 500)
    explanation = explain(view, HEAD, view.n - 1)
    text = panel.render(explanation)
    assert "divide by √query_pre_attn_scalar = √24 = 4.899" in text
    assert "not √d_k = √16" in text and "divide by √d_k" not in text
    assert "then cap: 2 · tanh(s / 2)" in text
    first = explanation.terms[0]
    assert f"2 · tanh({number(first.score)} / 4.899 / 2) = <b>{number(first.scaled)}</b>" in text
    try:
        i18n.install_translator(QApplication.instance(), "zh_CN")
        chinese = panel.render(explanation)
    finally:
        i18n.install_translator(QApplication.instance(), i18n.ENGLISH)
    assert "除以 √query_pre_attn_scalar = √24 = 4.899（这个模型自己的查询缩放，不是 √d_k = √16）" in chinese
    assert "再加软上限：2 · tanh(s / 2)" in chinese


def test_inspector_names_the_query_scale_and_the_cap(gemma2, standalone_panel):
    from app.panels.inspector_panel import InspectorPanel

    _, trace, view = gemma2
    _, panel = standalone_panel(InspectorPanel, 900, 500)
    cell = inspect_cell(view, HEAD, view.n - 1, 2)
    panel.show_inspection(cell)
    assert float(panel.value_text("divisor")) == pytest.approx(math.sqrt(24.0), rel=1e-3)
    how = {key: panel.steps.item(row, 1).text() for row, key in enumerate(panel.STEP_KEYS)}
    assert how["divisor"] == "√query_pre_attn_scalar = √24 (this model’s query scale, not √d_k = √16)"
    assert how["scaled"].startswith("2 · tanh(score ÷ divisor ÷ 2)")
    assert float(panel.value_text("scaled")) == pytest.approx(cell.scaled, abs=1e-3)


def _gemma3_with_scale(tmp_path, scalar: int) -> Path:
    folder = tmp_path / "gemma3"
    shutil.copytree(FAMILIES / "gemma3", folder)
    config = json.loads((folder / "config.json").read_text())
    config["query_pre_attn_scalar"] = scalar
    (folder / "config.json").write_text(json.dumps(config))
    return folder


def test_player_caption_says_which_scale(gemma2, tmp_path, qapp):
    from figures.stages import caption_lines

    _, _, view = gemma2
    what, why = caption_lines("scaled", view, HEAD, view.n - 1, trained=True)
    assert "÷ √query_pre_attn_scalar = ÷ √24 = ÷ 4.9 (this model’s query scale, not √d_k = √16)." in what
    assert "Then capped: 2 · tanh(s ÷ 2), so no score passes ±2." in what
    assert "Gemma" in why
    from PySide6.QtWidgets import QApplication

    from app import i18n

    try:
        i18n.install_translator(QApplication.instance(), "zh_CN")
        chinese, _ = caption_lines("scaled", view, HEAD, view.n - 1, trained=True)
    finally:
        i18n.install_translator(QApplication.instance(), i18n.ENGLISH)
    assert "缩放后 = 分数 ÷ √query_pre_attn_scalar = ÷ √24 = ÷ 4.9（这个模型自己的查询缩放，不是 √d_k = √16）。" in chinese
    assert "再加软上限：2 · tanh(s ÷ 2)，所以没有分数超过 ±2。" in chinese

    model = load_folder(_gemma3_with_scale(tmp_path, 36))  # no cap; √36 = 6 against √d_k = 4
    assert model.config.score_divisor == 6.0
    what, _ = caption_lines("scaled", model.layer_view(model.run(TEXT, use_cache=False), 0), 0, 2, trained=True)
    assert "÷ √36 = ÷ 6 (this model’s query scale, not √d_k = √16)." in what and "tanh" not in what

    llama = load_folder(FAMILIES / "llama")  # no query scale of its own: √d_k as before
    d_k = llama.config.head_dim
    what, _ = caption_lines("scaled", llama.layer_view(llama.run(TEXT, use_cache=False), 0), 0, 2, trained=True)
    assert f"Scaled = scores ÷ √d_k = ÷ √{d_k} = ÷ {math.sqrt(d_k):.3g}." in what
    assert "query_pre_attn_scalar" not in what


def test_the_heatmap_says_the_scale_beside_the_scaled_scores(gemma2, standalone_panel):
    from types import SimpleNamespace

    from app.panels.attention_panel import AttentionPanel

    model, _, view = gemma2
    _, panel = standalone_panel(AttentionPanel, 700, 500)
    snapshot = SimpleNamespace(bert=model, layer=LAYER, result=view)
    assert panel._block_notes(snapshot, "scaled") == ("scores ÷ √query_pre_attn_scalar = ÷ √24 (this model’s scale, "
                                                      "not √d_k) · scores soft-capped: 2 · tanh(s / 2)")
    assert panel._block_notes(snapshot, "weights") == ""  # the softmax weights: neither applies to them
