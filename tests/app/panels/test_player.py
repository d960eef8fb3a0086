"""Step-through player: every stage shows the engine's own arrays, follows the state, plays, obeys keys."""
from __future__ import annotations

import numpy as np
import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QHBoxLayout, QLineEdit, QWidget

from engine import AttentionConfig, compute

PER_HEAD = {"q", "k", "v", "scores", "scaled", "weights", "head_outputs"}
# What each stage must show (sinusoidal positions): names of engine arrays, left to right.
EXPECTED_NAMES = {
    "tokens": [],
    "embeddings": ["embeddings", "positional", "x"],
    "qkv": ["q", "k", "v"],
    "scores": ["scores"],
    "scaled": ["scaled"],
    "weights": ["weights"],
    "weighted_sum": ["weights", "v", "head_outputs"],
    "concat": ["concat", "w_o", "output"],
    "new_vectors": ["x", "output", "diff"],
}
# W_O's rows are dimensions; in the weighted sum every row of V is mixed in, none is "the" focus's
NOT_OUTLINED = {("concat", "w_o"), ("weighted_sum", "v")}


def engine_array(result, name: str, head: int) -> np.ndarray:
    array = getattr(result, name)
    return array[head] if name in PER_HEAD else array


def outlined_row(view) -> int | None:
    """The row the heatmap outlines, read from the outline rectangle itself."""
    outline = view.heat.highlight
    if not outline.isVisible():
        return None
    return int(round(outline.rect().y() + 0.5))


@pytest.fixture
def player(qtbot):
    from app.controller import Controller
    from app.panels.player_panel import PlayerPanel

    controller = Controller()
    panel = PlayerPanel(controller)
    qtbot.addWidget(panel)
    panel.resize(1000, 500)
    panel.show()
    yield controller, panel
    panel._timer.stop()
    controller.shutdown()


def show(qtbot, controller, panel, config) -> None:
    controller.set_config(config, immediate=True)
    qtbot.waitUntil(lambda: controller.is_idle() and controller.snapshot is not None
                    and panel.shown_result() is controller.snapshot.result, timeout=10000)


def test_every_stage_shows_the_engine_arrays_with_the_focus_row_outlined(qtbot, player):
    controller, panel = player
    config = AttentionConfig(text="我 爱 北 京", tokenizer="whitespace", d_model=12, heads=3, mask="causal")
    show(qtbot, controller, panel, config)
    controller.select(head=1, focus=2)
    expected = compute(config)
    assert list(panel.stage_keys) == list(EXPECTED_NAMES)
    for index, key in enumerate(panel.stage_keys):
        panel.set_stage(index)
        assert panel.stage_index == index and panel.indicator.text() == f"{index + 1} / {len(panel.stage_keys)}"
        shown = panel.current_matrices()
        assert list(shown) == EXPECTED_NAMES[key], key
        for position, (name, matrix) in enumerate(shown.items()):
            view = panel.views[position]
            assert matrix is view.matrix()
            assert np.array_equal(matrix, engine_array(expected, name, 1)), (key, name)
            row = outlined_row(view)
            if (key, name) in NOT_OUTLINED:
                assert row is None, (key, name)
            else:
                assert row == controller.focus == 2, (key, name)
            assert panel.highlighted_rows()[name] == row
        if key == "tokens":
            assert panel.pages.currentIndex() == 0
            text = panel.token_strip.text()
            assert all(f"[{t}]" in text for t in ("我", "爱", "北", "京"))
        lines = panel.caption().split("\n")
        assert 1 <= len(lines) <= 2 and all(line.strip() for line in lines), key
        assert panel.caption_what.text() and panel.caption_why.text()
    # the scaled stage masks the future: −∞ cells really reach the heatmap
    panel.set_stage(panel.stage_keys.index("scaled"))
    assert np.isneginf(panel.current_matrices()["scaled"][0, 3])


def test_captions_carry_the_engine_numbers(qtbot, player):
    controller, panel = player
    config = AttentionConfig(text="小明 喜欢 苹果", tokenizer="whitespace", d_model=64, heads=4, mask="causal")
    show(qtbot, controller, panel, config)
    controller.select(focus=1)
    captions = {}
    for index, key in enumerate(panel.stage_keys):
        panel.set_stage(index)
        captions[key] = panel.caption()
        assert captions[key].count("\n") <= 1
    result = compute(config)
    assert "3 tokens" in captions["tokens"] and "“喜欢”" in captions["tokens"]
    assert "Q: what am I looking for? K: what do I contain? V: what I actually carry." in captions["qkv"]
    assert "3 × 16" in captions["qkv"] and "columns 0–15" in captions["qkv"]
    assert "√16 = ÷ 4" in captions["scaled"] and "−∞" in captions["scaled"]
    assert "saturate the softmax" in captions["scaled"]
    top = int(np.argmax(result.weights[0, 1]))
    assert f"“{result.tokens[top].text}” ({result.weights[0, 1, top]:.3f})" in captions["weights"]
    assert f"{float(result.cosine[1]):.3f}" in captions["new_vectors"]
    assert "4 heads" in captions["concat"] and "64 × 64" in captions["concat"]


def test_positions_without_addition_show_x_alone(qtbot, player):
    controller, panel = player
    config = AttentionConfig(text="the cat sat", d_model=8, heads=2, positional="rope")
    show(qtbot, controller, panel, config)
    panel.set_stage(panel.stage_keys.index("embeddings"))
    shown = panel.current_matrices()
    assert list(shown) == ["x"] and np.array_equal(shown["x"], compute(config).x)
    assert "RoPE" in panel.caption()
    assert sum(not view.isHidden() for view in panel.views) == 1


def test_changing_sentence_head_and_focus_updates_the_stage(qtbot, player):
    controller, panel = player
    config = AttentionConfig(text="小明 喜欢 苹果", tokenizer="whitespace", d_model=8, heads=2)
    show(qtbot, controller, panel, config)
    panel.set_stage(panel.stage_keys.index("weights"))
    assert np.array_equal(panel.current_matrices()["weights"], compute(config).weights[0])
    new = config.replace(text="苹果 发布 了 新 手机")
    show(qtbot, controller, panel, new)
    assert panel.stage_key == "weights"
    assert np.array_equal(panel.current_matrices()["weights"], compute(new).weights[0])
    controller.select(head=1, focus=4)
    assert np.array_equal(panel.current_matrices()["weights"], compute(new).weights[1])
    assert outlined_row(panel.views[0]) == 4
    assert "“手机”" in panel.caption()
    panel.set_stage(panel.stage_keys.index("qkv"))
    for name, matrix in panel.current_matrices().items():
        assert np.array_equal(matrix, getattr(compute(new), name)[1])


def test_play_advances_and_stops_at_the_end(qtbot, player):
    controller, panel = player
    show(qtbot, controller, panel, AttentionConfig(text="a b c", d_model=8, heads=2))
    panel.speed.setValue(0.02)
    seen = []
    panel.stageChanged.connect(seen.append)
    panel.toggle_play()
    assert panel.is_playing() and panel.play_action.text() == "Pause"
    last = len(panel.stage_keys) - 1
    # returns when done; 5 s was missed under load
    qtbot.waitUntil(lambda: panel.stage_index == last and not panel.is_playing(), timeout=60000)
    assert seen == list(range(1, last + 1))
    assert panel.play_action.text() == "Play" and not panel.next_action.isEnabled()
    panel.toggle_play()  # from the last stage: starts over
    assert panel.stage_index == 0 and panel.is_playing()
    panel.toggle_play()
    assert not panel.is_playing()


def test_keyboard_shortcuts_act_only_inside_the_panel(qtbot):
    from app.controller import Controller
    from app.panels.player_panel import PlayerPanel

    controller = Controller()
    host = QWidget()
    qtbot.addWidget(host)
    row = QHBoxLayout(host)
    editor = QLineEdit("小明 喜欢 苹果")
    panel = PlayerPanel(controller)
    row.addWidget(editor)
    row.addWidget(panel)
    host.resize(1000, 400)
    host.show()
    host.activateWindow()
    qtbot.waitExposed(host)
    try:
        show(qtbot, controller, panel, AttentionConfig(text="a b c", d_model=8, heads=2))
        panel.setFocus()
        qtbot.waitUntil(lambda: panel.hasFocus(), timeout=30_000)
        qtbot.keyClick(panel, Qt.Key.Key_Right)
        assert panel.stage_index == 1
        qtbot.keyClick(panel, Qt.Key.Key_PageDown)
        assert panel.stage_index == 2
        qtbot.keyClick(panel, Qt.Key.Key_Left)
        assert panel.stage_index == 1
        qtbot.keyClick(panel, Qt.Key.Key_PageUp)
        assert panel.stage_index == 0
        qtbot.keyClick(panel, Qt.Key.Key_Space)
        assert panel.is_playing()
        qtbot.keyClick(panel, Qt.Key.Key_Space)
        assert not panel.is_playing()
        editor.setFocus()
        qtbot.waitUntil(lambda: editor.hasFocus(), timeout=30_000)
        editor.setCursorPosition(0)
        qtbot.keyClick(editor, Qt.Key.Key_Right)
        qtbot.keyClick(editor, Qt.Key.Key_Space)
        assert panel.stage_index == 0 and not panel.is_playing(), "keys typed in the editor must stay there"
        assert editor.cursorPosition() == 2
        assert {panel.previous_action, panel.play_action, panel.next_action} <= set(panel.actions())
        assert all(a.shortcutContext() == Qt.ShortcutContext.WidgetWithChildrenShortcut for a in panel.stage_actions())
    finally:
        panel._timer.stop()
        controller.shutdown()


def test_captions_are_honest_about_ties_zeros_counting_and_random_heads(qtbot, player):
    """The hand calculation: 喜欢 gives 0.422 to both 喜欢 and 苹果 — both are named; weights are
    non-negative (masked exactly 0); columns also counted from 1 (the tutorial's 65–128); random
    toy heads are not called specialists."""
    controller, panel = player
    table = {"小明": [1, 0], "喜欢": [0, 1], "苹果": [1, 1]}
    show(qtbot, controller, panel, AttentionConfig(text="小明 喜欢 苹果", tokenizer="whitespace", d_model=2, heads=1,
                                                   positional="none", scale=False, weights="identity",
                                                   embeddings=table))
    controller.select(focus=1)
    panel.set_stage(panel.stage_keys.index("weights"))
    caption = panel.caption()
    assert "“喜欢” / “苹果”" in caption and "0.422" in caption and "most weight to" not in caption
    assert "non-negative" in caption and "positive and" not in caption
    show(qtbot, controller, panel, AttentionConfig(text="我 喜欢 深度 学习", tokenizer="whitespace", d_model=512, heads=8))
    controller.select(head=1)
    panel.set_stage(panel.stage_keys.index("qkv"))
    assert "columns 64–127" in panel.caption() and "65–128 counted from 1" in panel.caption()
    panel.set_stage(panel.stage_keys.index("concat"))
    assert "not specialists" in panel.caption() and "looks for its own kind" not in panel.caption()


def test_formula_view_links_its_symbols_and_writes_out_the_engines_numbers(qtbot, player):
    from app.panels.formula_view import projection_terms, rope_demo

    controller, panel = player
    config = AttentionConfig(text="我 喜欢 深度 学习", tokenizer="whitespace", d_model=8, heads=2, positional="rope")
    show(qtbot, controller, panel, config)
    controller.select(focus=1, head=1)
    panel.formula_button.setChecked(True)
    assert panel.formula.isVisibleTo(panel)
    result = controller.snapshot.result
    column, x, w, total, engine_value = projection_terms(result, 1, 1)
    assert column == 4 and abs(total - engine_value) < 1e-4  # q_i[c] = x_i · W_Q[:, c], the engine's value
    same, shifted, other = rope_demo(result, 1, 2, 1)
    assert abs(same - float(result.scores[1, 1, 2])) < 1e-4  # the heatmap's score, rotated by the engine
    assert abs(same - shifted) < 1e-9 * max(1.0, abs(same)) + 1e-6 and abs(same - other) > 1e-6
    details = panel.formula.details.text()
    assert f"{total:.4f}" in details and f"{same:.4f}" in details and "Cross" in details
    panel.formula.formula.linkActivated.emit("stage:scaled")  # a click on "/ √d_k"
    assert panel.stage_key == "scaled" and controller.stage == "scaled"
    panel.formula.formula.linkActivated.emit("stage:qkv")
    assert panel.stage_key == "qkv"
