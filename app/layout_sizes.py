"""The default proportions of the docks for the window's size, and which screen a layout fits.

Issue 25.9: the sizes given once while the window was built (330 / 700 / 420 pixels) were those of
a 1560-pixel window; after View → Reset layout the saved default state brought back sizes of a
window never shown (the input 125 pixels wide at 1024 × 600). The proportions here are applied
after every first start and reset, for the size the window has then.
"""
from __future__ import annotations

from PySide6.QtCore import Qt

# (share of the width, fewest pixels, most pixels) for the left and right columns; the heatmap
# takes the rest
INPUT_COLUMN = (0.24, 285, 380)
RIGHT_COLUMN = (0.28, 260, 480)
BOTTOM_SHARE = {True: 0.40, False: 0.34}  # of the height: a tall window (≥ 800 px) gives the tabs more
SCREEN_TOLERANCE = 0.1  # a saved layout is restored on a screen within 10 % of the one it was saved on


def _clamp(total: int, share: float, low: int, high: int) -> int:
    return int(max(low, min(high, total * share)))


def apply_default_sizes(window) -> None:
    """Left column (input, tokens), heatmap, right column (head grid, arithmetic), bottom tabs."""
    docks = window.docks
    width, height = window.width(), window.height()
    left = _clamp(width, *INPUT_COLUMN)
    right = _clamp(width, *RIGHT_COLUMN)
    middle = max(200, width - left - right)
    window.resizeDocks([docks["input"], docks["attention"], docks["heads"]], [left, middle, right],
                       Qt.Orientation.Horizontal)
    bottom = int(height * BOTTOM_SHARE[height >= 800])
    top = max(150, height - bottom)
    window.resizeDocks([docks["attention"], docks["diffs"]], [top, bottom], Qt.Orientation.Vertical)
    # the head grid's two rows of heads (8 or more heads) stay whole above the arithmetic
    window.resizeDocks([docks["heads"], docks["arithmetic"]], [int(top * 0.45), int(top * 0.55)],
                       Qt.Orientation.Vertical)
    keep_head_grid_whole(window)
    # the input's form over the token chips
    window.resizeDocks([docks["input"], docks["tokens"]], [int(top * 0.75), int(top * 0.25)],
                       Qt.Orientation.Vertical)


def screen_key(window) -> str:
    """"width×height" of the screen's available area the window is on."""
    screen = window.screen()
    if screen is None:
        return ""
    area = screen.availableGeometry()
    return f"{area.width()}x{area.height()}"


def same_screen(saved, current: str) -> bool:
    """True when a layout saved on ``saved`` ("w×h", or nothing from an older version: restored as
    before) suits ``current``: each side within SCREEN_TOLERANCE."""
    if not isinstance(saved, str) or not saved:
        return True
    try:
        (w0, h0), (w1, h1) = (tuple(int(v) for v in key.split("x")) for key in (saved, current))
    except ValueError:
        return False
    return abs(w0 - w1) <= SCREEN_TOLERANCE * max(w0, w1) and abs(h0 - h1) <= SCREEN_TOLERANCE * max(h0, h1)


def keep_head_grid_whole(window) -> None:
    """Give the head grid the height its rows need (two rows of thumbnails with 8 or more heads,
    issue 25.9), taken from the worked arithmetic below it; nothing when it has it already."""
    heads, below = window.docks["heads"], window.docks["arithmetic"]
    if heads.isHidden() or heads.isFloating() or below.isHidden() or below.isFloating():
        return
    panel = window.panels["heads"]
    title = heads.height() - heads.widget().height() if heads.widget() is not None else 24
    need = panel.minimumSizeHint().expandedTo(panel.minimumSize()).height() + max(title, 0) + 6
    total = heads.height() + below.height()
    if heads.height() < need and total - need >= 64:  # the arithmetic keeps a few lines
        window.resizeDocks([heads, below], [need, total - need], Qt.Orientation.Vertical)
