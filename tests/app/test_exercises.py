"""Predict-then-reveal exercises: answers from the engine (checked here by float64 loops), input
parsing, the gap, and the dialog's reveal by keyboard and by click."""
from __future__ import annotations

import json
import math

import numpy as np
import pytest

from tests import FIXTURES, ROOT
from app.exercises import EXERCISES, InputError, check, parse_numbers, preset_index, preset_of, solve


def by_key(key):
    (exercise,) = [e for e in EXERCISES if e.key == key]
    return exercise


def softmax64(row):
    top = max(v for v in row if v != -math.inf)
    exps = [0.0 if v == -math.inf else math.exp(v - top) for v in row]
    return [e / sum(exps) for e in exps]


def test_xiaoming_scores_are_the_dot_products_of_the_tutorials_vectors():
    solution = solve(by_key("xiaoming_scores"))
    x = {"小明": [1, 0], "喜欢": [0, 1], "苹果": [1, 1]}  # seed 000's hand calculation, W = I
    expected = [sum(a * b for a, b in zip(x["喜欢"], x[t])) for t in ("小明", "喜欢", "苹果")]
    assert solution.tokens == ("小明", "喜欢", "苹果")
    np.testing.assert_allclose(solution.answer, expected, atol=1e-6)
    assert check(solution, parse_numbers("0, 1, 1")).right
    assert not check(solution, parse_numbers("1 0 1")).right


def test_softmax_of_8_5_7_is_not_the_tutorials_0_7_0_1_0_2():
    solution = solve(by_key("softmax_857"))
    np.testing.assert_allclose(solution.answer, softmax64([8, 5, 7]), atol=1e-6)
    verdict = check(solution, parse_numbers("0.7, 0.1, 0.2"))  # the tutorial's figures
    assert not verdict.right
    np.testing.assert_allclose(verdict.gaps, np.abs(np.array([0.7, 0.1, 0.2]) - softmax64([8, 5, 7])), atol=1e-6)
    assert check(solution, parse_numbers("70.5% 3.5% 25.9%")).right
    assert any("2.23" in line or "Σ" in line for line in solution.worked)


def test_sqrt_dk_masked_row_head_output_and_which_word():
    scaled = solve(by_key("sqrt_dk"))
    np.testing.assert_allclose(scaled.answer, [3 / 2, 0, 3 / 2], atol=1e-6)  # scores 3, 0, 3 ÷ √4
    masked = solve(by_key("masked_row"))
    assert masked.tokens == ("我", "爱", "北", "京") and masked.answer[3] == 0.0
    result = __import__("engine").compute(masked.config)
    np.testing.assert_allclose(masked.answer, softmax64([float(v) for v in result.scaled[0, 2]]), atol=1e-6)
    assert check(masked, parse_numbers("0.23 0.74 0.03 0")).right
    output = solve(by_key("head_output"))
    w = softmax64([0, 1, 1])
    expected = [w[0] * 1 + w[1] * 0 + w[2] * 1, w[0] * 0 + w[1] * 1 + w[2] * 1]
    np.testing.assert_allclose(output.answer, expected, atol=1e-6)
    which = solve(by_key("which_word"))
    assert which.best == (0, 2)  # 小明 and 苹果 tie at 0.45
    assert check(which, 0).right and check(which, 2).right and not check(which, 1).right


def test_input_parsing_and_wrong_counts():
    np.testing.assert_array_equal(parse_numbers("[0.5，0.25、 −∞]"), [0.5, 0.25, -math.inf])
    with pytest.raises(InputError):
        parse_numbers("0.5 abc")
    with pytest.raises(InputError):
        check(solve(by_key("softmax_857")), parse_numbers("0.5 0.5"))


def test_every_exercise_names_one_preset():
    for exercise in EXERCISES:
        assert exercise.focus in solve(exercise).tokens
        assert preset_index(exercise) >= 0


@pytest.mark.slow
def test_the_dialog_reveals_by_keyboard_and_by_click(window, qtbot):
    from PySide6.QtCore import Qt

    dialog = window.navigation.show_exercises()
    qtbot.waitUntil(lambda: dialog.solution is not None, timeout=10000)
    assert dialog.exercise.key == "xiaoming_scores" and not dialog.worked.isVisible()
    qtbot.keyClicks(dialog.answer, "0 1 1")
    qtbot.keyClick(dialog.answer, Qt.Key.Key_Return)
    assert dialog.verdict.right and dialog.worked.isVisible() and "Right" in dialog.feedback.text()
    qtbot.keyClick(dialog, Qt.Key.Key_PageDown)
    qtbot.waitUntil(lambda: dialog.solution is not None and dialog.exercise.key == "softmax_857", timeout=10000)
    qtbot.keyClicks(dialog.answer, "0.7, 0.1, 0.2")
    qtbot.keyClick(dialog.answer, Qt.Key.Key_Return)
    assert not dialog.verdict.right and "0.065" in dialog.feedback.text()
    dialog.set_exercise(len(EXERCISES) - 1)
    qtbot.waitUntil(lambda: dialog.solution is not None, timeout=10000)
    qtbot.mouseClick(dialog.cell_group.button(1), Qt.MouseButton.LeftButton)
    dialog.reveal_button.click()
    assert not dialog.verdict.right
    dialog.open_button.click()  # the window opens the preset with the worked arithmetic in front
    qtbot.waitUntil(lambda: window.controller.config.d_model == 4 and window.controller.is_idle(), timeout=10000)
    dialog.close()


# ----------------------------------------------------------------------------- lesson paths and the session
def test_each_lesson_walks_its_own_tutorials_presets():
    from app.lessons import TUTORIALS, lesson_steps
    from app.presets import TOY

    assert TUTORIALS == ("000", "001", "004")
    seen = []
    for tutorial in TUTORIALS:
        steps = lesson_steps(tutorial)
        assert len(steps) == len(set(steps)) >= 3
        assert all(TOY[i].source.startswith(f"seed {tutorial}") for i in steps), tutorial
        seen += steps
    assert sorted(seen) == list(range(len(TOY)))  # every toy preset is on one path


def test_the_session_keeps_the_lesson_and_old_sessions_still_open(tmp_path):

    from app.session import SessionError, load_session, save_session, session_dict
    from engine import AttentionConfig

    path = save_session(tmp_path / "s.json", AttentionConfig(), {"head": 0}, lesson={"tutorial": "004", "step": 3})
    assert load_session(path)[1]["lesson"] == {"tutorial": "004", "step": 3}
    old = FIXTURES / "session_before_view_state.json"
    assert "lesson" not in load_session(old)[1]
    for bad in ({"tutorial": "004", "step": 99}, {"tutorial": "999", "step": 0}, {"tutorial": "000", "step": True}, []):
        text = json.dumps({**session_dict(AttentionConfig()), "lesson": bad})
        (tmp_path / "bad.json").write_text(text, encoding="utf-8")
        with pytest.raises(SessionError, match="lesson"):
            load_session(tmp_path / "bad.json")


@pytest.mark.slow
def test_the_lesson_path_opens_its_steps_and_comes_back_with_the_session(window, qtbot, tmp_path):
    from PySide6.QtCore import Qt

    from app.lessons import lesson_steps
    from app.presets import TOY

    dialog = window.navigation.show_lesson_path()
    assert dialog.position() == {"tutorial": "000", "step": 0}
    qtbot.mouseClick(dialog.next_button, Qt.MouseButton.LeftButton)
    qtbot.mouseClick(dialog.next_button, Qt.MouseButton.LeftButton)
    step = lesson_steps("000")[2]
    qtbot.waitUntil(lambda: window.controller.config == TOY[step].config() and window.controller.is_idle(),
                    timeout=10000)
    assert window.lesson == {"tutorial": "000", "step": 2} and TOY[step].caption == dialog.text.text()
    path = tmp_path / "lesson.json"
    assert window.save_session(str(path))
    assert json.loads(path.read_text(encoding="utf-8"))["lesson"] == {"tutorial": "000", "step": 2}
    dialog.set_position("001", 1)
    assert window.open_session(str(path))
    assert dialog.position() == {"tutorial": "000", "step": 2}
    dialog.close()


def test_k_last_element_of_seed_001_is_written_out():
    from app.presets import TOY

    solution = solve(by_key("k_last"))
    config = solution.config
    (cake,) = [p for p in TOY if "scores 1.3 / 0.4 / 1.6" in p.title]
    x = [float(v) for v in cake.settings["embeddings"]["it"]]
    w_k = [float(row[-1]) for row in config.projections["w_k"]]
    expected = sum(a * b for a, b in zip(x, w_k))
    assert solution.answer[0] == pytest.approx(expected, abs=1e-6) and f"{expected:.2f}" == "0.76"
    assert "0.6·0.2 + 0.1·0 + 0.5·0.3 + 0.7·0.7 = 0.76" in solution.worked[2]
    assert check(solution, parse_numbers("0.76")).right

    doc = (ROOT / "docs" / "SEEDS.md").read_text(encoding="utf-8")
    (row,) = [line for line in doc.splitlines() if line.startswith("| 1.19 |")]
    assert "0.6·0.2 + 0.1·0 + 0.5·0.3 + 0.7·0.7 = 0.76" in row and "K's last element" in row
