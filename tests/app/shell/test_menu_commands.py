"""Every navigation command of the menus, triggered as a user triggers it (the QAction), and its
effect read back: a command declared with the right keys and label but wired to the wrong method
(a "previous head" that goes to the next one, a stage row that opens another stage) fails here.

Undo and redo are driven through their actions too, with the sequence the history must get right:
undo, then a new change, then redo (the new change clears what could be redone).
"""
from __future__ import annotations

import pytest

from engine import STAGES
from tests.shared_helpers import settle

pytestmark = pytest.mark.slow


def trigger(window, qtbot, command_id: str) -> None:
    """Trigger the menu action of ``command_id`` and wait until the window is idle again."""
    action = window.command_actions[command_id]
    assert action.isEnabled(), f"{command_id} is disabled"
    action.trigger()
    settle(window, qtbot)


def test_head_token_and_stage_commands_move_the_selection_their_own_way(window, qtbot):
    controller = window.controller
    controller.update_config(text="the cat sat on the mat", heads=4)
    settle(window, qtbot)
    controller.select(head=1, focus=2, stage="weights")
    settle(window, qtbot)

    trigger(window, qtbot, "edit.next_head")
    assert controller.head == 2
    trigger(window, qtbot, "edit.previous_head")
    trigger(window, qtbot, "edit.previous_head")
    assert controller.head == 0

    trigger(window, qtbot, "edit.next_token")
    assert controller.focus == 3
    trigger(window, qtbot, "edit.previous_token")
    trigger(window, qtbot, "edit.previous_token")
    assert controller.focus == 1

    for stage in reversed(STAGES):  # reversed: a row wired to its neighbour's stage shows up
        trigger(window, qtbot, f"edit.stage.{stage}")
        assert controller.stage == stage, f"the row for {stage} opened {controller.stage}"


def test_player_commands_step_the_player_forward_and_back(window, qtbot):
    player = window.navigation.show_player()
    settle(window, qtbot)
    start = player.stage_index
    trigger(window, qtbot, "player.next")
    trigger(window, qtbot, "player.next")
    assert player.stage_index == start + 2
    trigger(window, qtbot, "player.previous")
    assert player.stage_index == start + 1


def test_undo_then_a_new_change_leaves_nothing_to_redo(window, qtbot):
    controller = window.controller
    actions = window.command_actions
    first = controller.config
    controller.update_config(heads=2)
    settle(window, qtbot)
    controller.update_config(heads=4)
    settle(window, qtbot)

    trigger(window, qtbot, "edit.undo")
    assert controller.config.heads == 2
    assert actions["edit.redo"].isEnabled()
    trigger(window, qtbot, "edit.redo")
    assert controller.config.heads == 4
    trigger(window, qtbot, "edit.undo")
    assert controller.config.heads == 2

    controller.update_config(d_model=32)  # a new change after the undo
    settle(window, qtbot)
    assert not actions["edit.redo"].isEnabled(), "redo would bring back heads=4 over the new change"
    redone = controller.config
    controller.redo()  # not even the method redoes anything now
    settle(window, qtbot)
    assert controller.config == redone

    trigger(window, qtbot, "edit.undo")
    assert (controller.config.heads, controller.config.d_model) == (2, first.d_model)
    trigger(window, qtbot, "edit.undo")
    assert controller.config == first
    assert not actions["edit.undo"].isEnabled()


def test_reset_layout_brings_back_a_closed_and_a_floating_panel(window, qtbot):
    closed, floating = window.docks["inspector"], window.docks["diffs"]
    closed.close()
    floating.setFloating(True)
    qtbot.wait(20)
    assert not closed.toggleViewAction().isChecked() and floating.isFloating()
    trigger(window, qtbot, "view.reset_layout")
    assert not floating.isFloating()
    assert closed.toggleViewAction().isChecked(), "the closed panel stayed closed"
