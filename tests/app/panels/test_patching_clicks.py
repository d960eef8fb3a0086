"""A click on a patching grid's cell, through the grid's own click signal, opens what that cell
patched: a residual-stream cell opens its layer and token (the head kept), a head cell its layer
and head (the token kept), for every cell of both grids. The patching itself runs for real on a
tiny GGUF decoder, so the cells clicked are the grid the dock drew."""
from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("gguf")
pytest.importorskip("tokenizers")

from tests.shared_helpers import dock, open_tiny_gguf, wait_for  # noqa: E402
from tests.tiny_gguf import HEADS, LAYERS  # noqa: E402

pytestmark = pytest.mark.slow  # a window

CLEAN, CORRUPT = " the cat sat", " cat the sat"  # the same five tokens, two swapped


def test_every_cell_of_both_grids_opens_what_it_patched(window, tmp_path):
    c = window.controller
    name, _ = open_tiny_gguf(window, tmp_path, "llama", CLEAN, seed=5)
    panel = dock(window, "patching")
    panel.clean.setText(CLEAN)
    panel.corrupt.setText(CORRUPT)
    panel.answer.setText(" cat")
    panel.start()
    wait_for(lambda: not panel.running, timeout=120)
    n = len(panel.setup.clean.input_ids)
    assert panel.token_map.matrix().shape == (LAYERS, n) and panel.head_map.matrix().shape == (LAYERS, HEADS)
    assert np.isfinite(panel.head_map.matrix()).all()

    def settled():
        wait_for(lambda: c.is_idle() and c.snapshot.layer == c.layer)

    c.select(head=HEADS - 1, focus=n - 1)
    settled()
    for layer in range(LAYERS):
        for head in range(HEADS):
            token = c.focus
            panel.head_map.cellClicked.emit(layer, head)
            settled()
            assert (c.layer, c.head) == (layer, head), f"head cell ({layer}, {head}) opened {(c.layer, c.head)}"
            assert c.focus == token, f"head cell ({layer}, {head}) moved the token {token} → {c.focus}"
        for position in range(n):
            head = c.head
            panel.token_map.cellClicked.emit(layer, position)
            settled()
            assert (c.layer, c.focus) == (layer, position), f"token cell ({layer}, {position}) opened {(c.layer, c.focus)}"
            assert c.head == head, f"token cell ({layer}, {position}) moved the head {head} → {c.head}"
    assert c.config.text == CLEAN and c.model == name
