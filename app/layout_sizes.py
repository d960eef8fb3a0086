"""The default proportions of the docks for the window's size, and which screen a layout fits.

Why: the sizes given once while the window was built (330 / 700 / 420 pixels) were those of
a 1560-pixel window; after View → Reset layout the saved default state brought back sizes of a
window never shown (the input 125 pixels wide at 1024 × 600). The proportions here are applied
after every first start and reset, for the size the window has then.
"""
from __future__ import annotations

from contextlib import contextmanager

from PySide6.QtCore import QObject, Qt

# (share of the width, fewest pixels, most pixels) for the left and right columns; the heatmap
# takes the rest
INPUT_COLUMN = (0.24, 285, 380)
RIGHT_COLUMN = (0.28, 260, 480)
BOTTOM_SHARE = {True: 0.40, False: 0.34}  # of the height: a tall window (≥ 800 px) gives the tabs more
SCREEN_TOLERANCE = 0.1  # a saved layout is restored on a screen within 10 % of the one it was saved on


def _clamp(total: int, share: float, low: int, high: int) -> int:
    return int(max(low, min(high, total * share)))


def apply_default_sizes(window) -> None:
    """Left column (input over tokens, down to the status bar), heatmap, right column (head grid,
    arithmetic), the bottom tabs under the heatmap and the right column."""
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
    # the input's form over the token chips, the window's whole height beside the bottom groups: the chips
    # take the rows they need (a quarter of the column left the form scrolling at 1920 × 1080 over an
    # empty chip box), the form the rest
    column = docks["input"].height() + docks["tokens"].height()
    chips = min(int(column * 0.25), panel_height(window, "tokens") + 28)
    window.resizeDocks([docks["input"], docks["tokens"]], [column - chips, chips], Qt.Orientation.Vertical)


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
    which were cut at 1366 × 768), taken from the worked arithmetic below it; nothing when it has it already."""
    heads, below = window.docks["heads"], window.docks["arithmetic"]
    if heads.isHidden() or heads.isFloating() or below.isHidden() or below.isFloating():
        return
    panel = window.panels["heads"]
    title = heads.height() - heads.widget().height() if heads.widget() is not None else 24
    need = panel.minimumSizeHint().expandedTo(panel.minimumSize()).height() + max(title, 0) + 6
    total = heads.height() + below.height()
    need = min(need, total - below.minimumSizeHint().height())  # more than the arithmetic can give: Qt did nothing
    if heads.height() < need:
        with _line_kept(window):
            window.resizeDocks([heads, below], [need, total - need], Qt.Orientation.Vertical)


# the top row (input, heatmap, head grid and arithmetic) keeps this share of its and the bottom area's
# height, and at least these pixels: at 1024 × 600 less scrolled the head grid, the arithmetic and the chips
TOP_KEEP = (0.45, 255)
TOP_MOST = 0.62  # … and the head grid's rows may claim no more of it than this
TOP_LEAST = 240  # px: a bottom panel that needs it may take the top down to this (the head grid whole above the arithmetic)


def panel_height(window, key: str) -> int:
    """The smallest height dock ``key``'s panel shows whole in (its holder's minimum; 0 if not built)."""
    scroll = window.docks[key].widget()
    holder = scroll.widget() if scroll is not None and hasattr(scroll, "widget") else None
    if holder is None:
        return 0
    width = scroll.viewport().width()
    return max(holder.minimumSizeHint().height(),
               holder.heightForWidth(width) if holder.hasHeightForWidth() and width > 0 else 0)


def fit_bottom(window, key: str, grow_only: bool = False) -> None:
    """Raise the bottom dock ``key`` to the height its panel needs, so it does not scroll
    (the vector diffs' axes, the player's charts, the layer grids were cut at 1024 × 600), taken from
    the heatmap above down to what the top row needs (top_least); lower a default share that leaves
    the top less than TOP_KEEP. A panel that needs still more scrolls. Then the head grid and the token
    chips get their rows within the top row. ``grow_only``: a panel whose content changed (the player's
    next stage) may grow the dock, never shrink a height the user chose."""
    dock, above = window.docks[key], window.docks["attention"]
    if any(d.isHidden() or d.isFloating() for d in (dock, above)) or dock.widget() is None:
        return
    chrome = dock.height() - dock.widget().viewport().height()  # title bar (and frame)
    need = panel_height(window, key) + chrome + 2  # 2: a wrapped line's height moves with the width
    total = dock.height() + above.height()
    least = top_least(window, total)
    most = total - max(int(TOP_KEEP[0] * total), TOP_KEEP[1], least)  # a default share no larger
    height = min(max(dock.height(), need), most) if need <= most else min(need, total - least)
    if grow_only and height <= dock.height():
        return
    # both sides: given alone, Qt scales the one size with the others' old ones; laid out at once, or the
    # next resizeDocks reads the docks' old heights and writes them back
    window.resizeDocks([above, dock], [total - height, height], Qt.Orientation.Vertical)
    window.layout().activate()
    keep_tokens_whole(window)
    keep_head_grid_whole(window)


def bottom_room(widget) -> int | None:
    """The viewport height the bottom dock holding ``widget`` (a panel) may grow to: what fit_bottom gives a
    panel that needs it, the top row down to top_least. None outside a docked bottom dock (a floating one,
    a panel on its own). A panel with a compact form takes it only when even this is too short: else its
    dock grows to the whole form, as before (SmolLM2's five-row player at 1024 × 600)."""
    window = widget.window()
    docks = getattr(window, "docks", None)
    if not docks or "attention" not in docks:
        return None
    key = next((k for k, dock in docks.items() if dock.isAncestorOf(widget)), None)
    dock, above = docks.get(key), docks["attention"]
    if dock is None or dock.isFloating() or above.isHidden() or above.isFloating() or dock.widget() is None \
            or window.dockWidgetArea(dock) != Qt.DockWidgetArea.BottomDockWidgetArea:
        return None
    total = dock.height() + above.height()
    chrome = dock.height() - dock.widget().viewport().height()
    return total - top_least(window, total) - chrome - 2  # 2: fit_bottom's


def top_least(window, total: int) -> int:
    """Height the top row needs: TOP_LEAST, or the head grid's rows (two or three with 8 or 12 heads)
    over the arithmetic's smallest size and its tab bar, but never more than TOP_MOST of ``total``."""
    heads, below = window.docks["heads"], window.docks["arithmetic"]
    need = TOP_LEAST
    if not (heads.isHidden() or heads.isFloating() or below.isHidden() or below.isFloating()) \
            and heads.widget() is not None:
        title = heads.height() - heads.widget().viewport().height()
        # what the right column has beside its two docks (the separator, a tab bar if the user tabbed a dock
        # behind the arithmetic), measured: a fixed 50 px counted the inspector's old tab bar there, and the
        # top row took 30 px from the bottom group with twelve heads at 1024 × 600
        gap = max(0, window.docks["attention"].height() - heads.height() - below.height())
        need = max(need, panel_height(window, "heads") + title + below.minimumSizeHint().height() + gap + 8)
    return min(need, int(TOP_MOST * total))


def keep_tokens_whole(window) -> None:
    """The token chips keep the rows they need under the input's form: a taller bottom area took its
    height from the lowest dock of the left column, the chips, first."""
    form, chips = window.docks["input"], window.docks["tokens"]
    if any(d.isHidden() or d.isFloating() for d in (form, chips)) or chips.widget() is None:
        return
    panel = window.panels["tokens"]
    rows = panel.rows_height() if hasattr(panel, "rows_height") else 0
    need = max(panel_height(window, "tokens"), rows) + chips.height() - chips.widget().viewport().height()
    total = form.height() + chips.height()
    if chips.height() < need and total - need >= 120:
        with _line_kept(window):
            window.resizeDocks([form, chips], [total - need, need], Qt.Orientation.Vertical)


def set_bottom_height(window, key: str, height: int) -> None:
    """Bottom dock ``key`` ``height`` pixels tall, the heatmap above taking the rest (a size given
    to resizeDocks alone is scaled with the old sizes of the others: the group's share came out ~70 %)."""
    dock, above = window.docks[key], window.docks["attention"]
    if above.isHidden() or above.isFloating():
        window.resizeDocks([dock], [height], Qt.Orientation.Vertical)
    else:
        total = dock.height() + above.height()
        window.resizeDocks([above, dock], [max(total - height, 0), height], Qt.Orientation.Vertical)
    window.layout().activate()


class KeepHeightForWidth(QObject):
    """Keeps ``widget``'s minimum height at what its layout needs at its current width.

    Word-wrapped labels need more lines at a narrow width, but a QSplitter or QTabWidget between them
    and the dock's scroll area does not pass height-for-width on: the positional lab's formulas took
    the height of the PE map below them, whose colour bar and axis were then cut."""

    def __init__(self, widget) -> None:
        super().__init__(widget)
        self._widget = widget
        widget.installEventFilter(self)

    def eventFilter(self, watched, event) -> bool:  # noqa: N802 - Qt name
        from PySide6.QtCore import QEvent

        if watched is self._widget and event.type() in (QEvent.Type.Resize, QEvent.Type.LayoutRequest,
                                                        QEvent.Type.Show):
            layout = self._widget.layout()
            if layout is not None and layout.hasHeightForWidth() and self._widget.width() > 0:
                need = layout.minimumHeightForWidth(self._widget.width())
                if need != self._widget.minimumHeight():
                    self._widget.setMinimumHeight(need)
        return False


@contextmanager
def _line_kept(window):
    """Resize a column's docks inside: laid out at once (the next resizeDocks would read the old heights
    and write them back), and the line between the top row and the bottom group put back where it was
    (a column's resize sets its whole dock area to the docks' sum, which leaves out the arithmetic's tab
    bar: the line moved ~26 px down each time)."""
    above = window.docks["attention"]
    bottom = next((d for d in shown_bottom(window)), None)
    heights = (above.height(), bottom.height()) if bottom is not None and above.isVisible() else None
    yield
    window.layout().activate()
    if heights is not None:
        window.resizeDocks([above, bottom], list(heights), Qt.Orientation.Vertical)
        window.layout().activate()


def shown_bottom(window):
    """The bottom docks on screen (the current group's tab on top), docked."""
    groups = getattr(window, "dock_groups", None)
    keys = groups.keys(groups.current) if groups is not None else ()
    return [window.docks[k] for k in keys if window.docks[k].isVisible() and not window.docks[k].isFloating()
            and not window.docks[k].visibleRegion().isEmpty()]
