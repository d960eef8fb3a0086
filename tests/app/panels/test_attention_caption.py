"""The heatmap keeps its rows under a long preset caption: the caption scrolls in a box that leaves the
heatmap room for every row's label (at 1366 × 768 a real-model preset's caption left a 60-pixel strip
and 5 of SmolLM2's 16 row labels)."""
from __future__ import annotations

from PySide6.QtWidgets import QApplication

from engine import AttentionConfig

SIXTEEN = "The animal didn't cross the street because it was too tired . It was the end"
LONG = " ".join(["A decoder reads the pronoun: its largest weight goes to a word in one layer and head."] * 9)


def _shown_rows(panel) -> int:
    ticks = panel.heatmap.heat.plot.getAxis("left")._tickLevels
    return len(ticks[0]) if ticks else 0


def test_a_long_caption_scrolls_and_every_row_keeps_its_label(standalone_panel):
    from app.jobs.snapshot import take_snapshot
    from app.panels.attention_panel import AttentionPanel

    controller, panel = standalone_panel(AttentionPanel, 630, 224)  # the heatmap dock at 1366 × 768
    snapshot = take_snapshot(AttentionConfig(text=SIXTEEN, d_model=16, heads=2))
    assert snapshot.result.n == 16
    controller.snapshot = snapshot
    panel.refresh()
    panel.show_preset_caption(LONG)
    for _ in range(5):
        QApplication.processEvents()
    assert panel.caption_beside()  # two lines over it would take the rows' room: beside it, scrolling
    assert panel.preset_scroll.verticalScrollBar().maximum() > 0
    assert panel.heatmap.height() >= panel.height() - 70
    assert panel.preset_scroll.geometry().left() >= panel.heatmap.geometry().right()
    panel.resize(630, 300)  # room for the rows and two lines over them: over the heatmap, scrolling
    for _ in range(5):
        QApplication.processEvents()
    line = panel.preset_caption.fontMetrics().lineSpacing()
    assert not panel.caption_beside() and panel.preset_scroll.height() >= 2 * line
    assert panel.preset_scroll.verticalScrollBar().maximum() > 0
    assert _shown_rows(panel) == 16
    panel.resize(630, 700)  # room for all of it: no scrolling
    for _ in range(5):
        QApplication.processEvents()
    assert panel.preset_scroll.verticalScrollBar().maximum() == 0
    assert panel.preset_scroll.height() >= panel.preset_caption.heightForWidth(panel.preset_scroll.viewport().width())
    panel.show_preset_caption("")
    assert not panel.preset_scroll.isVisibleTo(panel)
