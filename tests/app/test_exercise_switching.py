"""Exercises switched faster than their answers arrive: the dialog shows the exercise that is
chosen, with its own answer, never the previous exercise's answer arriving late."""
from __future__ import annotations

import threading

import pytest

import app.lesson_dialog as lesson_dialog
from app.exercises import EXERCISES, solve
from app.worker import Worker


@pytest.fixture
def dialog(qtbot):
    worker = Worker()
    dialog = lesson_dialog.ExerciseDialog(worker)
    qtbot.addWidget(dialog)
    yield dialog
    worker.shutdown()


def test_a_late_answer_of_the_previous_exercise_is_never_shown(dialog, qtbot, monkeypatch):
    release = {EXERCISES[0]: threading.Event(), EXERCISES[2]: threading.Event()}
    started, finished = [], []

    def slow_for_the_first(exercise):
        started.append(exercise)
        if exercise in release:  # each answer waits until the test lets it go
            release[exercise].wait(60)  # held until released: a short bound let exercise 2's answer in under load
        finished.append(exercise)
        return solve(exercise)

    monkeypatch.setattr(lesson_dialog, "solve", slow_for_the_first)
    try:
        _switch_while_the_first_is_held(dialog, qtbot, release, started, finished)
    finally:
        for event in release.values():  # a failed check leaves no answer waiting in the worker
            event.set()


def _switch_while_the_first_is_held(dialog, qtbot, release, started, finished) -> None:
    qtbot.waitUntil(lambda: dialog.solution is not None, timeout=30000)  # the one asked when built
    dialog.solution = None
    dialog.set_exercise(0)
    qtbot.waitUntil(lambda: EXERCISES[0] in started, timeout=30000)  # running, not just queued
    dialog.set_exercise(1)
    dialog.set_exercise(0)
    dialog.set_exercise(2)
    release[EXERCISES[0]].set()  # exercise 0's answer arrives while exercise 2 is chosen
    qtbot.waitUntil(lambda: EXERCISES[0] in finished, timeout=30000)
    qtbot.wait(100)  # its answer has crossed to the GUI thread
    assert dialog.solution is None and not dialog.reveal_button.isEnabled(), "the previous exercise's answer is shown"
    release[EXERCISES[2]].set()
    qtbot.waitUntil(lambda: dialog.solution is not None, timeout=30000)
    assert dialog.exercise is EXERCISES[2]
    assert dialog.solution.exercise is EXERCISES[2]
    expected = solve(EXERCISES[2])
    assert list(dialog.solution.answer) == pytest.approx(list(expected.answer), abs=0)
    assert dialog.reveal_button.isEnabled()


def test_every_switch_withdraws_the_answer_until_the_chosen_exercises_arrives(dialog, qtbot, monkeypatch):
    """Each switch, forward through every exercise, from an exercise answered and revealed: while
    the next answer is computed nothing of the exercise just left is on screen or revealable (no
    answer held, Reveal off, the verdict, the typed numbers and the worked arithmetic gone); then
    exactly the chosen exercise's answer arrives."""
    qtbot.waitUntil(lambda: dialog.solution is not None, timeout=30000)  # the first, answered at once
    gate = threading.Event()

    def held(exercise):
        gate.wait(60)  # held until the test lets it go (the finally below, whatever fails)
        return solve(exercise)

    monkeypatch.setattr(lesson_dialog, "solve", held)
    try:
        for index in range(1, len(EXERCISES)):
            gate.clear()
            left = dialog.solution
            assert left is not None and left.exercise is EXERCISES[index - 1]
            if left.exercise.kind == "cell":
                dialog.choose(0)
            else:
                dialog.answer.setText(", ".join(str(float(v)) for v in left.answer))
            dialog.reveal()
            assert dialog.feedback.text() and dialog.worked.isVisibleTo(dialog)  # shown before the switch
            dialog.set_exercise(index)
            assert dialog.solution is None, f"exercise {index - 1}'s answer is kept while {index}'s is computed"
            assert not dialog.reveal_button.isEnabled()
            assert dialog.feedback.text() == "", f"exercise {index - 1}'s verdict is still shown"
            assert dialog.answer.text() == "" and dialog.worked.toPlainText() == ""
            assert not dialog.worked.isVisibleTo(dialog)
            dialog.answer.setText("0.5, 0.25, 0.25")
            dialog.reveal()  # Enter in the answer box before the answer is there: nothing to reveal
            assert dialog.feedback.text() == "" and dialog.verdict is None and not dialog.worked.isVisibleTo(dialog)
            dialog.answer.clear()
            gate.set()
            qtbot.waitUntil(lambda: dialog.solution is not None, timeout=30000)
            assert dialog.solution.exercise is EXERCISES[index] and dialog.exercise is EXERCISES[index]
            assert list(dialog.solution.answer) == pytest.approx(list(solve(EXERCISES[index]).answer), abs=0)
            assert dialog.reveal_button.isEnabled()
    finally:
        gate.set()  # a failed check leaves no answer waiting in the worker
