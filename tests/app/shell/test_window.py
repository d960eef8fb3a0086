"""The explorer window, offscreen: live updates, focus, errors, stale results, exports, sessions."""
from __future__ import annotations

import json
import xml.etree.ElementTree as ET

import numpy as np
import pytest
from PySide6.QtCore import QEvent, QSettings, Qt
from PySide6.QtGui import QInputMethodEvent
from PySide6.QtWidgets import QApplication

from tests import ROOT
from engine import AttentionConfig, compute

pytestmark = pytest.mark.slow  # whole windows and processes started


def type_text(widget, text: str) -> None:
    """Replace the editor's text the way an input method commits it (non-ASCII safe)."""
    widget.setFocus()
    widget.selectAll()
    event = QInputMethodEvent("", [])
    event.setCommitString(text)
    QApplication.sendEvent(widget, event)


def shown_weights(window) -> np.ndarray:
    return window.panels["attention"].heatmap.matrix()


def test_typing_updates_heatmap_to_engine_weights(window):
    type_text(window.panels["input"].text, "小明喜欢苹果")
    assert window.wait_until_idle()
    expected = compute(AttentionConfig(text="小明喜欢苹果"))
    assert window.controller.snapshot.result.token_texts == ["小明", "喜欢", "苹果"]
    np.testing.assert_allclose(shown_weights(window), expected.weights[0], rtol=0, atol=1e-7)
    window.controller.select(head=2)
    np.testing.assert_allclose(shown_weights(window), expected.weights[2], rtol=0, atol=1e-7)
    assert window.panels["tokens"].count() == 3


def test_stage_selector_shows_scores_and_masked_cells(window):
    window.controller.set_config(AttentionConfig(text="我 爱 北 京", tokenizer="whitespace", mask="causal"))
    assert window.wait_until_idle()
    window.controller.select(stage="scaled")
    shown = shown_weights(window)
    result = window.controller.snapshot.result
    assert np.isneginf(shown[0, 1]) and np.isneginf(shown[2, 3])
    np.testing.assert_array_equal(shown, result.scaled[0])
    image = window.panels["attention"].heatmap.image.image
    assert np.isnan(image[0, 3]), "masked cells must be drawn as masked, not as a colour"
    window.controller.select(stage="scores")
    np.testing.assert_array_equal(shown_weights(window), result.scores[0])


def test_changing_heads_changes_head_grid(window):
    grid = window.panels["heads"]
    assert len(grid.images) == 4
    window.panels["input"].heads.setValue(8)
    assert window.wait_until_idle()
    assert len(grid.images) == 8
    result = window.controller.snapshot.result
    np.testing.assert_allclose(grid.image_data(7), result.weights[7], atol=1e-7)


def test_clicking_a_token_moves_the_focus(window, qtbot):
    type_text(window.panels["input"].text, "I ate the cake and it was delicious.")
    assert window.wait_until_idle()
    tokens = window.panels["tokens"]
    rect = tokens.visual_rect(5)
    assert rect.isValid() and rect.width() > 0
    qtbot.mouseClick(tokens.chips.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    assert window.controller.focus == 5
    heatmap = window.panels["attention"].heatmap
    assert heatmap.heat.highlight.isVisible()
    assert heatmap.heat.highlight.rect().center().y() == pytest.approx(5)
    assert window.wait_until_idle()
    QApplication.processEvents()
    assert "query token #5 “it”" in window.panels["arithmetic"].view.toPlainText()


def test_invalid_heads_shows_message_and_keeps_picture(window):
    before = shown_weights(window).copy()
    panel = window.panels["input"]
    panel.d_model.setValue(10)  # 4 heads do not divide 10
    QApplication.processEvents()
    assert panel.messages["heads"].isVisibleTo(panel)
    assert "d_model (10) must be divisible by heads (4)" in panel.messages["heads"].text()
    assert window.wait_until_idle()
    np.testing.assert_array_equal(shown_weights(window), before)
    assert window.controller.config.d_model == 64
    panel.heads.setValue(5)
    assert window.wait_until_idle()
    assert not panel.messages["heads"].isVisibleTo(panel)
    assert window.controller.snapshot.result.config.heads == 5


def test_rapid_edits_end_with_last_text_and_never_show_stale(window):
    shown: list[str] = []
    window.controller.snapshotChanged.connect(lambda s: shown.append(s.result.config.text))
    texts = [f"edit number {i} of the sentence" for i in range(200)]
    editor = window.panels["input"].text
    for text in texts:
        editor.setPlainText(text)  # emits textChanged, as typing does
        QApplication.processEvents()
    assert window.wait_until_idle()
    assert shown[-1] == texts[-1]
    order = [texts.index(t) for t in shown if t in texts]
    assert order == sorted(order), "an older result was shown after a newer one"
    result = window.controller.snapshot.result
    np.testing.assert_allclose(shown_weights(window), compute(result.config).weights[0], atol=1e-7)


def test_engine_exception_reaches_status_bar(window, monkeypatch):
    import app.controller

    def broken(config):
        raise RuntimeError("engine exploded on purpose")

    before = shown_weights(window).copy()
    monkeypatch.setattr(app.controller, "take_snapshot", broken)
    type_text(window.panels["input"].text, "this will fail")
    assert window.wait_until_idle()
    assert "engine exploded on purpose" in window.statusBar().currentMessage()
    np.testing.assert_array_equal(shown_weights(window), before)
    assert window.isVisible()


def test_memory_budget_error_is_a_message(window):
    window.controller.set_config(AttentionConfig(text="a b c d", memory_budget=1000))
    assert window.wait_until_idle()
    assert "memory budget" in window.statusBar().currentMessage()


def test_png_export_pixels(window, tmp_path):
    from PySide6.QtGui import QImage

    from figures.render import image_pixels

    path = tmp_path / "head.png"
    assert window.export_heatmap(str(path), 0, width=800)
    image = QImage(str(path))
    assert image.width() == 800 and image.height() > 300
    pixels = image_pixels(image)[..., :3].astype(int)
    assert pixels.std() > 20, "the image is blank"
    # the heatmap cells are viridis colours: many strongly coloured pixels
    coloured = (np.abs(pixels[..., 0] - pixels[..., 2]) > 60).sum()
    assert coloured > 0.05 * pixels.shape[0] * pixels.shape[1]
    # the label area (left margin) holds dark text pixels on white
    left = pixels[:, : 60]
    assert (left.sum(axis=2) < 200).sum() > 50, "no token labels at the left"


def test_all_heads_png_and_svg(window, tmp_path):
    from PySide6.QtGui import QImage

    png, svg = tmp_path / "all.png", tmp_path / "all.svg"
    assert window.export_heatmap(str(png), "all", width=1000)
    assert QImage(str(png)).width() == 1000
    assert window.export_heatmap(str(svg), "all", width=1000)
    root = ET.parse(svg).getroot()
    assert root.tag.endswith("svg")
    text = svg.read_text(encoding="utf-8")
    assert "head 3" in text and "小明" in text
    assert "<image" in text


def test_session_round_trip(window, tmp_path):
    config = AttentionConfig(text="苹果发布了新手机", d_model=32, heads=8, seed=7, positional="rope", mask="causal",
                             scale=False, temperature=0.5)
    window.controller.set_config(config)
    assert window.wait_until_idle()
    window.controller.select(head=3, focus=2, stage="scaled")
    before = window.controller.snapshot.result
    path = tmp_path / "s.json"
    assert window.save_session(str(path))
    saved = json.loads(path.read_text(encoding="utf-8"))
    assert saved["config"]["text"] == "苹果发布了新手机" and saved["version"] == 1
    window.controller.set_config(AttentionConfig(text="something else"))
    assert window.wait_until_idle()
    assert window.open_session(str(path))
    assert window.wait_until_idle()
    after = window.controller.snapshot.result
    assert after.config == config
    assert (window.controller.head, window.controller.focus, window.controller.stage) == (3, 2, "scaled")
    for name in ("weights", "scores", "output"):
        np.testing.assert_array_equal(getattr(after, name), getattr(before, name))


@pytest.mark.parametrize("content, words", [
    ("{not json", "JSON error"),
    ('{"format": "attention-explorer-session", "version": 99, "config": {}}', "newer"),
    ('{"format": "attention-explorer-session", "version": 1, "config": {"d_model": 10, "heads": 3}}', "divisible"),
    ('{"format": "other"}', "not an Attention Explorer session"),
])
def test_bad_session_changes_nothing(window, tmp_path, content, words):
    path = tmp_path / "bad.json"
    path.write_text(content, encoding="utf-8")
    before = window.controller.config
    assert not window.open_session(str(path))
    assert words in window.statusBar().currentMessage()
    assert window.controller.config == before


def test_settings_are_isolated(window, _isolated_settings):
    assert window.settings.fileName().startswith(_isolated_settings)
    assert QSettings().fileName().startswith(_isolated_settings)


def test_undo_restores_previous_settings(window):
    window.panels["input"].heads.setValue(2)
    assert window.wait_until_idle()
    assert window.controller.config.heads == 2
    window.undo()
    assert window.wait_until_idle()
    assert window.controller.config.heads == 4
    assert window.panels["input"].heads.value() == 4


def test_presets_reproduce_the_hand_calculation(window):
    window.apply_preset(0)
    assert window.wait_until_idle()
    window.controller.select(focus=1)
    assert window.wait_until_idle()
    np.testing.assert_allclose(shown_weights(window)[1], [0.155, 0.422, 0.422], atol=5e-4)
    text = window.panels["arithmetic"].view.toPlainText()
    assert "0.578" in text and "0.845" in text


def _long_text(n: int) -> str:
    return " ".join(f"w{i}" for i in range(n))


def _held_snapshots(monkeypatch):
    """(release, running): from now on the window's snapshot jobs wait for ``release`` (set by the
    test); ``running`` is set when one has started."""
    import threading

    import app.controller as controller_module

    release, running = threading.Event(), threading.Event()
    real = controller_module.take_snapshot

    def held(config, *rest):
        running.set()
        release.wait(60)
        return real(config, *rest)

    monkeypatch.setattr(controller_module, "take_snapshot", held)
    return release, running


def test_busy_indicator_and_cancel_keep_the_last_picture(window, qtbot, monkeypatch):
    """The job is held (an event set only after the click) instead of being made long: the busy bar
    must appear however fast or loaded the machine is (a 1,500-token job timed out a 5 s wait under
    load, and on a fast machine could finish before the bar's 300 ms)."""
    before = shown_weights(window).copy()
    shown_before = window.controller.snapshot
    release, running = _held_snapshots(monkeypatch)
    slow = AttentionConfig(text=_long_text(40), tokenizer="whitespace", d_model=512, heads=8)
    try:
        window.controller.set_config(slow, immediate=True)
        assert running.wait(30)
        qtbot.waitUntil(lambda: window.busy.isVisible() and window.cancel_button.isVisible(), timeout=30000)
        qtbot.mouseClick(window.cancel_button, Qt.MouseButton.LeftButton)
        assert not window.busy.isVisible() and not window.cancel_button.isVisible()
        assert window.controller.config == slow  # cancel never edits the user's settings
        assert window.panels["input"].text.toPlainText() == slow.text
    finally:
        release.set()  # the cancelled job finishes in the background…
    window.controller.worker.wait_until_idle(60)
    QApplication.processEvents()
    assert window.controller.snapshot is shown_before  # …and its result is dropped
    np.testing.assert_array_equal(shown_weights(window), before)


def test_closing_during_a_long_computation_is_quick(qtbot, monkeypatch):
    """Closing does not wait for the running job. The job is held (an event the test sets only
    after the close) instead of being made long, so the check needs no clock: the job is still
    running when close() returns (a 1 s wall-clock bound failed on a loaded machine)."""
    import threading
    import time

    from app.window import MainWindow

    win = MainWindow(restore=False)
    win.show()
    assert win.wait_until_idle(30)
    release, running = _held_snapshots(monkeypatch)
    win.controller.set_config(AttentionConfig(text="a held computation", tokenizer="whitespace"), immediate=True)
    assert running.wait(30)
    watchdog = threading.Timer(20, release.set)  # a close that waited for the job would end here, failed below
    watchdog.start()
    started = time.perf_counter()
    win.close()
    closed_in = time.perf_counter() - started
    still_running = not release.is_set()
    release.set()
    watchdog.cancel()
    win.deleteLater()
    assert still_running, f"close() waited for the running job ({closed_in:.1f} s)"
    thread = win.controller.worker._thread
    thread.join(60)  # the daemon thread ends with its job and emits nothing
    assert not thread.is_alive()


def test_export_data_from_the_window(window, tmp_path):
    path = tmp_path / "trace.npz"
    window.export_data(str(path))
    assert window.controller.worker.wait_until_idle(30)
    QApplication.processEvents()
    result = window.controller.snapshot.result
    with np.load(path) as data:
        np.testing.assert_array_equal(data["weights"], result.weights)
        assert list(data["tokens"]) == result.token_texts
    assert "Exported" in window.statusBar().currentMessage()


def test_twenty_exports_one_failing_show_exactly_one_message_each(window, tmp_path, qtbot):
    messages = []
    window.statusBar().messageChanged.connect(lambda text: text and messages.append(text))
    for i in range(20):
        folder = tmp_path / ("missing" if i == 7 else "")  # export 7 writes into a folder that does not exist
        window.export_data(str(folder / f"trace{i}.npz"))
        qtbot.waitUntil(lambda: len(messages) > i, timeout=30000)
        qtbot.wait(30)  # a duplicate message (a leaked listener) would arrive now
        assert len(messages) == i + 1, messages
    assert ["trace7" in m for m in messages] == [i == 7 for i in range(20)]
    assert all(m.startswith("Exported") for i, m in enumerate(messages) if i != 7)
    assert not messages[7].startswith("Exported")


def test_copy_image_to_clipboard(window):
    """The copied picture is the head and stage on screen: pixel for pixel render_image's of head 2 at
    the scores, and not head 0's nor the weights' (a copy that drew head 0 passed a size check)."""
    from figures.render import render_image

    c = window.controller
    c.set_config(AttentionConfig(text="the cat sat on the warm mat today", tokenizer="whitespace", heads=4),
                 immediate=True)
    assert window.wait_until_idle()
    c.select(head=2, stage="scores")
    QApplication.clipboard().clear()
    window.exports.copy_image()
    image = QApplication.clipboard().image()
    assert not image.isNull() and image.width() == 1200

    def same(a, b) -> bool:
        a, b = (x.convertToFormat(image.format()) for x in (a, b))
        return a.size() == b.size() and a == b

    result = c.snapshot.result
    assert same(image, render_image(result, head=2, stage="scores", width=1200))
    assert not same(image, render_image(result, head=0, stage="scores", width=1200))
    assert not same(image, render_image(result, head=2, stage="weights", width=1200))


def test_layout_and_settings_survive_a_restart(qtbot):
    from app.window import MainWindow

    first = MainWindow(restore=True)
    first.show()
    assert first.wait_until_idle(30)
    first.controller.set_config(AttentionConfig(text="我 爱 北 京", heads=8, mask="causal"), immediate=True)
    assert first.wait_until_idle(30)
    first.docks["heads"].close()
    first.close()
    second = MainWindow(restore=True)
    qtbot.addWidget(second)
    second.show()
    assert second.wait_until_idle(30)
    assert second.controller.config.text == "我 爱 北 京"
    assert (second.controller.config.heads, second.controller.config.mask) == (8, "causal")
    assert not second.docks["heads"].isVisible()
    second.reset_layout()
    QApplication.processEvents()
    assert second.docks["heads"].isVisible()
    second.controller.worker.wait_until_idle(30)
    second.close()


def test_command_line_opens_a_session(tmp_path):
    import json
    import os
    import subprocess
    import sys

    from app.session import save_session

    path = tmp_path / "s.json"
    save_session(path, AttentionConfig(text="苹果发布了新手机", heads=2))
    env = dict(os.environ, ATTENTION_EXPLORER_PROBE="startup", QT_QPA_PLATFORM="offscreen",
               XDG_CONFIG_HOME=str(tmp_path / "config"), HOME=str(tmp_path))
    main = ROOT / "main.py"
    done = subprocess.run([sys.executable, str(main), "--session", str(path)], capture_output=True, text=True,
                          env=env, timeout=60)
    assert done.returncode == 0, done.stderr
    line = [x for x in done.stdout.splitlines() if x.startswith("first-heatmap-painted")][0]
    assert json.loads(line.split(" ", 1)[1]) == "苹果发布了新手机"


def test_one_token_is_singular_in_the_status_and_the_caption(window):
    window.panels["input"].text.setPlainText("hello")
    assert window.wait_until_idle()
    assert window.controller.snapshot.result.n == 1
    assert window.tokens_label.text() == "1 token"
    assert window.panels["attention"].caption.text().startswith("1 token · d_k = ")
    plot = window.panels["attention"].heatmap.plot  # a one-token view spans under one unit:
    assert all("x0.0" not in plot.getAxis(side).labelString() for side in ("left", "bottom"))  # no SI prefix
    window.panels["input"].text.setPlainText("hello world")
    assert window.wait_until_idle()
    assert window.tokens_label.text() == "2 tokens"


@pytest.mark.parametrize("seed, temperature", [(2**32 - 1, 5000.0), (0, 1.23456), (123, 0.0004), (7, 1e-6)])
def test_seed_and_temperature_boxes_hold_every_value_the_engine_accepts(window, seed, temperature):
    panel = window.panels["input"]
    window.controller.set_config(window.controller.config.replace(seed=seed, temperature=temperature), immediate=True)
    assert window.wait_until_idle(30)
    assert panel.values()["seed"] == seed and panel.values()["temperature"] == temperature
    panel.heads.setValue(2)  # the next edit elsewhere keeps them exactly
    assert window.wait_until_idle(30)
    assert (window.controller.config.seed, window.controller.config.temperature) == (seed, temperature)


def test_every_panel_keeps_the_panel_contract(window):
    """The window and the lazy loader call only the contract: show_snapshot, show_selection, supports, lane."""
    from app.panels.base import Panel
    from engine.models.contract import Capabilities

    toy, encoder, decoder = Capabilities(configurable=True), Capabilities(), Capabilities(next_token_logits=True)

    for key in window.docks:
        panel = window.panel(key)
        assert isinstance(panel, Panel), key
        panel.show_snapshot(window.controller.snapshot)
        panel.show_selection()
        trained_only = key in {"patching", "occlusion", "saliency"}  # causal evidence needs trained weights
        assert (trained_only or window.panels[key].supports(toy)) and any(window.panels[key].supports(k)
                                                                          for k in (toy, encoder, decoder))
    assert not window.panels["compare"].supports(encoder) and window.panels["layers"].supports(encoder)
    assert window.panels["patching"].supports(decoder) and not window.panels["patching"].supports(toy)
    assert window.wait_until_idle(30)
