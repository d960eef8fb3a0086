"""One view state: sessions (old files included), undo/redo and start-up restore go through it."""

import pytest

from tests import FIXTURES
from app.view_state import ViewState
from engine import AttentionConfig, EngineError

pytestmark = pytest.mark.slow  # a whole window a test

FIXTURE = FIXTURES / "session_before_view_state.json"  # written by the code before


def test_a_session_written_before_the_view_state_still_opens(window):
    assert window.open_session(str(FIXTURE))
    assert window.wait_until_idle(30)
    c = window.controller
    assert c.config.text == "小明 喜欢 苹果 because it rains" and c.config.seed == 2**32 - 1
    assert (c.config.d_model, c.config.heads, c.config.positional, c.config.mask) == (12, 3, "rope", "causal")
    assert c.config.temperature == 1.23456 and c.config.embeddings["小明"] == (0.5,) * 12
    assert (c.head, c.focus, c.stage) == (2, 3, "scaled")
    assert c.model == "toy" and c.sentence_b == ""


def test_a_saved_session_brings_back_the_whole_view(window, tmp_path):
    c = window.controller
    c.update_config(heads=2)
    assert window.wait_until_idle(30)
    c.select(head=1, focus=2, stage="scores")
    window.panels["compare"].build().text_b.setText("苹果发布了新手机")
    saved = c.view_state()
    path = tmp_path / "s.json"
    assert window.save_session(str(path))
    c.apply_view_state(ViewState(AttentionConfig()))
    assert window.wait_until_idle(30) and c.view_state() != saved
    assert window.panels["compare"].panel.text_b.text() == ""
    assert window.open_session(str(path))
    assert window.wait_until_idle(30)
    assert c.view_state() == saved
    assert window.panels["compare"].panel.text_b.text() == "苹果发布了新手机"


def test_undo_and_redo_live_in_the_controller(window):
    c = window.controller
    assert not window.undo_action.isEnabled() and not window.redo_action.isEnabled()
    c.update_config(heads=2)
    c.update_config(d_model=32)
    assert window.undo_action.isEnabled() and not window.redo_action.isEnabled()
    c.undo()
    assert (c.config.d_model, c.config.heads) == (64, 2) and window.redo_action.isEnabled()
    c.undo()
    assert (c.config.d_model, c.config.heads) == (64, 4) and not window.undo_action.isEnabled()
    c.redo()
    c.redo()
    assert (c.config.d_model, c.config.heads) == (32, 2) and not window.redo_action.isEnabled()
    c.undo()
    c.update_config(seed=7)  # a new change forgets what could be redone
    assert not window.redo_action.isEnabled() and c.config.d_model == 64 and c.config.seed == 7
    assert window.wait_until_idle(30)


def test_an_invalid_view_changes_nothing(window):
    c = window.controller
    before = c.view_state()
    for state in (ViewState(AttentionConfig(), stage="softmax"), ViewState(AttentionConfig(), head=-1),
                  ViewState(AttentionConfig(), model="gpt-7")):
        with pytest.raises(EngineError):
            c.apply_view_state(state)
        assert c.view_state() == before


def test_the_view_is_restored_at_start_up(qtbot):
    from app.window import MainWindow

    first = MainWindow()
    qtbot.addWidget(first)
    assert first.wait_until_idle(30)
    first.controller.update_config(heads=2)
    assert first.wait_until_idle(30)
    first.controller.select(head=1, focus=3, stage="scaled")
    first.controller.sentence_b = "B"
    state = first.controller.view_state()
    first.close()
    second = MainWindow()
    qtbot.addWidget(second)
    try:
        assert second.wait_until_idle(30)
        assert second.controller.view_state() == state
    finally:
        second.close()
