"""Positional-encoding lab: the shuffle test (engine and panel), the PE heatmap and RoPE pairs.

Seed 004: without positions the model "无法区分'猫追老鼠'和'老鼠追猫'". Self-attention is
permutation-equivariant, so after un-permuting, the shuffled sentence's weights and outputs
equal the original's — up to float32 rounding, because BLAS sums in another order.
"""
import math
import re

import numpy as np
import pytest

from engine import AttentionConfig, EngineError, compute
from engine.toy.labs import default_permutation, shuffle_test
from engine.core.positional import rope_angles, sinusoidal

ROUNDING = 1e-6  # measured: ≤ 1.2e-7 for weights and ≤ 1e-6 for outputs on these sizes
CAT = AttentionConfig(text="猫追老鼠", d_model=16, heads=2, seed=0)
SENTENCE = AttentionConfig(text="The animal didn't cross the street because it was too tired .", d_model=64, heads=4)


# ----------------------------------------------------------------------------- engine
def test_reversal_is_the_seeds_example():
    result = shuffle_test(CAT.replace(positional="none"))
    assert result.tokens == ["猫", "追", "老鼠"]
    assert result.shuffled_tokens == ["老鼠", "追", "猫"]
    assert result.permutation == (2, 1, 0)


@pytest.mark.parametrize("config", [CAT, SENTENCE], ids=["cat", "sentence"])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_without_positions_attention_only_permutes(config, seed):
    result = shuffle_test(config.replace(positional="none"), seed=seed)
    assert not result.same_sentence
    assert result.max_weight_difference <= ROUNDING
    assert result.max_output_difference <= ROUNDING * max(1.0, float(np.abs(result.original.output).max()))
    assert result.only_permuted


@pytest.mark.parametrize("positional", ["sinusoidal", "rope"])
@pytest.mark.parametrize("config", [CAT, SENTENCE], ids=["cat", "sentence"])
def test_positions_make_the_order_visible(config, positional):
    result = shuffle_test(config.replace(positional=positional))
    assert result.max_weight_difference > 1e-2
    assert result.max_output_difference > 1e-2
    assert not result.only_permuted


def test_both_runs_share_tokens_embeddings_and_weights():
    config = SENTENCE.replace(positional="sinusoidal", seed=7)
    result = shuffle_test(config, seed=3)
    order = list(result.permutation)
    assert sorted(order) == list(range(len(order))) and all(i != j for i, j in enumerate(order))
    assert result.original.config == config  # the user's settings, untouched
    assert result.shuffled_tokens == [result.tokens[i] for i in order]
    np.testing.assert_array_equal(result.shuffled.embeddings, result.original.embeddings[order])
    for name in ("w_q", "w_k", "w_v", "w_o"):
        np.testing.assert_array_equal(getattr(result.shuffled, name), getattr(result.original, name))
    # positions do not move with the tokens: row i of PE stays at position i
    np.testing.assert_array_equal(result.shuffled.positional, result.original.positional)


def test_user_embedding_table_is_used_in_both_runs():
    table = {"小明": [1, 0, 1, 0], "喜欢": [0, 1, 1, 0], "苹果": [1, 1, 0, 1]}  # seed 000's vectors
    config = AttentionConfig(text="小明 喜欢 苹果", d_model=4, heads=1, embeddings=table, positional="none")
    result = shuffle_test(config)
    for row, text in zip(result.shuffled.embeddings, result.shuffled_tokens):
        np.testing.assert_array_equal(row, table[text])
    assert result.max_weight_difference <= ROUNDING


def test_difference_is_the_unpermuted_shuffled_trace_minus_the_original():
    result = shuffle_test(SENTENCE.replace(positional="rope"), seed=5)
    order = result.permutation
    n = len(order)
    expected = np.empty_like(result.original.weights)
    for i in range(n):  # plain loop: shuffled pair (i, j) holds original tokens (order[i], order[j])
        for j in range(n):
            expected[:, order[i], order[j]] = result.shuffled.weights[:, i, j]
    np.testing.assert_array_equal(result.weight_difference, expected - result.original.weights)
    assert result.max_weight_difference == pytest.approx(float(np.abs(expected - result.original.weights).max()))


def test_causal_mask_alone_reveals_the_order():
    """Honest caveat: a decoder's mask breaks the symmetry even without positional encoding."""
    result = shuffle_test(SENTENCE.replace(positional="none", mask="causal"))
    assert result.max_weight_difference > 1e-2 and not result.only_permuted


def test_default_permutation_changes_the_sentence_when_it_can():
    assert default_permutation(["a", "b", "c"], 0) == (2, 1, 0)
    assert default_permutation(["a", "b", "a"], 0) != (2, 1, 0)  # reversing a palindrome changes nothing
    for seed in range(1, 6):
        order = default_permutation(list("abcdef"), seed)
        assert sorted(order) == list(range(6)) and all(i != j for i, j in enumerate(order))
        assert order == default_permutation(list("abcdef"), seed)  # deterministic
    assert default_permutation(["x"], 0) == (0,)
    assert default_permutation(["a", "a", "a"], 4) == (0, 1, 2)  # nothing to shuffle
    same = shuffle_test(AttentionConfig(text="a a a", tokenizer="whitespace", d_model=8, heads=2))
    assert same.same_sentence and same.max_weight_difference == 0.0


def test_reusing_the_trace_on_screen_changes_nothing():
    config = SENTENCE.replace(positional="rope")
    on_screen = compute(config)
    reused, fresh = shuffle_test(config, seed=2, original=on_screen), shuffle_test(config, seed=2)
    assert reused.original is on_screen
    np.testing.assert_array_equal(reused.weight_difference, fresh.weight_difference)
    other = shuffle_test(config.replace(seed=9), original=on_screen)  # a trace of other settings is not reused
    assert other.original is not on_screen and other.original.config.seed == 9


def test_invalid_permutation_is_refused():
    with pytest.raises(EngineError, match="permutation"):
        shuffle_test(CAT, permutation=[0, 0, 1])


# ----------------------------------------------------------------------------- panel
@pytest.fixture
def lab(standalone_panel):
    from app.panels.positional_panel import PositionalPanel

    return standalone_panel(PositionalPanel, 900, 600)


def settle(qtbot, controller, panel):
    qtbot.waitUntil(lambda: bool(controller.is_idle() and panel.is_idle()), timeout=15000)


def displayed(label) -> float:
    """The number after "=" in a label, as the user reads it."""
    match = re.search(r"=\s*([-0-9.e+]+)", label.text())
    assert match, label.text()
    return float(match.group(1))


def test_panel_shuffle_button_shows_zero_without_positions_and_more_with_them(lab, qtbot):
    from PySide6.QtCore import Qt

    controller, panel = lab
    controller.set_config(CAT.replace(positional="none"), immediate=True)
    settle(qtbot, controller, panel)
    assert panel.objectName() == "positionalPanel"
    qtbot.mouseClick(panel.shuffle_button, Qt.MouseButton.LeftButton)
    settle(qtbot, controller, panel)
    assert "老鼠 追 猫" in panel.order_label.text()
    assert displayed(panel.weight_label) <= ROUNDING
    assert displayed(panel.output_label) <= 1e-5
    assert "No positional encoding" in panel.verdict.text()
    # switching positions in the lab reruns the same shuffle and the number jumps
    for positional, name in (("sinusoidal", "sinusoidal PE"), ("rope", "RoPE")):
        panel.positional.setCurrentIndex(panel.positional.findData(positional))
        assert controller.config.positional == positional
        qtbot.waitUntil(lambda: panel.shuffle_result is not None
                        and panel.shuffle_result.original.config.positional == positional, timeout=15000)
        settle(qtbot, controller, panel)
        assert displayed(panel.weight_label) > 1e-2
        assert displayed(panel.weight_label) == pytest.approx(panel.shuffle_result.max_weight_difference, rel=1e-3)
        assert name in panel.verdict.text()
    head = controller.head
    np.testing.assert_array_equal(panel.difference_map.matrix(), panel.shuffle_result.weight_difference[head])


def test_panel_shortcut_shuffles_again_with_a_new_order(lab, qtbot):
    from PySide6.QtCore import Qt

    controller, panel = lab
    controller.set_config(SENTENCE.replace(positional="none"), immediate=True)
    settle(qtbot, controller, panel)
    panel.activateWindow()
    qtbot.waitActive(panel)
    qtbot.keyClick(panel, Qt.Key.Key_P, Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier)
    # a button's shortcut "animates" the click: clicked arrives ~100 ms later
    qtbot.waitUntil(lambda: panel.shuffle_result is not None, timeout=15000)
    settle(qtbot, controller, panel)
    first = panel.shuffle_result.permutation
    assert first == tuple(range(len(first)))[::-1]
    panel.shuffle_button.click()
    settle(qtbot, controller, panel)
    assert panel.shuffle_result.permutation != first
    assert displayed(panel.weight_label) <= ROUNDING


def test_panel_pe_heatmap_is_the_engines_matrix(lab, qtbot):
    controller, panel = lab
    controller.set_config(SENTENCE.replace(positional="sinusoidal"), immediate=True)
    settle(qtbot, controller, panel)
    result = controller.snapshot.result
    np.testing.assert_array_equal(panel.pe_map.matrix(), result.positional)
    np.testing.assert_allclose(result.positional, sinusoidal(result.n, 64), atol=0)
    assert "sin(pos / 10000^(2i/d_model))" in panel.pe_caption.text()
    controller.set_config(SENTENCE.replace(positional="none", d_model=32), immediate=True)
    settle(qtbot, controller, panel)
    np.testing.assert_array_equal(panel.pe_map.matrix(), sinusoidal(controller.snapshot.result.n, 32))
    assert "Not added" in panel.pe_caption.text()


def test_panel_rope_pairs_are_rotations_by_the_engines_angles(lab, qtbot):
    controller, panel = lab
    controller.set_config(CAT.replace(positional="none"), immediate=True)
    settle(qtbot, controller, panel)
    assert panel.rope_stack.currentWidget() is panel.rope_hint
    controller.set_config(SENTENCE.replace(positional="rope"), immediate=True)
    settle(qtbot, controller, panel)
    controller.select(head=2, focus=5)
    result = controller.snapshot.result
    assert panel.rope_stack.currentIndex() == 1
    assert [pair["pair"] for pair in panel.rope_data] == [0, 2, 5, 7]  # d_k = 16: 8 pairs, fast to slow
    angles = rope_angles(result.n, 16)[5]
    for pair in panel.rope_data:
        i = pair["pair"]
        assert pair["angle"] == pytest.approx(angles[i]) == pytest.approx(5 * 10000 ** (-2 * i / 16))
        assert pair["before"] == pytest.approx(tuple(result.q_unrotated[2, 5, 2 * i: 2 * i + 2]))
        assert pair["after"] == pytest.approx(tuple(result.q[2, 5, 2 * i: 2 * i + 2]))
        x, y = pair["before"]
        c, s = math.cos(pair["angle"]), math.sin(pair["angle"])
        assert pair["after"] == pytest.approx((c * x - s * y, s * x + c * y), abs=1e-5)


def test_the_lab_on_a_trained_model_says_it_runs_the_toy_engine_not_that_rope_is_off(standalone_panel):
    """SmolLM2 rotates its queries and keys; its snapshot carries no toy RoPE pairs, which the lab read
    as "RoPE is off"."""
    import dataclasses

    from app.jobs.snapshot import take_snapshot
    from app.panels.positional_panel import PositionalPanel

    controller, panel = standalone_panel(PositionalPanel, 900, 500)
    toy = take_snapshot(CAT)
    panel.controller.snapshot = toy
    panel.show_snapshot(toy)
    assert panel.rope_hint.text().startswith("RoPE is off")
    trained = dataclasses.replace(toy, model="smollm2")
    panel.controller.snapshot = trained
    panel.show_snapshot(trained)
    assert "RoPE is off" not in panel.rope_hint.text() and "SmolLM2" in panel.rope_hint.text()
    assert "toy engine" in panel.pe_caption.text() and "not sinusoidal" not in panel.pe_caption.text()
