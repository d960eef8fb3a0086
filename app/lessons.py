"""Lesson paths: each tutorial's presets in the tutorial's order (no Qt; the dialog is app/lesson_dialog.py).

A step is a toy preset of app/presets.py (found by a fragment of its English title); its caption is
the step's short text, already translated with the presets. Where a student is, {"tutorial": "000",
"step": 2}, is kept in the session file under the top-level key ``lesson`` (app/session.py):
coordinate-free, and absent from older sessions, which still open.
"""
from __future__ import annotations


def QT_TRANSLATE_NOOP(context: str, text: str) -> str:  # noqa: N802 - the marker lupdate looks for
    return text


# (tutorial, title, the title fragments of its presets in the tutorial's order)
LESSONS: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    ("000", QT_TRANSLATE_NOOP("Lessons", "“Self-Attention 本质” (seed 000)"),
     ("苹果很好吃", "苹果发布了新手机", "4-d embeddings", "Scores 8 / 5 / 7", "我 爱 北 京 — causal", "Frames 5–7",
      "the hand calculation")),
    ("001", QT_TRANSLATE_NOOP("Lessons", "“缩放点积注意力的四个阶段” (seed 001)"),
     ("random toy weights", "scores 1.3 / 0.4 / 1.6", "8 heads of d_v = 4")),
    ("004", QT_TRANSLATE_NOOP("Lessons", "“自注意力机制 / Multi-Head” (seed 004)"),
     ("小明把苹果给了小红", "three tokens", "(jieba)", "The team meeting", "512 dimensions", "b₁ =")),
)
TUTORIALS = tuple(tutorial for tutorial, _title, _steps in LESSONS)


def lesson_steps(tutorial: str) -> list[int]:
    """Indices into app.presets.PRESETS (the Presets menu) of ``tutorial``'s steps, in order."""
    from .presets import TOY

    for name, _title, fragments in LESSONS:
        if name == tutorial:
            indices = []
            for fragment in fragments:
                found = [i for i, p in enumerate(TOY) if fragment in p.title]
                if len(found) != 1:  # pragma: no cover - guarded by the tests
                    raise LookupError(f"lesson {tutorial}: {fragment!r} matches {len(found)} presets")
                indices.append(found[0])
            return indices
    raise KeyError(tutorial)


def valid_lesson(value) -> dict | None:
    """The session's ``lesson`` value if usable ({"tutorial", "step"} in range), else None."""
    if not isinstance(value, dict) or value.get("tutorial") not in TUTORIALS:
        return None
    step = value.get("step")
    if type(step) is not int or not 0 <= step < len(lesson_steps(value["tutorial"])):
        return None
    return {"tutorial": value["tutorial"], "step": step}
