"""Nothing cut, checked on every run: at 1024 × 600, 1366 × 768 and 1920 × 1080 the first
start and every group of docks show their panels whole (app/layout_check.py finds nothing cut).

The window sizes are what those screens leave a maximised window under Xvfb (scripts/layout_screenshots.py
prints them): 1008 × 552, 1350 × 720 and the first size's cap, 1560 × 1000.
"""
from __future__ import annotations

import time

import numpy as np
import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication, QHBoxLayout, QWidget

from app.layout_check import clipped_children, clipped_items, cut_report, dock_scrolls

SIZES = {"1024x600": (1008, 552), "1366x768": (1350, 720), "1920x1080": (1560, 1000)}
# What may still scroll (with its scroll bar), and why: nothing. At 1024 × 600 (a 552-pixel window) the
# positional lab needed 258 px (toy) to 288 (MiniLM) in 185, its formulas seven lines in the 370-pixel
# tab over a PE map of 120: it takes its compact form (app/panels/positional_panel.py: the formula
# alone, the rest behind "Details"; 168 px). The step-through player fits with few rows: its heatmaps
# are as tall as their rows need (view_height: the toy's three tokens 100 px, not 240; looked at: labels
# and numbers readable). The input's form (its rarely used settings behind "More"), the next-token bars
# (as many as fit, "top 5 of 10") and the cell inspector (rows as tall as their text) fit; so do the
# head grid, the worked arithmetic, the model layers, the rollout and the activation patching's form
# (its grids share the dock's room: tests/app/shell/test_patching_layout.py).
ALLOWED = {
    "1024x600": set(),
    "1366x768": set(),
    "1920x1080": set(),
}


# … and for a model, at 1024 × 600: nothing either. The player with MiniLM's and e5's sixteen tokens
# needed 319 px in 211 (a 240-px heatmap under 79 px of controls and captions; in the 130 left under
# them, sixteen rows came out 4 px tall, looked at): a one-heatmap stage puts its controls and captions
# beside the map (210 px, rows 9.6 px); e5's prefix bar needed 305 px in the input's 279 until its
# buttons were as wide as their words. Still short there: the three-heatmap stages (Q, K, V; the
# weighted sum; concat; new vectors) with sixteen tokens scroll, three 220-px maps leave no width for
# a column beside them (test_three_heatmaps_of_sixteen_rows_still_scroll_at_1024_by_600).
MODEL_ALLOWED: dict[str, set] = {}


def _settle(window, seconds: float = 0.3) -> None:
    window.wait_until_idle(60)
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:  # the groups' fit runs on timers (one event-loop turn, 50 ms)
        QApplication.processEvents()
        time.sleep(0.01)
    window.wait_until_idle(60)
    QApplication.processEvents()


def _at(window, size: str) -> None:
    window.resize(*SIZES[size])
    _settle(window)
    window.reset_layout()  # the first start's proportions for this size
    _settle(window)


def _cut(window, size: str) -> dict:
    """cut_report, less the scroll bars ALLOWED at ``size``: a dock allowed to scroll may still cut
    nothing (an axis or label past its widget is reported wherever it is)."""
    found = {}
    for key, problems in cut_report(window).items():
        allowed = ALLOWED[size] | (MODEL_ALLOWED.get(window.controller.model, set()) if size == "1024x600" else set())
        problems = [p for p in problems if key not in allowed or not p.startswith("the panel scrolls")]
        if problems:
            found[key] = problems
    return found


def _cut_in_every_group(window, size: str) -> dict:
    """group → what _cut finds, at the first start and in every group (the player's heatmap stages
    too, not only its token strip)."""
    found = {}
    for name in ["first start"] + window.dock_groups.names():
        if name != "first start":
            window.dock_groups.select(name)
            _settle(window)
        if report := _cut(window, size):
            found[name] = report
        if name == "basics":  # the cell inspector, a tab behind the vector diffs, with a cell taken apart
            window.controller.inspect(1, 2)
            window.docks["inspector"].raise_()
            _settle(window)
            if report := _cut(window, size):
                found["basics at the inspector"] = report
            window.docks["diffs"].raise_()
        if name == "steps":
            player = window.panel("player")
            player.set_stage(player.stage_keys.index("weights"))
            _settle(window)
            if report := _cut(window, size):
                found["steps at the weights"] = report
        if name == "labs" and window.controller.model == "toy":  # the lab's results and its difference map
            lab = window.panel("positional")
            lab.shuffle()
            _settle_lab(window, lab)
            report = _cut(window, size)
            if cut := clipped_children(lab):
                report.setdefault("positional", []).extend(cut)
            if report:
                found["labs after a shuffle"] = report
    return found


def _settle_lab(window, lab) -> None:
    deadline = time.monotonic() + 15
    while not lab.is_idle() and time.monotonic() < deadline:
        QApplication.processEvents()
        time.sleep(0.01)
    _settle(window)


@pytest.mark.slow
@pytest.mark.parametrize("size", list(SIZES))
def test_every_group_shows_its_panels_whole(window, size):
    """Before the fixes at 1024 × 600: the heatmap scrolled sideways (its colour bar's numbers and the
    "3 tokens · d_k" note cut), the vector diffs' axes and colour bar were cut, the player, the layer
    grids and the rollout scrolled; the groups' heights came out at ~70 % of their share. At 1366 × 768
    the toy's settings form scrolled under the top row (the left column now runs beside the groups)."""
    _at(window, size)
    found = _cut_in_every_group(window, size)
    assert not found, found


SENTENCES = {"minilm": "The animal didn't cross the street because it was too tired.",
             "e5": "The animal didn't cross the street because it was too tired.",
             "smollm2": "The capital of France is"}


@pytest.mark.slow
@pytest.mark.parametrize("size", ["1366x768", "1024x600"])
@pytest.mark.parametrize("model", list(SENTENCES))
def test_every_group_shows_a_real_models_panels_whole(window, request, model, size):
    """SmolLM2's nine heads at 1366 × 768 took five columns whose "head 4" lay past the grid's right
    edge; twelve heads (MiniLM, e5) at 1024 × 600 scrolled the head grid; each model's facts under
    the sentence scrolled the input."""
    request.getfixturevalue(f"{model}_model")
    _at(window, size)  # then the model, as a user switches: the head grid rebuilt in the docks it has
    window.controller.set_config(window.controller.config.replace(text=SENTENCES[model]), immediate=True)
    window.model_combo.setCurrentIndex(window.model_combo.findData(model))
    _settle(window, 1.0)
    assert window.controller.model == model
    found = _cut_in_every_group(window, size)
    assert not found, found


@pytest.mark.slow
def test_heatmap_caption_and_colour_bar_fit_at_1024_by_600(window):
    """The brief's own case: no sideways scroll bar in the heatmap dock, the note whole on its line,
    the colour bar and its numbers inside the heatmap's widget."""
    _at(window, "1024x600")
    panel = window.panels["attention"]
    dock = window.docks["attention"]
    assert dock_scrolls(dock) == [], (panel.minimumSizeHint(), dock.widget().viewport().size())
    assert not dock.widget().horizontalScrollBar().isVisible()
    caption = panel.caption
    assert caption.text().startswith("3 tokens · d_k = ")  # the first start's 小明喜欢苹果, 4 heads
    assert caption.isVisible() and caption.heightForWidth(caption.width()) <= caption.height() + 1
    assert caption.geometry().right() <= panel.rect().right()
    view = panel.heatmap
    bar = view.colorbar
    inside = view.mapToScene(view.viewport().rect()).boundingRect()
    assert inside.contains(bar.mapRectToScene(bar.rect())), (bar.mapRectToScene(bar.rect()), inside)
    assert clipped_items(view) == []


@pytest.mark.slow
def test_the_checker_finds_a_cut(window):
    """The checker itself can fail: a panel taller than its dock is reported, a colour bar squeezed
    into a narrow view too."""
    _at(window, "1366x768")
    window.panels["diffs"].setMinimumHeight(2000)
    _settle(window)
    assert any("scrolls up and down" in p for p in cut_report(window).get("diffs", [])), cut_report(window)

    from app.heatmap import HeatmapView

    view = HeatmapView(title="a title wider than the view", colorbar=True)
    view.set_matrix(np.ones((3, 8)) * 0.5, ["a", "b", "c"])
    view.setFixedSize(90, 200)  # below the width its items need: drawn past the edge
    view.show()
    _settle(window, 0.1)
    assert clipped_items(view), "a 90-pixel heatmap with a colour bar should be reported cut"
    view.hide()  # not close(): pyqtgraph's GraphicsView.close() crashes on a HeatmapView (before this branch too)
    view.deleteLater()


def test_a_heatmap_asks_for_the_width_its_colour_bar_needs(qapp):
    """Three token × dimension maps side by side in 560 px (the vector diffs at 1024 × 600): the one
    with the colour bar gets what it needs and nothing is drawn past an edge."""
    from app.heatmap import DIVERGING_MAP, HeatmapView

    holder = QWidget()
    row = QHBoxLayout(holder)
    views = []
    for name in ("x (before)", "output (after)", "output − x"):
        view = HeatmapView(title=name, colorbar=name == "output − x")
        view.set_axis_titles("token", "dimension")
        view.set_matrix(np.linspace(-1, 1, 3 * 64).reshape(3, 64), ["小明", "喜欢", "苹果"], None,
                        levels=(-1.0, 1.0), colormap=DIVERGING_MAP, show_values=False)
        row.addWidget(view)
        views.append(view)
    holder.resize(560, 170)
    holder.show()
    for _ in range(5):
        QApplication.processEvents()
    with_bar = views[-1]
    need = with_bar.ci.effectiveSizeHint(Qt.SizeHint.MinimumSize)
    assert with_bar.width() >= need.width() - 1, (with_bar.width(), need)
    assert all(clipped_items(view) == [] for view in views), [clipped_items(view) for view in views]
    holder.hide()
    holder.deleteLater()


@pytest.mark.slow
def test_player_token_page_does_not_need_the_heatmaps_height(window):
    """The stack took its largest page's minimum: the token strip scrolled for heatmaps not shown."""
    from app.panels.player_panel import MIN_VIEW_HEIGHT

    c = window.controller  # sixteen tokens: heatmaps of the full 240 px (three would need 100)
    c.set_config(c.config.replace(text=" ".join(f"w{i}" for i in range(16)), tokenizer="whitespace"), immediate=True)
    player = window.show_player()
    _settle(window)
    player.set_stage(player.stage_keys.index("tokens"))
    _settle(window)
    assert player.minimumSizeHint().height() < MIN_VIEW_HEIGHT, player.minimumSizeHint()
    player.set_stage(player.stage_keys.index("weights"))
    _settle(window)
    assert player.minimumSizeHint().height() >= MIN_VIEW_HEIGHT, player.minimumSizeHint()


@pytest.mark.slow
def test_the_players_heatmaps_are_as_tall_as_their_rows_need(window):
    """Three tokens: 100 px, not 240 (the player fits at 1024 × 600); sixteen: 240; the concat stage's
    W_O (d_model rows) 240 with three tokens too: the rows of the tallest matrix shown count."""
    from app.panels.player_panel import LEAST_VIEW_HEIGHT, MIN_VIEW_HEIGHT, ROW_PX, VIEW_CHROME, view_height

    assert view_height(3) == LEAST_VIEW_HEIGHT == 100 and view_height(16) == MIN_VIEW_HEIGHT == 240
    assert view_height(12) == VIEW_CHROME + 12 * ROW_PX == 208
    player = window.show_player()
    c = window.controller
    c.set_config(c.config.replace(text="小明喜欢苹果"), immediate=True)
    _settle(window)
    assert c.snapshot.result.n == 3
    player.set_stage(player.stage_keys.index("weights"))
    _settle(window)
    shown = [view for view in player.views if not view.isHidden()]
    assert [view.minimumHeight() for view in shown] == [100]
    player.set_stage(player.stage_keys.index("qkv"))  # q, k, v: 3 rows × d_k 16 columns, rows count
    _settle(window)
    assert [view.minimumHeight() for view in player.views if not view.isHidden()] == [100] * 3
    player.set_stage(player.stage_keys.index("concat"))
    _settle(window)
    shown = [view for view in player.views if not view.isHidden()]
    assert len(shown) == 3 and [view.minimumHeight() for view in shown] == [240] * 3  # beside W_O: 64 × 64
    c.set_config(c.config.replace(text=" ".join(f"w{i}" for i in range(12)), tokenizer="whitespace"), immediate=True)
    player.set_stage(player.stage_keys.index("weights"))
    _settle(window)
    assert c.snapshot.result.n == 12
    assert [view.minimumHeight() for view in player.views if not view.isHidden()] == [208]


def test_a_heatmap_beside_the_players_controls_keeps_its_rows():
    """Beside the controls a stage heatmap has no title (it is over the captions) and 2-px margins, not 9:
    38 px less for the same rows; stacked, the heights are as before."""
    from app.panels.player_panel import SIDE_SAVING, view_height

    assert SIDE_SAVING == 38
    assert [view_height(rows, side=True) for rows in (3, 12, 16, 40)] == [62, 170, 202, 202]
    assert [view_height(rows) for rows in (3, 12, 16, 40)] == [100, 208, 240, 240]


def _sixteen_tokens(window) -> None:
    c = window.controller
    c.set_config(c.config.replace(text=" ".join(f"w{i}" for i in range(16)), tokenizer="whitespace"), immediate=True)
    _settle(window)


def _player_at(window, stage: str):
    """The Steps group shown, the player on ``stage``."""
    window.dock_groups.select("steps")
    _settle(window)
    player = window.panel("player")
    player.set_stage(player.stage_keys.index(stage))
    _settle(window)
    return player


@pytest.mark.slow
@pytest.mark.parametrize("size", ["1024x600", "1366x768"])
def test_the_player_puts_its_captions_beside_sixteen_rows_when_short(window, size):
    """Sixteen tokens at 1024 × 600: the weights' 240-px heatmap under the controls and two captions needed
    319 px in 211 and scrolled. Beside them it has the dock's height: whole, its rows ≥ 9 px (9.5 stacked at
    1366 × 768), its title over the captions. At 1366 × 768 the player stays stacked, as it was."""
    _at(window, size)
    _sixteen_tokens(window)
    player = _player_at(window, "weights")
    dock = window.docks["player"]
    assert dock_scrolls(dock) == [], (player.stacked_height(dock.widget().viewport().width()), dock.height())
    view = player.views[0]
    assert clipped_items(view) == [] and clipped_children(player) == []
    rows = view.plot.getViewBox().sceneBoundingRect().height() / 16
    assert rows >= 9, rows
    title = "weights of head 0 · 16 × 16"
    if size == "1024x600":
        assert player.is_beside()
        assert player.view_title.isVisible() and player.view_title.text() == title
        assert view.plot.title.text == ""  # not twice
        head, pages = player.head.geometry(), player.pages.geometry()
        assert head.right() < pages.left() and pages.height() >= view.minimumHeight()
        assert player.caption_why.height() >= player.caption_why.heightForWidth(player.caption_why.width())
    else:
        assert not player.is_beside() and not player.view_title.isVisible() and view.plot.title.text == title
    player.set_stage(player.stage_keys.index("tokens"))  # the token strip: stacked again
    _settle(window)
    assert not player.is_beside() and dock_scrolls(dock) == []


@pytest.mark.slow
def test_the_player_stays_stacked_when_its_dock_can_grow_to_it(window):
    """Five rows (SmolLM2's "The capital of France is") at 1024 × 600 need 203 px stacked, 7 more than the
    group's share gives: the dock grows to them (app/layout_sizes.py bottom_room), as before; beside is
    for what no height there holds."""
    from app.layout_sizes import bottom_room

    _at(window, "1024x600")
    c = window.controller
    c.set_config(c.config.replace(text="The capital of France is", tokenizer="whitespace"), immediate=True)
    player = _player_at(window, "weights")
    dock = window.docks["player"]
    width = dock.widget().viewport().width()
    assert player.stacked_height(width) <= bottom_room(player), (player.stacked_height(width), bottom_room(player))
    assert not player.is_beside() and dock_scrolls(dock) == []
    assert bottom_room(window.panel("input")) is None  # not a bottom dock


@pytest.mark.slow
def test_three_heatmaps_of_sixteen_rows_still_scroll_at_1024_by_600(window):
    """What is still short (see MODEL_ALLOWED): Q, K and V side by side leave no width for a column beside
    them, and stacked they need 319 px in 211. The player says so by scrolling, not by squashing its rows."""
    _at(window, "1024x600")
    _sixteen_tokens(window)
    player = _player_at(window, "qkv")
    assert not player.is_beside()
    assert all(view.minimumHeight() == 240 for view in player.views)
    assert "up and down" in dock_scrolls(window.docks["player"])


@pytest.mark.slow
def test_the_positional_lab_is_compact_when_short_and_whole_when_tall(window):
    """At 1024 × 600 the lab needed 258 px in 185 (377 once shuffled, and sideways: the difference map's
    title is 378 px wide): compact, it shows the PE formula alone ("Details" for the rest), the shuffle's
    difference map in a tab of its own, raised by a shuffle, RoPE's fastest and slowest pairs in one row;
    nothing scrolls or is cut. At 1920 × 1080 everything is where it was."""
    _at(window, "1024x600")
    window.dock_groups.select("labs")
    _settle(window)
    lab, dock = window.panel("positional"), window.docks["positional"]
    assert lab.is_compact() and dock_scrolls(dock) == [], (lab.full_height(), dock.height())
    assert lab.pe_formula.isVisible() and not lab.pe_caption.isVisible() and lab.details_button.isVisible()
    assert lab.pe_formula.text() == lab.pe_caption.text().split("\n")[0]
    assert lab.intro.isVisible()  # no results yet: the intro says what the button does
    lab.shuffle()
    _settle_lab(window, lab)
    assert lab.tabs.currentWidget() is lab.difference_map and lab.tabs.tabText(2) == "Δ weights · head 0"
    assert dock_scrolls(dock) == [] and clipped_children(lab) == []
    assert clipped_items(lab.difference_map) == [] and lab.verdict.isVisible()
    lab.tabs.setCurrentIndex(0)
    _settle(window)
    assert clipped_items(lab.pe_map) == []
    lab.positional.setCurrentIndex(lab.positional.findData("rope"))
    _settle_lab(window, lab)
    lab.tabs.setCurrentIndex(1)
    _settle(window)
    assert len(lab.rope_data) == 2 and lab.rope_line.isVisible()
    assert dock_scrolls(dock) == [] and clipped_items(lab.rope_canvas) == [], clipped_items(lab.rope_canvas)
    lab.details_button.click()  # the whole captions, in both tabs (the dock may scroll: the user's choice)
    _settle(window)
    assert lab.rope_caption.isVisible() and lab.details_buttons[1].isChecked()
    lab.details_button.click()
    lab.positional.setCurrentIndex(lab.positional.findData("sinusoidal"))
    _settle_lab(window, lab)

    _at(window, "1920x1080")
    window.dock_groups.select("labs")
    _settle(window)
    assert not lab.is_compact() and lab.pe_caption.isVisible() and not lab.details_button.isVisible()
    assert lab.tabs.indexOf(lab.difference_map) < 0 and lab.difference_map.isVisible()  # under the results
    assert lab.intro.isVisible() and lab.pe_map.plot.title.text == "PE (token × dimension)"
    assert dock_scrolls(dock) == [] and clipped_children(lab) == []


@pytest.mark.slow
def test_a_groups_height_is_its_share_not_seventy_percent_of_it(window):
    """resizeDocks given the bottom dock alone scaled its size with the top's old one: the groups
    came out at ~70 % of their share. At 1920 × 1080 the share is well inside the limits."""
    from app.dock_groups import BOTTOM_SHARE

    _at(window, "1920x1080")
    window.dock_groups.select("analysis")
    _settle(window)
    dock = window.docks["rollout"]
    wanted = int(window.height() * BOTTOM_SHARE["analysis"])
    assert abs(dock.height() - wanted) <= 8, (dock.height(), wanted)


@pytest.mark.slow
def test_token_chips_keep_their_row_under_the_form(window):
    """The chips took a quarter of the left column (an empty box while the form scrolled at 1920 ×
    1080), then lost height to a taller bottom area (scrolled at 1024 × 600)."""
    from app.layout_sizes import panel_height

    for size in ("1920x1080", "1024x600"):
        _at(window, size)
        chips = window.docks["tokens"]
        assert dock_scrolls(chips) == [], (size, chips.widget().viewport().size())
        assert chips.widget().viewport().height() <= panel_height(window, "tokens") + 40, size


def test_model_layers_rows_share_the_grids_height(qapp):
    """Twelve layers (e5) at 1366 × 768: each row was as tall as its label's text and the last two
    rows were drawn below the grid's edge."""
    import pyqtgraph as pg

    from app.panels.layers_panel import _RowLabel

    grid = pg.GraphicsLayoutWidget()
    labels = []
    for layer in range(12):
        labels.append(_RowLabel(f"layer {layer}", layer, size="8pt"))
        grid.addItem(labels[-1], row=layer, col=0)
        grid.addViewBox(row=layer, col=1, lockAspect=True, enableMouse=False)
    for height in (200, 120):  # 1366 × 768's grid, and a shorter one: every other name or fewer
        grid.resize(600, height)
        grid.show()
        for _ in range(5):
            QApplication.processEvents()
        assert clipped_items(grid) == [], clipped_items(grid)
        shown = [label.item.mapRectToScene(label.item.boundingRect()) for label in labels if label.item.isVisible()]
        assert labels[0].item.isVisible() and len(shown) >= 3, height
        assert all(not a.intersects(b) for a, b in zip(shown, shown[1:])), (height, shown)
    grid.hide()
    grid.deleteLater()


@pytest.mark.slow
def test_every_row_of_chips_is_shown_after_a_longer_sentence(window):
    """A sixteen-token sentence in a 300-pixel column wraps its chips to three rows: the chips' dock
    kept one row's height and the third row was cut under an input column with room to spare."""
    _at(window, "1920x1080")
    window.docks["input"].setMinimumWidth(0)
    window.resizeDocks([window.docks["input"]], [300], Qt.Orientation.Horizontal)
    window.controller.set_config(window.controller.config.replace(
        text="The animal didn't cross the street because it was too tired today and then slept"), immediate=True)
    _settle(window, 0.6)  # the chips' fit runs 50 ms after the result, and once more 200 ms later
    panel = window.panels["tokens"]
    chips = panel.chips
    last = chips.visualRect(panel.model.index(panel.count() - 1))
    assert last.bottom() <= chips.viewport().height(), (last, chips.viewport().size())
    assert chips.visualRect(panel.model.index(0)).top() >= 0


@pytest.mark.slow
def test_a_closed_window_drops_its_pending_layout_timers(qapp, qtbot, tmp_path):
    """The layout's deferred fits (chips, group heights) ran on a deleted window after a language
    switch or a close: "Internal C++ object (MainWindow) already deleted" in the event loop (pytest-qt
    fails the test on it). Each timer now has the window as its context: gone with it."""
    from app.shell.identity import use_settings_folder
    from app.window import MainWindow

    use_settings_folder(str(tmp_path))
    window = MainWindow(restore=False)
    window.resize(1024, 600)
    window.show()
    _settle(window)
    window.dock_groups._fit_chips()  # queues its second try 200 ms later
    window.dock_groups.select("steps")  # queues a fit and a follow
    assert window.wait_until_idle(30)
    window.close()
    import shiboken6

    shiboken6.delete(window)  # the C++ window gone now, its Python wrapper and the lambdas still alive
    qtbot.wait(400)  # past the 200 ms second try


@pytest.mark.slow
def test_a_layout_saved_with_the_top_row_in_the_left_column_is_not_restored(qtbot):
    """Before the left column ran down beside the bottom groups, the heatmap and the head grid were
    split off the input inside the left dock area: restored as saved, that area would take the whole
    height and leave the bottom groups no width."""
    def top_row_in_the_left_column(first) -> None:
        first.splitDockWidget(first.docks["input"], first.docks["attention"], Qt.Orientation.Horizontal)
        assert first.dockWidgetArea(first.docks["attention"]) == Qt.DockWidgetArea.LeftDockWidgetArea

    second = _restored_after(qtbot, top_row_in_the_left_column)
    assert second.dockWidgetArea(second.docks["attention"]) == Qt.DockWidgetArea.RightDockWidgetArea
    assert second.docks["diffs"].width() > second.width() // 2
    second.controller.worker.wait_until_idle(30)
    second.close()


@pytest.mark.slow
def test_a_layout_saved_with_the_inspector_behind_the_arithmetic_is_not_restored(qtbot):
    """Before the cell inspector moved to the Basics group it was tabbed behind the worked arithmetic,
    where it scrolled at every size: restored as saved, it would stay there, outside every group."""
    def behind_the_arithmetic(first) -> None:
        first.addDockWidget(Qt.DockWidgetArea.RightDockWidgetArea, first.docks["inspector"])
        first.tabifyDockWidget(first.docks["arithmetic"], first.docks["inspector"])

    second = _restored_after(qtbot, behind_the_arithmetic)
    assert second.dockWidgetArea(second.docks["inspector"]) == Qt.DockWidgetArea.BottomDockWidgetArea
    assert second.docks["diffs"] in second.tabifiedDockWidgets(second.docks["inspector"])
    second.controller.worker.wait_until_idle(30)
    second.close()


def _restored_after(qtbot, arrange):
    """A window started with the layout a first window saved after ``arrange(first)`` (an older layout)."""
    from app.window import MainWindow

    first = MainWindow(restore=False)
    first.show()
    assert first.wait_until_idle(30)
    arrange(first)
    first.close()  # saves its layout
    second = MainWindow(restore=True)
    qtbot.addWidget(second)
    second.show()
    assert second.wait_until_idle(30)
    return second


@pytest.mark.slow
def test_more_settings_follow_the_room_until_chosen_then_remember(window):
    """The input's rarely used settings: hidden at 1024 × 600 (the form scrolled), shown at 1920 × 1080;
    once the user opens or closes them, a new panel (the next start) keeps that choice at any size."""
    from PySide6.QtCore import QSettings

    from app.panels.input_panel import MORE_KEY, InputPanel

    panel = window.panels["input"]
    _at(window, "1024x600")
    assert not panel.more_shown() and not panel.seed.isVisible() and not panel.load_projections.isVisible()
    assert "seed 0" in panel.more_button.text()  # what the hidden settings are set to
    _at(window, "1920x1080")
    assert panel.more_shown() and panel.seed.isVisible() and panel.load_projections.isVisible()
    panel.more_button.click()  # the user closes them
    assert not panel.more_shown() and not panel.weights.isVisible()
    assert QSettings("AttentionExplorer", "AttentionExplorer").value(MORE_KEY) == "closed"
    _settle(window)
    assert not panel.more_shown(), "the room there is overrode the user's choice"
    _at(window, "1024x600")
    panel.more_button.click()  # opened on the small screen: kept open though the column scrolls
    _settle(window)
    assert panel.more_shown() and panel.seed.isVisible()
    assert QSettings("AttentionExplorer", "AttentionExplorer").value(MORE_KEY) == "open"
    again = InputPanel(window.controller)
    assert again.more_shown()
    again.deleteLater()


@pytest.mark.slow
def test_a_message_about_a_hidden_setting_shows_it(window):
    panel = window.panels["input"]
    _at(window, "1024x600")
    assert not panel.more_shown()
    panel.show_message("seed", "seed must be a whole number")
    assert panel.more_shown() and panel.messages["seed"].isVisible()


@pytest.mark.slow
def test_next_token_bars_are_as_many_as_fit_and_the_engines_numbers(window):
    """Ten bars in a 120-pixel chart drew their labels over each other (SmolLM2 at 1024 × 600): the chart
    shows the likeliest that fit, each with its label's height, says "top k of 10", and every bar is the
    probability the worker computed."""
    from types import SimpleNamespace

    from app.panels.next_token_panel import BARS, MIN_BARS

    panel = window.panel("next")
    trace = SimpleNamespace(tokens=[SimpleNamespace(text="The"), SimpleNamespace(text=" capital")], n=2,
                            config=SimpleNamespace(vocab_size=49152))
    probabilities = [0.4, 0.2, 0.1, 0.08, 0.06, 0.05, 0.04, 0.03, 0.02, 0.01]
    panel.bars = {"trace": trace, "position": 0, "probabilities": probabilities,
                  "texts": [f"t{i}" for i in range(BARS)], "kept": 49152}
    panel.show()
    row = panel.bar_pixels()
    for height, shown in ((MIN_BARS * row + 14, MIN_BARS), (6 * row + 10, 6), (BARS * row + 60, BARS)):
        panel.plot.setFixedHeight(height)
        panel.resize(500, height + 120)
        QApplication.processEvents()
        panel._paint()
        QApplication.processEvents()
        assert panel.shown_count() == shown, (height, row, panel.shown_count())
        assert list(panel.bar_item.opts["width"]) == probabilities[:shown]
        ticks = panel.plot.getAxis("left")._tickLevels[0]
        assert [text for _, text in ticks] == [f"t{i}" for i in range(shown)]
        assert panel.shown_label.text() == ("" if shown == BARS else f"top {shown} of {BARS}")
        assert panel.plot.getAxis("bottom").isVisible() == (shown == BARS)


@pytest.mark.slow
def test_the_inspectors_numbers_and_six_steps_fit_at_1024_by_600(window):
    """Its rows were the style's 30 px (four steps in 185 px, the panel scrolled), the Value column was
    cut under the chart and the per-dimension table's headers and numbers were cut."""
    _at(window, "1024x600")
    window.controller.inspect(1, 2)
    window.docks["inspector"].raise_()
    _settle(window)
    panel = window.panel("inspector")
    window.wait_until_idle(30)
    _settle(window)
    assert dock_scrolls(window.docks["inspector"]) == []
    steps, metrics = panel.steps, panel.steps.fontMetrics()
    assert steps.viewport().height() >= 6 * steps.rowHeight(0), (steps.horizontalScrollBar().isVisible(), [steps.columnWidth(i) for i in range(3)], steps.width(), panel.splitter.sizes(), panel.splitter.width())
    value_column = steps.columnViewportPosition(2), steps.columnWidth(2)
    for row, key in enumerate(panel.STEP_KEYS):
        if key in ("v_j", "weighted_v", "output"):
            continue  # vectors: abridged, whole in the tooltip
        text = steps.item(row, 2).text()
        assert text and metrics.horizontalAdvance(text) <= value_column[1], (key, text, value_column)
    assert sum(value_column) <= steps.viewport().width() + 1, (value_column, steps.viewport().width())
    table = panel.dimensions
    header = table.horizontalHeader()
    for column in range(table.columnCount()):
        label = table.horizontalHeaderItem(column).text()
        assert header.fontMetrics().horizontalAdvance(label) < table.columnWidth(column), (label, table.columnWidth(column))
    assert sum(table.columnWidth(c) for c in range(table.columnCount())) <= table.viewport().width() + 1, ([table.columnWidth(c) for c in range(4)], table.width(), panel.splitter.sizes(), table.horizontalScrollBar().isVisible(), table.verticalScrollBar().isVisible())
