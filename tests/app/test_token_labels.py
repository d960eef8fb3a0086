"""Tokens as the window labels them: a generated newline is a visible ↵ (chip, row label, key list),
and the next-token bars' axis is a probability axis."""
from __future__ import annotations

from collections import namedtuple

import pytest
from PySide6.QtCore import Qt

from app.panels.next_token_panel import bar_axis_end, label_inside
from app.text import shown_piece

Token = namedtuple("Token", "text start end")


@pytest.mark.parametrize("piece, shown", [("\n", "↵"), ("\n\n", "↵↵"), ("\r\n", "↵"), (".\n", ".↵"), ("\t", "⇥"),
                                          (" ", "␣"), ("  ", "␣␣"), (" it", " it"), ("小红", "小红"), ("<s>", "<s>")])
def test_whitespace_pieces_are_visible_and_words_unchanged(piece, shown):
    assert shown_piece(piece) == shown


def test_a_newline_chip_shows_the_arrow_and_its_tooltip_the_piece(qapp):
    from app.panels.tokens_panel import TokensModel

    model = TokensModel()
    model.set_tokens([Token("Hi", 0, 2), Token("\n", 2, 3)])
    assert model.data(model.index(1), Qt.ItemDataRole.DisplayRole) == "↵"
    assert model.data(model.index(0), Qt.ItemDataRole.DisplayRole) == "Hi"


@pytest.mark.parametrize("largest", [0.001, 0.04, 0.3, 0.79, 0.8, 0.96, 1.0])
def test_the_probability_axis_never_runs_past_one_and_leaves_room_or_puts_the_label_inside(largest):
    end = bar_axis_end(largest)
    assert 0.05 <= end <= 1.0 and end >= largest
    # the label sits after the bar when a fifth of the axis is free there, else inside its end
    assert label_inside(largest, end) == (largest > 0.8 * end)
    assert label_inside(largest, end) or end - largest >= 0.2 * end - 1e-12
