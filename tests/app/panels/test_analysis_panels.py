"""The analyses in the window and on the command line: value-weighted attention as a stage, rollout,
switching heads off (view state, undo, sessions), "most important heads", the head dashboard, and
the exports' analysis arrays. Every number shown is compared with the engine's arrays."""
from __future__ import annotations

import json
import math
import os
import subprocess
import sys

import numpy as np
import pytest

from tests import ROOT
from engine import AttentionConfig, compute
from engine.analysis.ablation import mean_cosine_distance, token_cosines
from engine.analysis.arrays import analysis_arrays
from engine.analysis.head_stats import head_stats, special_mask
from engine.analysis.rollout import attention_rollout
from tests.shared_helpers import dock as _dock, settle as _settle  # noqa: E402

pytestmark = pytest.mark.slow  # whole windows, real models and processes started

MAIN = str(ROOT / "main.py")
ANIMAL = "The animal didn't cross the street because it was too tired."


def _run(*args):
    env = dict(os.environ, PYTHONUTF8="1")
    return subprocess.run([sys.executable, MAIN, "export", *args], capture_output=True, text=True, timeout=120, env=env)


# ------------------------------------------------------------------ command line
def test_cli_toy_exports_analysis_and_ablation(tmp_path):
    out = tmp_path / "t.npz"
    done = _run("--text", "the cat sat on the mat", "--ablate", "0.1,0.3", "--out", str(out))
    assert done.returncode == 0, done.stderr
    expected = compute(AttentionConfig(text="the cat sat on the mat"), ablate=frozenset({(0, 1), (0, 3)}))
    arrays = analysis_arrays(expected)
    with np.load(out) as data:  # no pickle: the head table is a plain structured array
        np.testing.assert_array_equal(data["output"], expected.output)  # the ablated run, not the plain one
        assert not data["head_outputs"][1].any() and not data["value_norms"][0, 3].any()
        for name in ("value_norms", "rollout", "value_rollout"):
            assert data[name].shape == arrays[name].shape
            np.testing.assert_allclose(data[name], arrays[name], rtol=1e-6, err_msg=name)
        assert data["head_stats"].dtype.names == ("layer", "head", "entropy", "first", "special", "previous", "self")
        np.testing.assert_array_equal(data["head_stats"], arrays["head_stats"])
    plain = compute(AttentionConfig(text="the cat sat on the mat"))
    assert not np.allclose(plain.output, expected.output)  # ignoring --ablate would fail the test above


def test_cli_head_table_csv_and_json(tmp_path):
    csv_out, json_out = tmp_path / "h.csv", tmp_path / "t.json"
    assert _run("--text", "a b c d", "--heads", "2", "--d-model", "8", "--table", "head-stats",
                "--out", str(csv_out)).returncode == 0
    table = analysis_arrays(compute(AttentionConfig(text="a b c d", heads=2, d_model=8)))["head_stats"]
    lines = csv_out.read_text().splitlines()
    assert lines[0] == "layer,head,entropy,first,special,previous,self" and len(lines) == 3
    for line, row in zip(lines[1:], table):
        values = line.split(",")
        assert (int(values[0]), int(values[1])) == (row["layer"], row["head"])
        np.testing.assert_allclose([float(v) for v in values[2:]], [row[c] for c in table.dtype.names[2:]], atol=1e-6)
    assert _run("--text", "a b c d", "--heads", "2", "--d-model", "8", "--out", str(json_out)).returncode == 0
    document = json.loads(json_out.read_text())
    assert [r["head"] for r in document["head_stats"]] == [0, 1]
    assert document["head_stats"][1]["entropy"] == pytest.approx(float(table[1]["entropy"]))
    assert np.asarray(document["rollout"]).shape == (1, 4, 4)


def test_cli_bad_ablation_is_one_error_line(tmp_path):
    for value, words in (("1.0", "layers 0 … 0"), ("0.x", "layer.head pairs"), ("0.9", "heads 0 … 3")):
        done = _run("--text", "a b", "--ablate", value, "--out", str(tmp_path / "x.npz"))
        assert done.returncode == 2 and words in done.stderr and not (tmp_path / "x.npz").exists(), done.stderr


def test_cli_minilm_ablation_equals_the_engine(minilm, tmp_path):
    from engine.models.bert import forward

    out = tmp_path / "m.npz"
    done = _run("--model", "minilm", "--text", ANIMAL, "--ablate", "3.1,5.11", "--out", str(out))
    assert done.returncode == 0, done.stderr
    tokenized = minilm.tokenize(ANIMAL)
    ablated = forward(minilm.weights, minilm.config, tokenized.input_ids, tokenized.tokens,
                      ablate=frozenset({(3, 1), (5, 11)}))
    arrays = analysis_arrays(ablated, minilm.weights)
    with np.load(out) as data:
        np.testing.assert_allclose(data["hidden_states"], ablated.hidden_states, rtol=1e-5, atol=1e-6)
        assert data["value_norms"].shape == (6, 12, ablated.n, ablated.n)
        np.testing.assert_allclose(data["value_norms"], arrays["value_norms"], rtol=1e-5, atol=1e-7)
        assert not data["value_norms"][3, 1].any() and not data["value_norms"][5, 11].any()
        np.testing.assert_allclose(data["rollout"], arrays["rollout"], rtol=1e-6)
        np.testing.assert_array_equal(data["head_stats"], arrays["head_stats"])
        plain = minilm.run(ANIMAL)
        it = ablated.token_texts.index("it")
        assert token_cosines(plain.hidden_states[-1], data["hidden_states"][-1])[it] < 0.95  # it really changed


# ------------------------------------------------------------------ the window (toy engine)
def test_value_weighted_stage_shows_the_engines_norms(window, qtbot):
    c = window.controller
    c.select(head=1, stage="value_norms")
    _settle(window, qtbot)
    result = c.snapshot.result
    norms = analysis_arrays(result)["value_norms"][0]  # (heads, n, n)
    np.testing.assert_allclose(window.panels["attention"].heatmap.matrix(), norms[1], rtol=1e-6)
    # by hand: α_ij · ‖v_j · W_O rows of head 1‖
    d_k = result.config.d_k
    f = result.v[1].astype(np.float64) @ result.w_o[d_k:2 * d_k].astype(np.float64)  # (n, d)
    np.testing.assert_allclose(norms[1], result.weights[1] * np.linalg.norm(f, axis=1)[None, :], rtol=1e-5)
    grid = window.panel("heads")
    np.testing.assert_allclose(grid.image_data(1), c.snapshot.value_thumbnails[1])
    np.testing.assert_allclose(c.snapshot.value_thumbnails[1], norms[1], rtol=1e-6)  # small n: not averaged
    c.inspect(2, 0)
    _settle(window, qtbot)
    text = window.panels["arithmetic"].view.toPlainText()
    expected = norms[1, 2, 0]
    assert "5 ·" in text and f"= {expected:.3f}" in text.split("5 ·")[1]


def test_switching_a_head_off_recomputes_undoes_and_is_saved(window, qtbot, tmp_path):
    c = window.controller
    grid = window.panel("heads")
    plain = c.snapshot.result
    grid.toggle(2)
    _settle(window, qtbot)
    assert c.ablate == frozenset({(0, 2)}) and grid.switched_off() == [2]
    ablated = compute(c.config, ablate=frozenset({(0, 2)}))
    np.testing.assert_allclose(c.snapshot.result.output, ablated.output, rtol=1e-6)
    panel = _dock(window, "ablation")
    _settle(window, qtbot)
    np.testing.assert_allclose(c.snapshot.analysis.cosines, token_cosines(plain.output, ablated.output), rtol=1e-6)
    heights = panel.bars.opts["height"]
    np.testing.assert_allclose(heights, token_cosines(plain.output, ablated.output), rtol=1e-6)
    assert c.view_state().session_view()["ablate"] == [[0, 2]]
    path = tmp_path / "s.json"
    assert window.save_session(str(path))
    assert json.loads(path.read_text())["view"]["ablate"] == [[0, 2]]
    c.undo()
    _settle(window, qtbot)
    assert c.ablate == frozenset() and grid.switched_off() == []
    np.testing.assert_allclose(c.snapshot.result.output, plain.output)
    c.redo()
    _settle(window, qtbot)
    assert c.ablate == frozenset({(0, 2)}) and grid.switched_off() == [2]
    c.set_ablation(frozenset())
    _settle(window, qtbot)
    assert window.open_session(str(path))
    _settle(window, qtbot)
    assert c.ablate == frozenset({(0, 2)}) and grid.switched_off() == [2]


def test_rank_heads_in_the_window_toy(window, qtbot):
    c = window.controller
    panel = _dock(window, "ablation")
    panel.rank()
    assert panel.is_ranking()
    qtbot.waitUntil(lambda: not panel.is_ranking(), timeout=60000)
    config = c.config
    baseline = compute(config)
    effect = mean_cosine_distance(baseline.output)
    expected = [effect(compute(config, ablate=frozenset({(0, h)})).output) for h in range(config.heads)]
    shown = panel.grid.matrix()  # (1, heads)
    np.testing.assert_allclose(shown[0], expected, rtol=1e-6)
    first = panel.top_list.item(0).data(0x0100)
    assert tuple(first) == (0, int(np.argmax(expected)))


def test_rollout_panel_shows_the_formula(window, qtbot):
    panel = _dock(window, "rollout")
    c = window.controller
    c.select(focus=1)
    _settle(window, qtbot)
    weights = c.snapshot.result.weights.astype(np.float64)
    n = weights.shape[-1]
    mixed = 0.5 * weights.mean(axis=0) + 0.5 * np.eye(n)
    expected = mixed / mixed.sum(axis=1, keepdims=True)
    np.testing.assert_allclose(panel.matrix(), expected, rtol=1e-9)
    np.testing.assert_allclose(panel.heatmap.matrix(), expected, rtol=1e-9)
    np.testing.assert_allclose(panel.bars.opts["height"], expected[1], rtol=1e-9)
    # the caption names the largest share: another token's, or (said once) the token's own
    labels = c.snapshot.result.token_texts
    for focus in range(n):
        c.select(focus=focus)
        _settle(window, qtbot)
        top = int(np.argmax(expected[focus]))
        text = panel.caption.text()
        assert f"holds {expected[focus, focus]:.2f} of its own input token" in text, text
        if top == focus:
            assert "its own input token, the largest share" in text and " from “" not in text, text
        else:
            assert f"and {expected[focus, top]:.2f} from “{labels[top]}” (the largest share)" in text, text


def test_dashboard_table_scatter_and_selection_both_ways(window, qtbot):
    panel = _dock(window, "dashboard")
    c = window.controller
    _settle(window, qtbot)
    result = c.snapshot.result
    stats = head_stats(result.weights[None], special_mask(result.token_texts, frozenset()))  # the toy has no special tokens
    model = panel.table_model
    assert model.rowCount() == result.config.heads
    for head in range(result.config.heads):
        assert model.data(model.index(head, 2)) == f"{stats['entropy'][0, head]:.3f}"
        assert model.data(model.index(head, 5), 0x0100) == pytest.approx(stats["previous"][0, head])
    np.testing.assert_allclose(panel.points()[:, 0], stats["entropy"][0])
    np.testing.assert_allclose(panel.points()[:, 1], stats["special"][0])
    from PySide6.QtCore import Qt

    panel.view.sortByColumn(2, Qt.SortOrder.DescendingOrder)  # entropy
    top = int(np.argmax(stats["entropy"][0]))
    assert panel.proxy.data(panel.proxy.index(0, 1)) == str(top)
    panel.view.setCurrentIndex(panel.proxy.index(0, 0))  # the table selects the head …
    assert c.head == top
    c.select(head=(top + 1) % result.config.heads)  # … and the head selects the row
    row = panel.view.currentIndex()
    assert int(panel.proxy.data(panel.proxy.index(row.row(), 1))) == c.head


# ------------------------------------------------------------------ the window (MiniLM)
def test_minilm_rank_heads_in_a_lane_with_cancel(window, qtbot, minilm):
    from engine.analysis.encoder_ablation import rank_encoder_heads

    c = window.controller
    c.set_config(c.config.replace(text=ANIMAL), immediate=True)
    window.model_combo.setCurrentIndex(window.model_combo.findData("minilm"))
    _settle(window, qtbot)
    panel = _dock(window, "ablation")
    panel.rank()
    from PySide6.QtCore import Qt

    qtbot.keyClick(window, Qt.Key.Key_Escape)  # Esc: the ranking stops, nothing half-done is shown
    assert not panel.is_ranking() and panel.grid.matrix() is None
    panel.rank()
    qtbot.waitUntil(lambda: not panel.is_ranking(), timeout=120000)
    expected = rank_encoder_heads(minilm.weights, minilm.config, minilm.run(ANIMAL))
    np.testing.assert_allclose(panel.grid.matrix(), expected.effect_grid(6, 12), rtol=1e-4, atol=1e-7)
    assert [tuple(panel.top_list.item(i).data(0x0100)) for i in range(10)] == list(expected.heads[:10])
    # dashboard names the previous-token head of layer 0 (engine figure: L0H2 ≈ 1.00)
    dashboard = _dock(window, "dashboard")
    _settle(window, qtbot)
    assert "L0H2" in dashboard.caption.text()
    values = attention_rollout(c.snapshot.bert.attentions)
    rollout = _dock(window, "rollout")
    _settle(window, qtbot)
    np.testing.assert_allclose(rollout.matrix(), values[-1], rtol=1e-9)
    assert not math.isnan(float(rollout.matrix().sum()))
