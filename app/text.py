"""Small text helpers shared by the panels."""
from __future__ import annotations

from figures.text import fill  # noqa: F401 - one definition, the figures use it too


def escape(text: str) -> str:
    """``text`` (a token, a sentence) for a surface that reads HTML (pyqtgraph titles and axis
    labels, rich-text labels): "<s>" stays "<s>" on screen instead of starting strikethrough."""
    import html

    return html.escape(str(text), quote=False)


def plain_tip(text: str) -> str:
    """A tooltip that shows ``text`` as written: Qt reads a tooltip as rich text when it finds
    something like a tag in it (a token "<s>"), so it is escaped and marked as rich on purpose."""
    return "<p style='white-space:pre-wrap'>" + escape(text) + "</p>"


def shown_piece(text: str) -> str:
    """A token as a label or chip shows it: a newline as ↵ and a tab as ⇥ (a generated newline was an
    empty chip and a blank row label), a piece of spaces only as ␣; other text as it is."""
    text = text.replace("\r\n", "↵").replace("\n", "↵").replace("\r", "↵").replace("\t", "⇥")
    return text if text.strip(" ") else "␣" * len(text)
