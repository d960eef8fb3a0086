"""The later lessons' labs: 0.26 (GPU vs RNN), 1.28 (sensitivity with and without ÷√d_k),
1.40 (the movie sum), 1.9 (the block diagram). Each number against an independent float64 loop."""
import math

import numpy as np
import pytest

from tests import ROOT
from engine import AttentionConfig, EngineError, compute
from engine.toy.labs import key_sensitivity, scaling_point, sweep_config
from engine.toy.sequential import attention_scores, compare_sequential, rnn_states


# ------------------------------------------------------------------ 0.26: one product against n steps
def rnn_by_loop(x, w_h, w_x):
    """Independent oracle: the Elman RNN element by element in float64 Python."""
    n, d = x.shape
    h = [0.0] * d
    out = []
    for t in range(n):
        h = [math.tanh(sum(h[a] * float(w_h[a, b]) for a in range(d)) + sum(float(x[t, a]) * float(w_x[a, b])
                                                                           for a in range(d))) for b in range(d)]
        out.append(h)
    return np.array(out)


def test_doc_0_26_the_rnn_is_the_recurrence_and_takes_n_dependent_steps():
    rng = np.random.default_rng(3)
    x, w_h, w_x = rng.standard_normal((7, 4)), rng.standard_normal((4, 4)) * 0.5, rng.standard_normal((4, 4)) * 0.5
    states, steps = rnn_states(x, w_h, w_x)
    assert np.allclose(states, rnn_by_loop(x, w_h, w_x), atol=1e-12)
    assert steps == 7
    # the chain is n long: the last state changes when the first token changes …
    moved = x.copy()
    moved[0] += 1.0
    assert not np.allclose(rnn_states(moved, w_h, w_x)[0][-1], states[-1])
    # … while a score reads only its own query and key: changing token 0 leaves every (i, j), i, j > 0
    q, k = rng.standard_normal((7, 4)), rng.standard_normal((7, 4))
    scores, one = attention_scores(q, k)
    assert one == 1
    assert np.allclose(scores, [[sum(q[i, a] * k[j, a] for a in range(4)) for j in range(7)] for i in range(7)])
    q2, k2 = q.copy(), k.copy()
    q2[0] += 1.0
    k2[0] += 1.0
    assert np.array_equal(attention_scores(q2, k2)[0][1:, 1:], scores[1:, 1:])


@pytest.mark.parametrize("n, d", [(9, 4), (512, 64)])
def test_doc_0_26_the_counts(n, d):
    result = compare_sequential(n, d, repeats=1)
    assert (result.attention_steps, result.rnn_steps) == (1, n)
    assert result.attention_dot_products == n * n
    assert result.attention_multiply_adds == sum(d for _i in range(n) for _j in range(n))
    assert result.rnn_multiply_adds == sum(d * d + d * d for _t in range(n))
    assert result.attention_seconds > 0 and result.rnn_seconds > 0  # measured, not asserted against each other


@pytest.mark.parametrize("bad", [{"n": 0, "d": 4}, {"n": 5, "d": 4096}, {"n": 2.5, "d": 4}])
def test_doc_0_26_refuses_bad_sizes(bad):
    with pytest.raises(EngineError) as caught:
        compare_sequential(**bad)
    assert caught.value.field in ("n", "d")


# ------------------------------------------------------------------ 1.28: sensitivity with and without ÷√d_k
def softmax_by_loop(row):
    finite = [s for s in row if s != -math.inf]
    top = max(finite)
    exps = [0.0 if s == -math.inf else math.exp(s - top) for s in row]
    total = sum(exps)
    return [e / total for e in exps]


@pytest.mark.parametrize("mask", ["none", "causal"])
@pytest.mark.parametrize("scale", [True, False])
def test_doc_1_28_row_change_when_one_key_grows(mask, scale):
    result = compute(AttentionConfig(text="I ate the cake and it was delicious.", d_model=32, heads=2, mask=mask))
    raw = np.asarray(result.scores[1], dtype=np.float64)
    divisor = math.sqrt(result.config.d_k) if scale else 1.0
    got = key_sensitivity(raw, divisor, result.mask)
    n = result.n
    for j in range(n):
        for i in range(n):
            row = [(raw[i, c] * (1.01 if c == j else 1.0)) / divisor for c in range(n)]
            base = [raw[i, c] / divisor for c in range(n)]
            if result.mask is not None:
                row = [-math.inf if result.mask[i, c] else s for c, s in enumerate(row)]
                base = [-math.inf if result.mask[i, c] else s for c, s in enumerate(base)]
            before, after = softmax_by_loop(base), softmax_by_loop(row)
            assert got.change[j, i] == pytest.approx(0.5 * sum(abs(a - b) for a, b in zip(after, before)), abs=1e-12)


def test_doc_1_28_the_jacobian_by_finite_differences():
    result = compute(AttentionConfig(text="小明 喜欢 苹果", tokenizer="whitespace", d_model=16, heads=1, scale=False))
    raw = np.asarray(result.scores[0], dtype=np.float64)
    got = key_sensitivity(raw, 4.0)
    step = 1e-6
    for i in range(result.n):
        columns = []
        for c in range(result.n):
            up, down = raw[i].copy(), raw[i].copy()
            up[c] += step
            down[c] -= step
            columns.append((np.array(softmax_by_loop(up / 4.0)) - np.array(softmax_by_loop(down / 4.0))) / (2 * step))
        assert got.jacobian[i] == pytest.approx(math.sqrt(sum(float(v) ** 2 for col in columns for v in col)), rel=1e-5)


def test_doc_1_28_the_sweep_point_reports_it_for_both_variants():
    config = AttentionConfig(text="I ate the cake and it was delicious.")
    point = scaling_point(config, 512)
    base = compute(sweep_config(config).replace(d_model=512))
    raw = np.asarray(base.scores[0], dtype=np.float64)
    with_scale, without = key_sensitivity(raw, math.sqrt(512)), key_sensitivity(raw, 1.0)
    assert point.change_max_scaled == pytest.approx(with_scale.change.max())
    assert point.change_max_unscaled == pytest.approx(without.change.max())
    assert point.jacobian_unscaled == pytest.approx(without.jacobian.mean())
    # saturated rows barely move: the unscaled Jacobian is smaller than the scaled one at 512
    assert point.jacobian_unscaled < point.jacobian_scaled


# ------------------------------------------------------------------ 1.40: the movie sum
def test_doc_1_40_the_partial_movie_sum():
    from engine.toy.movie_sum import movie_sum

    result = movie_sum()
    # by hand from the seed's text: 0.25·[8, 2, 121] + 0.20·[7, 1, 169]
    expected = [0.25 * 8 + 0.20 * 7, 0.25 * 2 + 0.20 * 1, 0.25 * 121 + 0.20 * 169]
    assert result.partial.tolist() == pytest.approx(expected)
    assert result.partial.tolist() == pytest.approx([3.4, 0.7, 64.05])
    assert result.titles == ("星球大战", "星际穿越") and result.missing == ("落魄大厨",) and result.missing_weights == (0.1,)
    assert result.covered == pytest.approx(0.45)
    seed = (ROOT.parent / "shared" / "seeds")
    text = next(seed.glob("001_*.txt"), None) if seed.is_dir() else None
    if text is not None:  # the numbers are the seed's own
        body = text.read_text(encoding="utf-8")
        assert "星球大战 → [冒险 8，幽默 2，121 分钟]" in body and "星际穿越 → [冒险 7，幽默 1，169" in body
        assert "25% 星球大战、20% 星际穿越、10% 落魄大厨" in body


# ------------------------------------------------------------------ the views, in a window
@pytest.mark.slow
def test_the_three_lesson_views_open_from_the_lessons_menu(window, qtbot):
    from app.diagram_view import BOXES
    from app.panels.player_panel import STAGE_KEYS

    actions = [window.command_actions[key] for key in ("lessons.parallel", "lessons.diagram", "lessons.movie_sum")]
    assert all(action in window.menus["lessons"].actions() for action in actions)
    views = window.navigation.lesson_views
    actions[0].trigger()
    dialog = views["parallel"]
    dialog.n_box.setValue(64)
    dialog.d_box.setValue(16)
    dialog.measure()
    qtbot.waitUntil(dialog.is_idle, timeout=20000)
    assert dialog.table.item(0, 0).text() == "1" and dialog.table.item(0, 1).text() == "64"
    assert dialog.table.item(1, 0).text() == f"{64 * 64 * 16:,}"
    actions[2].trigger()
    qtbot.waitUntil(lambda: views["movie_sum"].result is not None, timeout=10000)
    assert "[3.4, 0.7, 64.05]" in views["movie_sum"].sum_label.text()
    actions[1].trigger()
    diagram = views["diagram"]
    # every stage of the player has a box, and clicking a box opens the player at that stage
    assert {key for _label, key, *_rest in BOXES} == set(STAGE_KEYS)
    for box in diagram.boxes:
        diagram._clicked(box.key)
        assert window.show_player().stage_key == box.key
        assert diagram.current == STAGE_KEYS.index(box.key)
        outlined = [b.key for b in diagram.boxes if b.pen().width() == 3]
        assert set(outlined) == {box.key}
    # a real click on a box's centre
    from PySide6.QtCore import Qt
    from PySide6.QtTest import QTest

    diagram.view.ensureVisible(diagram.boxes[3])
    centre = diagram.view.mapFromScene(diagram.boxes[3].sceneBoundingRect().center())
    QTest.mouseClick(diagram.view.viewport(), Qt.MouseButton.LeftButton, pos=centre)
    assert window.show_player().stage_key == diagram.boxes[3].key == "scores"


# ------------------------------------------------------------------ the document's figures for these items
def test_doc_1_28_figures_as_printed():
    cake = AttentionConfig(text="I ate the cake and it was delicious.")
    at512, at1024 = scaling_point(cake, 512), scaling_point(cake, 1024)
    printed = lambda value: f"{value:.3f}"  # noqa: E731
    assert (printed(at512.change_max_unscaled), printed(at512.change_max_scaled)) == ("0.007", "0.008")
    assert (printed(at1024.change_max_unscaled), printed(at1024.change_max_scaled)) == ("0.063", "0.011")
    assert (printed(at1024.jacobian_unscaled), printed(at1024.jacobian_scaled)) == ("0.038", "0.011")
    xiaoming = scaling_point(AttentionConfig(text="小明喜欢苹果"), 1024)
    assert (printed(xiaoming.change_max_unscaled), printed(xiaoming.change_max_scaled)) == ("0.000", "0.004")


def test_doc_0_26_figures_as_printed():
    result = compare_sequential(256, 128, repeats=1)
    assert (result.attention_steps, result.attention_dot_products, result.attention_multiply_adds) == (1, 65536, 8388608)
    assert (result.rnn_steps, result.rnn_multiply_adds) == (256, 8388608)
