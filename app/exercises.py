"""Predict-then-reveal exercises on the tutorials' calculations (no Qt: the dialog is app/lesson_dialog.py).

Each exercise names a toy preset (app/presets.py), a token and what to predict: a row of numbers
(typed) or the key a head will look at most (clicked). :func:`solve` computes the answer with the
engine from the preset's own config — no answer is typed into this file — and writes the worked
arithmetic from the same arrays. :func:`check` parses the student's input and measures the gap.
Texts are English templates marked for translation (context "Exercises"); the dialog translates them.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass

import numpy as np

from engine import compute


def QT_TRANSLATE_NOOP(context: str, text: str) -> str:  # noqa: N802 - the marker lupdate looks for
    return text


@dataclass(frozen=True)
class Exercise:
    key: str
    preset: str  # a fragment of the preset's (English) title, unique among the toy presets
    focus: str  # the query token
    kind: str  # "row": a row of numbers is typed · "cell": the key with the largest weight is clicked
    array: str  # the engine array the answer is read from (scores, scaled, weights, head_outputs)
    question: str  # template: %1 = the focus token, %2 = the tokens (keys or dimensions) in order
    tolerance: float  # |typed − answer| up to this counts as right (the tutorials print 2 decimals)
    stage: str  # the stage the window shows when the exercise is opened in it


EXERCISES: tuple[Exercise, ...] = (
    Exercise("xiaoming_scores", "the hand calculation", "喜欢", "row", "scores",
             QT_TRANSLATE_NOOP("Exercises", "小明 = [1, 0], 喜欢 = [0, 1], 苹果 = [1, 1] and W_Q = W_K = I. "
                               "What are the scores of “%1” (its q · every k) against %2?"), 0.005, "scores"),
    Exercise("softmax_857", "Scores 8 / 5 / 7", "喜欢", "row", "weights",
             QT_TRANSLATE_NOOP("Exercises", "“%1” scores 8, 5, 7 against %2 (no ÷√d_k). What does softmax make "
                               "of them? Type three weights."), 0.01, "weights"),
    Exercise("sqrt_dk", "Frames 5–7", "喜欢", "row", "scaled",
             QT_TRANSLATE_NOOP("Exercises", "“%1” has the scores 3, 0, 3 against %2 and d_k = 4. What is its row "
                               "after ÷√d_k?"), 0.005, "scaled"),
    Exercise("masked_row", "我 爱 北 京 — causal", "北", "row", "weights",
             QT_TRANSLATE_NOOP("Exercises", "Causal mask, head 0. Which weights does “%1” give to %2? (Guess the "
                               "masked ones exactly; the others to 0.05.)"), 0.05, "weights"),
    Exercise("head_output", "the hand calculation", "喜欢", "row", "head_outputs",
             QT_TRANSLATE_NOOP("Exercises", "With the weights of the hand calculation, what is the new “%1” "
                               "(weights · V, V = X)? Type its %2 numbers."), 0.01, "weights"),
    Exercise("k_last", "scores 1.3 / 0.4 / 1.6", "it", "row", "k_last",
             QT_TRANSLATE_NOOP("Exercises", "The cake sentence's custom W_K: what is the last element of K for “%1” "
                               "(its embedding · the last column of W_K)?"), 0.005, "scores"),
    Exercise("which_word", "Frames 5–7", "喜欢", "cell", "weights",
             QT_TRANSLATE_NOOP("Exercises", "Which word will “%1” look at most? Click it (or pick it and press "
                               "Enter). A tie: any of the tied words is right."), 0.0, "weights"),
)


@dataclass(frozen=True)
class Solution:
    """The engine's answer to one exercise."""

    exercise: Exercise
    tokens: tuple[str, ...]  # the sentence's tokens
    focus: int  # the query's position
    labels: tuple[str, ...]  # what each number of the answer is about (keys or dimensions)
    answer: np.ndarray  # (k,) float64: the row to predict; for "cell", the weights row
    best: tuple[int, ...]  # "cell": the keys with the largest weight (ties)
    worked: tuple[str, ...]  # the worked arithmetic, one line each, with the engine's numbers
    config: object  # the AttentionConfig computed


def _number(value: float) -> str:
    if math.isinf(value):
        return "−∞" if value < 0 else "∞"
    text = f"{value:.3f}".rstrip("0").rstrip(".")  # 0.760 → 0.76, 1.000 → 1
    return text.replace("-", "−") if text not in ("-0", "−0") else "0"


def vector_label(values) -> str:
    return "[" + ", ".join(_number(float(v)) for v in values) + "]"


def preset_of(exercise: Exercise):
    from .presets import TOY

    matches = [p for p in TOY if exercise.preset in p.title]
    if len(matches) != 1:  # pragma: no cover - guarded by the tests
        raise LookupError(f"exercise {exercise.key}: preset {exercise.preset!r} matches {len(matches)} presets")
    return matches[0]


def preset_index(exercise: Exercise) -> int:
    """The preset's index in app.presets.PRESETS (what the window's apply_preset takes)."""
    from .presets import TOY

    return list(TOY).index(preset_of(exercise))


def solve(exercise: Exercise) -> Solution:
    """Compute the preset and read the answer (worker job: runs the engine)."""
    config = preset_of(exercise).config()
    result = compute(config)
    tokens = tuple(result.token_texts)
    focus = tokens.index(exercise.focus)
    head = 0
    q, k, v = (np.asarray(a[head], dtype=np.float64) for a in (result.q, result.k, result.v))  # (n, d_k)
    scores = np.asarray(result.scores[head, focus], dtype=np.float64)  # (n,)
    scaled = np.asarray(result.scaled[head, focus], dtype=np.float64)
    weights = np.asarray(result.weights[head, focus], dtype=np.float64)
    lines = [f"q({exercise.focus}) = {vector_label(q[focus])}"]
    for j, token in enumerate(tokens):
        terms = " + ".join(f"{_number(a)}·{_number(b)}" for a, b in zip(q[focus], k[j]))
        lines.append(f"q({exercise.focus}) · k({token}) = {terms} = {_number(scores[j])}")
    if exercise.array in ("scaled", "weights", "head_outputs") or exercise.kind == "cell":
        divisor = (math.sqrt(config.d_k) if config.scale else 1.0) * config.temperature
        if divisor != 1:
            lines.append(f"÷ √d_k = ÷ √{config.d_k} = ÷ {_number(divisor)} → {vector_label(scaled)}")
        if result.mask is not None:
            lines.append(f"mask: the keys after {exercise.focus} → −∞ → {vector_label(scaled)}")
    if exercise.array in ("weights", "head_outputs") or exercise.kind == "cell":
        finite = np.isfinite(scaled)
        top = float(scaled[finite].max())
        exps = np.where(finite, np.exp(np.where(finite, scaled - top, 0.0)), 0.0)
        total = float(exps.sum())
        lines.append("exp(s − max): " + ", ".join(f"{token} {_number(e)}" for token, e in zip(tokens, exps))
                     + f"; Σ = {_number(total)}")
        lines.append("softmax = exp ÷ Σ = " + vector_label(weights))
    if exercise.array == "k_last":  # seed 001's K_it, its last element: x · W_K[:, −1] written out
        x = np.asarray(result.x[focus], dtype=np.float64)
        w_k = np.asarray(result.w_k[:, head * config.d_k + config.d_k - 1], dtype=np.float64)
        last = float(k[focus, -1])
        terms = " + ".join(f"{_number(a)}·{_number(b)}" for a, b in zip(x, w_k))
        lines = [f"x({exercise.focus}) = {vector_label(x)}", f"W_K[:, {config.d_k - 1}] = {vector_label(w_k)}",
                 f"k({exercise.focus})[{config.d_k - 1}] = {terms} = {_number(last)}",
                 f"k({exercise.focus}) = {vector_label(k[focus])}"]
        return Solution(exercise, tokens, focus, ("k",), np.array([last]), (), tuple(lines), config)
    if exercise.array == "head_outputs":
        output = np.asarray(result.head_outputs[head, focus], dtype=np.float64)
        terms = " + ".join(f"{_number(w)}·{vector_label(v[j])}" for j, w in enumerate(weights))
        lines.append(f"new {exercise.focus} = {terms} = {vector_label(output)}")
        answer, labels = output, tuple(f"d{i}" for i in range(output.shape[0]))
    else:
        answer = {"scores": scores, "scaled": scaled, "weights": weights}[exercise.array]
        labels = tokens
    best = tuple(int(j) for j in np.flatnonzero(np.isclose(weights, weights.max(), rtol=0, atol=1e-6)))
    return Solution(exercise, tokens, focus, labels, np.array(answer, dtype=np.float64), best, tuple(lines), config)


# ----------------------------------------------------------------------------- the student's input
NUMBER = re.compile(r"[−-]?\s*(?:∞|inf(?:inity)?|\d+(?:\.\d*)?|\.\d+)%?", re.IGNORECASE)


class InputError(ValueError):
    """The typed answer cannot be read: the message says what to type (a template, %1 = count)."""


def parse_numbers(text: str) -> np.ndarray:
    """'0.7, 0.1, 0.2' · '70% 10% 20%' · '[0 1 1]' · '−∞' → float64 array. Commas (also ，、) or spaces."""
    cleaned = text.replace("，", " ").replace("、", " ").replace(",", " ").replace("[", " ").replace("]", " ")
    values = []
    for piece in cleaned.split():
        match = NUMBER.fullmatch(piece)
        if match is None:
            raise InputError(piece)
        body = piece.replace("−", "-").replace(" ", "").lower()
        percent = body.endswith("%")
        body = body.rstrip("%")
        if body.lstrip("-") in ("∞", "inf", "infinity"):
            value = -math.inf if body.startswith("-") else math.inf
        else:
            value = float(body)
        values.append(value / 100 if percent else value)
    return np.array(values, dtype=np.float64)


@dataclass(frozen=True)
class Verdict:
    right: bool
    gaps: np.ndarray  # (k,) |typed − answer| (0 where both are the same infinity)
    largest_gap: float


def check(solution: Solution, typed) -> Verdict:
    """Compare a typed row (array) or a clicked key (int) with the engine's answer."""
    if solution.exercise.kind == "cell":
        choice = int(typed)
        gap = float(solution.answer.max() - solution.answer[choice])
        return Verdict(choice in solution.best, np.array([gap]), gap)
    typed = np.asarray(typed, dtype=np.float64)
    if typed.shape != solution.answer.shape:
        raise InputError(str(solution.answer.shape[0]))
    same = (typed == solution.answer)  # equal infinities count as no gap
    gaps = np.where(same, 0.0, np.abs(typed - solution.answer))
    gaps = np.where(np.isnan(gaps), math.inf, gaps)
    largest = float(gaps.max()) if gaps.size else 0.0
    return Verdict(largest <= solution.exercise.tolerance, gaps, largest)
