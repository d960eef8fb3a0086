"""The window's likeliest bugs: cancel keeps what you typed, panels never mix two models' arrays,
one focus everywhere, the debounce, stale answers, focus clamping, translated tooltips, exports."""
from __future__ import annotations

import numpy as np
import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QTextCursor
from PySide6.QtWidgets import QApplication

from engine import AttentionConfig

pytestmark = pytest.mark.slow  # a whole window a test


def _words(n: int) -> str:
    return " ".join(f"w{i}" for i in range(n))


def test_esc_stops_the_computation_and_keeps_what_you_typed(window, qtbot):
    """Paste 2000 words, type " HELLO", Esc while computing: HELLO stays in the box and the settings."""
    editor = window.panels["input"].text
    window.controller.set_config(AttentionConfig(text=_words(2000), tokenizer="whitespace", d_model=512, heads=8),
                                 immediate=True)
    assert window.wait_until_idle(120)
    shown = window.controller.snapshot
    editor.setFocus()
    editor.moveCursor(QTextCursor.MoveOperation.End)
    editor.insertPlainText(" HELLO")
    qtbot.waitUntil(lambda: not window.controller.worker.is_idle(), timeout=10000)
    qtbot.keyClick(editor, Qt.Key.Key_Escape)
    QApplication.processEvents()
    assert editor.toPlainText().endswith(" HELLO")
    assert window.controller.config.text.endswith(" HELLO")
    window.controller.worker.wait_until_idle(120)
    QApplication.processEvents()
    assert window.controller.snapshot is shown  # the cancelled answer is dropped…
    assert editor.toPlainText().endswith(" HELLO")  # …and nothing reverts the text later
    assert window.controller.config.text.endswith(" HELLO")


def _idle(window, panel=None, timeout: float = 60.0) -> None:
    import time

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        QApplication.processEvents()
        if window.controller.is_idle() and window.controller.worker.is_idle() and (panel is None or panel.is_idle()):
            QApplication.processEvents()
            if window.controller.is_idle() and window.controller.worker.is_idle():
                return
        time.sleep(0.005)
    raise AssertionError("not idle")


def test_no_panel_keeps_an_old_models_arrays(window, qtbot, require_model):
    """Scaling lab open, 10 tokens, switch to MiniLM and back: no exception, and each panel shows the
    current result or an empty state."""
    require_model("minilm")
    import sys

    errors = []
    hook, sys.excepthook = sys.excepthook, lambda *info: errors.append(info)
    try:
        window.controller.set_config(window.controller.config.replace(
            text="one two three four five six seven eight nine ten", tokenizer="whitespace"), immediate=True)
        window.docks["scaling"].show()
        window.docks["scaling"].raise_()
        lab = window.panel("scaling")
        _idle(window, lab)
        assert lab.comparison is not None and lab.comparison.entropy_scaled.shape[1] == 10
        window.model_combo.setCurrentIndex(window.model_combo.findData("minilm"))
        _idle(window, lab)
        assert window.controller.snapshot.model == "minilm" and window.controller.snapshot.result.n == 12
        window.docks["scaling"].raise_()
        _idle(window, lab)
        window.controller.select(head=1)
        _idle(window, lab)
        assert lab.comparison is None, "the lab kept the toy sentence's comparison under MiniLM"
        for bars in lab.row_bars.values():
            assert len(bars.opts.get("height") if bars.opts.get("height") is not None else []) == 0
        layers = window.panel("layers")
        assert len(layers.thumbs) == 6
        compare = window.panel("compare")
        _idle(window, compare)
        assert compare.comparison is None, "the comparison kept a toy result under MiniLM"
        window.model_combo.setCurrentIndex(window.model_combo.findData("toy"))
        _idle(window, lab)
        window.docks["layers"].raise_()
        _idle(window, lab)
        assert window.controller.snapshot.model == "toy"
        assert layers.thumbs == [], "the MiniLM panel still shows the previous sentence's heatmaps"
        assert layers.pair_weights() is None and len(layers.curve.getData()[0] or []) == 0
        window.docks["scaling"].raise_()
        _idle(window, lab)
        assert lab.comparison is not None and lab.comparison.config == window.controller.snapshot.result.config
    finally:
        sys.excepthook = hook
    assert not errors, errors


def _red_chips(tokens) -> list[int]:
    """Chips drawn in the focus colour (#ff2d55), read from the pixels of the view."""
    from PySide6.QtGui import QColor

    QApplication.processEvents()
    # what is on screen: the window's backing store (offscreen platform), which keeps pixels nobody
    # repainted, not a fresh render of the view (grab() would repaint every chip from the model)
    viewport = tokens.chips.viewport()
    window = viewport.window()
    image = window.screen().grabWindow(window.winId()).toImage()
    scale = image.width() / max(window.width(), 1)
    origin = viewport.mapTo(window, viewport.rect().topLeft())
    red = []
    for row in range(tokens.count()):
        rect = tokens.visual_rect(row).translated(origin)
        rect = type(rect)(int(rect.left() * scale), int(rect.top() * scale), int(rect.width() * scale),
                          int(rect.height() * scale))
        hits = 0
        for x in range(rect.left() + 2, rect.right() - 1, 2):
            for y in range(rect.top() + 2, rect.bottom() - 1, 2):
                color = QColor(image.pixel(x, y))
                if abs(color.red() - 0xff) < 20 and abs(color.green() - 0x2d) < 30 and abs(color.blue() - 0x55) < 30:
                    hits += 1
        if hits >= 4:
            red.append(row)
    return red


def test_one_focused_chip_whatever_moved_the_focus(window, qtbot):
    """Two heatmap cells, Ctrl+Down twice, a comparison-table row: exactly one chip is drawn focused."""
    from PySide6.QtGui import QKeySequence

    tokens = window.panels["tokens"]
    window.controller.set_config(window.controller.config.replace(
        text="The animal didn't cross the street because it was too tired", tokenizer="whitespace"), immediate=True)
    assert window.wait_until_idle()
    window.resize(1366, 768)
    QApplication.processEvents()
    assert _red_chips(tokens) == [window.controller.focus]
    heatmap = window.panels["attention"].heatmap
    for query, key in ((2, 1), (5, 3)):
        heatmap.cellClicked.emit(query, key)
        QApplication.processEvents()
    assert window.controller.focus == 5
    assert _red_chips(tokens) == [5], "a chip focused earlier is still drawn focused"
    down = next(a for a in window.findChildren(type(window.undo_action)) if a.shortcut() == QKeySequence("Ctrl+Down"))
    down.trigger()
    down.trigger()
    assert window.controller.focus == 7
    assert _red_chips(tokens) == [7]
    window.controller.select(focus=1)  # what a comparison-table row does
    QApplication.processEvents()
    assert _red_chips(tokens) == [1]


DAMAGED_STATES = {
    "seed 2**40": ('{"text": "hi", "seed": %d}' % 2**40, '{"head": 0}'),
    "nested junk": ("[" * 100_000 + "]" * 100_000, "{}"),
    "nested view": ('{"text": "hi"}', '{"head": ' + "[" * 50_000 + "]" * 50_000 + "}"),
    "huge string": ('{"text": "hi", "tokenizer": "' + "x" * 3_000_000 + '"}', "{}"),
    "over the size cap": ('{"text": "' + "x" * 17_000_000 + '"}', "{}"),
    "a 5000-digit number": ('{"text": "hi", "d_model": ' + "9" * 5000 + "}", "{}"),
    "memory budget": ('{"text": "hi", "memory_budget": 1, "heads": 1.5}', "{}"),
    "unknown model": ('{"text": "hi"}', '{"model": "gpt-9"}'),
    "not an object": ('"just text"', "{}"),
}


@pytest.mark.parametrize("name", list(DAMAGED_STATES))
def test_a_saved_state_that_fails_is_set_aside(qtbot, name):
    """A saved state that breaks the start: the app starts with the defaults, the bad state leaves
    QSettings' live keys, a message says so after the first picture, and the next start is clean."""
    from PySide6.QtCore import QSettings

    from app.window import MainWindow

    config_text, view_text = DAMAGED_STATES[name]
    settings = QSettings("AttentionExplorer", "AttentionExplorer")
    settings.setValue("lastConfig", config_text)
    settings.setValue("lastView", view_text)
    settings.sync()
    win = MainWindow()
    qtbot.addWidget(win)
    win.show()
    try:
        assert win.wait_until_idle(30)
        assert win.controller.config == AttentionConfig()
        assert "set aside" in win.statusBar().currentMessage()
        settings.sync()
        assert settings.value("lastConfig") is None and settings.value("lastView") is None
    finally:
        win.controller.worker.wait_until_idle(30)
        win.close()
    settings.sync()
    again = MainWindow()  # the state saved at that exit is the defaults: a clean start
    qtbot.addWidget(again)
    try:
        assert again.startup_notice == ""
    finally:
        again.controller.worker.wait_until_idle(30)
        again.close()


def test_a_good_saved_state_is_restored(qtbot):
    from PySide6.QtCore import QSettings

    from app.window import MainWindow

    settings = QSettings("AttentionExplorer", "AttentionExplorer")
    settings.setValue("lastConfig", '{"text": "a b c d", "seed": %d, "heads": 2}' % (2**32 - 1))
    settings.setValue("lastView", '{"head": 1, "focus": 2, "stage": "scores"}')
    settings.sync()
    win = MainWindow()
    qtbot.addWidget(win)
    try:
        assert win.wait_until_idle(30)
        assert win.controller.config.seed == 2**32 - 1 and win.controller.config.text == "a b c d"
        assert (win.controller.head, win.controller.focus, win.controller.stage) == (1, 2, "scores")
        assert win.startup_notice == ""
    finally:
        win.controller.worker.wait_until_idle(30)
        win.close()


# ---------------------------------------------------------------------- the window's likeliest bugs
def test_a_burst_of_edits_computes_far_fewer_times_than_edits(window, monkeypatch):
    """Debounce removed → every edit computes. The debounce is stretched to 10 s for the burst, so
    that no pause between two edits can reach it however loaded the machine (at 40 ms a
    busy machine's pauses counted as typing pauses): at most the leading edge and the trailing one
    are asked of the worker."""
    import time

    import app.controller as controller_module

    runs, submitted = [], []
    real = controller_module.take_snapshot

    def counted(config):
        runs.append(config.text)
        return real(config)

    lane = window.controller._compute
    real_submit = lane.submit
    monkeypatch.setattr(lane, "submit", lambda *job: (submitted.append(job), real_submit(*job))[1])
    monkeypatch.setattr(controller_module, "take_snapshot", counted)
    monkeypatch.setattr(controller_module, "FAST_COMPUTE_S", 0.0)  # the debounce applies however fast the engine is
    monkeypatch.setattr(controller_module, "DEBOUNCE_MS", 10_000)
    for i in range(50):
        window.controller.set_config(window.controller.config.replace(text=f"edit number {i}"))
        deadline = time.monotonic() + 0.01  # 10 ms between keystrokes: events are processed meanwhile
        while time.monotonic() < deadline:
            QApplication.processEvents()
    assert len(submitted) <= 1, f"{len(submitted)} computations asked for during a burst of 50 edits"
    window.controller._debounce.start(40)  # the pause after the burst
    assert window.wait_until_idle(30)
    assert window.controller.snapshot.result.config.text == "edit number 49"
    assert 1 <= len(submitted) <= 2 and 1 <= len(runs) <= 2, (len(submitted), len(runs))


def test_a_stale_answer_never_reaches_the_heatmap(window, monkeypatch):
    """A slow job then a fast one through the controller's compute lane: the heatmap's own set_matrix
    never receives the slow (stale) result."""
    import threading

    from app.jobs.snapshot import take_snapshot

    heatmap = window.panels["attention"].heatmap
    painted = []
    real_set = heatmap.set_matrix

    def recording(matrix, *args, **kwargs):
        painted.append(np.asarray(matrix).shape)
        return real_set(matrix, *args, **kwargs)

    monkeypatch.setattr(heatmap, "set_matrix", recording)
    started, release = threading.Event(), threading.Event()
    stale = AttentionConfig(text="a b", tokenizer="whitespace")
    fresh = AttentionConfig(text="one two three four five", tokenizer="whitespace")

    def slow():
        started.set()
        release.wait(10)
        return take_snapshot(stale)

    lane = window.controller._compute
    lane.submit(slow)
    assert started.wait(10)
    lane.submit(take_snapshot, fresh)
    release.set()
    window.controller.worker.wait_until_idle(30)
    for _ in range(20):
        QApplication.processEvents()
    assert painted and painted[-1] == (5, 5)
    assert (2, 2) not in painted, "the stale result was painted"
    assert window.controller.snapshot.result.config == fresh


def test_focus_is_clamped_when_a_shorter_sentence_arrives(window):
    window.controller.set_config(AttentionConfig(text="a b c d e f g h i j", tokenizer="whitespace"), immediate=True)
    assert window.wait_until_idle()
    window.controller.select(focus=8)
    window.controller.set_config(AttentionConfig(text="x y z", tokenizer="whitespace"), immediate=True)
    assert window.wait_until_idle()
    QApplication.processEvents()
    assert window.controller.focus == 2
    heat = window.panels["attention"].heatmap.heat
    assert heat.highlight.isVisible() and heat.highlight.rect().center().y() == 2.5 or \
        abs(heat.highlight.rect().center().y() - 2) < 0.6
    assert window.panels["tokens"].chips.currentIndex().row() == 2
    assert "“z”" in window.panels["arithmetic"].view.toPlainText()


def test_a_token_chips_tooltip_is_chinese_in_the_chinese_window(window, qtbot):
    """Read the model/view item's ToolTipRole (not a list widget)."""
    from PySide6.QtWidgets import QApplication as App

    import app.i18n as i18n

    chinese = window.switch_language(i18n.CHINESE)
    try:
        assert chinese.wait_until_idle(30)
        model = chinese.panels["tokens"].model
        assert model.rowCount() > 0
        tip = model.data(model.index(0), Qt.ItemDataRole.ToolTipRole)
        assert "字符" in tip and "characters" not in tip
    finally:
        chinese.close()
        i18n.install_translator(App.instance(), i18n.ENGLISH)


def _session_file(tmp_path, text: str):
    import json

    path = tmp_path / "big.json"
    path.write_text(json.dumps({"format": "attention-explorer-session", "version": 1, "config": {"text": text}}))
    return str(path)


def test_a_session_text_too_long_for_the_window_is_refused(window, tmp_path):
    """A huge text would block the window: the text box would lay out megabytes on the GUI thread;
    refused with a message instead."""
    before = window.panels["input"].text.toPlainText()
    assert not window.open_session(_session_file(tmp_path, "word " * 60_000))
    assert window.panels["input"].text.toPlainText() == before
    assert "200000" in window.statusBar().currentMessage() or "200,000" in window.statusBar().currentMessage()


def test_a_session_opened_from_the_menu_is_read_in_the_worker(window, tmp_path, monkeypatch):
    import threading

    import app.session_models as window_module  # where the session job reads the file

    threads = []
    real = window_module.load_session

    def recording(path):
        threads.append(threading.current_thread().name)
        return real(path)

    monkeypatch.setattr(window_module, "load_session", recording)
    window.open_session_in_background(_session_file(tmp_path, "opened in the background"))
    assert window.wait_until_idle(30)
    window.controller.worker.wait_until_idle(30)
    assert window.wait_until_idle(30)
    assert threads == ["attention-worker"]
    assert window.controller.config.text == "opened in the background"
    assert window.panels["input"].text.toPlainText() == "opened in the background"


def test_export_heatmap_draws_the_chosen_head_at_the_stage_on_screen(window, tmp_path, monkeypatch):
    """A one-head PNG of head 2 at the scores stage has head 2's scores in its cells: each
    cell's pixel, read back through the colour map, follows the matrix (not head 0's, not the weights)."""
    import pyqtgraph as pg
    from PySide6.QtCore import QPointF
    from PySide6.QtGui import QColor, QImage

    import figures.render as render
    from app.heatmap import DIVERGING_MAP

    window.controller.set_config(AttentionConfig(text="the cat sat on the warm mat today", tokenizer="whitespace",
                                                 heads=4), immediate=True)
    assert window.wait_until_idle()
    window.controller.select(head=2, stage="scores")
    places = {}
    real_show = render._show_offscreen

    def show_and_measure(widget, plots):
        real_show(widget, plots)
        heat = plots[0]
        box = widget.ci.sceneBoundingRect()
        n = window.controller.snapshot.result.n
        places["cells"] = [[heat.plot.vb.mapViewToScene(QPointF(c + 0.2, r + 0.2)) - box.topLeft() for c in range(n)]
                           for r in range(n)]
        places["width"] = box.width()

    monkeypatch.setattr(render, "_show_offscreen", show_and_measure)
    path = tmp_path / "head2.png"
    assert window.export_heatmap(str(path), 2, width=800)
    image = QImage(str(path))
    scale = image.width() / places["width"]
    lut = pg.colormap.get(DIVERGING_MAP).getLookupTable(0.0, 1.0, 256, alpha=False).astype(float)

    def value(point):
        color = QColor(image.pixel(int(point.x() * scale), int(point.y() * scale)))
        rgb = np.array([color.red(), color.green(), color.blue()], dtype=float)
        return int(np.argmin(((lut - rgb) ** 2).sum(axis=1)))

    shown = np.array([[value(p) for p in row] for row in places["cells"]], dtype=float)
    result = window.controller.snapshot.result
    fits = {name: np.corrcoef(shown.ravel(), matrix.ravel())[0, 1]
            for name, matrix in (("scores 2", result.scores[2]), ("scores 0", result.scores[0]),
                                 ("weights 2", result.weights[2]))}
    assert fits["scores 2"] > 0.98, fits
    assert fits["scores 0"] < 0.9 and fits["weights 2"] < fits["scores 2"] - 0.02, fits


def test_a_view_states_focus_waits_for_its_own_result(window, qtbot):
    """apply_view_state (a preset, a session) names a head and focus of ITS text: while the old,
    shorter result is still on screen (its panels may still update) the selection stays inside it,
    and the state's own head and focus are taken when its result arrives."""
    from app.view_state import ViewState

    c = window.controller
    c.set_config(AttentionConfig(text="a b c", tokenizer="whitespace", d_model=16, heads=2), immediate=True)
    assert window.wait_until_idle(30)
    long_text = " ".join(f"w{i}" for i in range(12))
    state = ViewState(AttentionConfig(text=long_text, tokenizer="whitespace", d_model=32, heads=4), head=3, focus=9,
                      stage="weights")
    c.apply_view_state(state)
    assert c.snapshot.result.n == 3 and (c.head, c.focus) == (1, 2)  # within the result on screen
    for panel in window.panels.values():  # every panel redrawn now with the old result: no IndexError
        if hasattr(panel, "show_snapshot"):
            panel.show_snapshot(c.snapshot)
    assert window.wait_until_idle(30)
    assert c.snapshot.result.n == 12 and (c.head, c.focus) == (3, 9)
