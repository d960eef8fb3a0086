"""Lessons → The paper's diagram (seed 001 item 1.9): “Attention Is All You Need”'s figure 2, drawn
from the app's own stages.

Every box is one of the step-through player's stages (app/panels/player_panel.STAGE_KEYS), placed
where the paper draws it: Multi-Head Attention on the left (inputs, embedding + positions, the
linear maps, concat, the output linear), Scaled Dot-Product Attention on the right (MatMul, Scale,
Mask, SoftMax, MatMul with V). Each box says the paper's name and the player's; clicking it asks
for that stage (``stageRequested(index into STAGE_KEYS)``): the window opens the player there. The
player's current stage is outlined. Drawing only: no numbers are computed here.
"""
from __future__ import annotations

import html

from PySide6.QtCore import QCoreApplication, QPointF, QRectF, Qt, Signal
from PySide6.QtGui import QBrush, QColor, QFont, QPainter, QPen
from PySide6.QtWidgets import (
    QDialog, QGraphicsItem, QGraphicsRectItem, QGraphicsScene, QGraphicsTextItem, QGraphicsView, QLabel, QVBoxLayout,
    QWidget,
)

from .panels.player_panel import STAGE_KEYS

BOX_W, BOX_H = 250, 54
FILL = {"mha": "#fde9c9", "sdpa": "#dbe8f7", "io": "#e8e8e8"}
CURRENT_PEN = QPen(QColor("#d62728"), 3)
PLAIN_PEN = QPen(QColor("#444444"), 1.2)


def QT_TRANSLATE_NOOP(context: str, text: str) -> str:  # noqa: N802 - the marker lupdate looks for
    return text


# (the paper's label, the player's stage, column, row counted from the bottom, colour)
BOXES: tuple[tuple[str, str, int, int, str], ...] = (
    (QT_TRANSLATE_NOOP("Diagram", "Inputs"), "tokens", 0, 0, "io"),
    (QT_TRANSLATE_NOOP("Diagram", "Input Embedding + Positional Encoding"), "embeddings", 0, 1, "io"),
    (QT_TRANSLATE_NOOP("Diagram", "Linear × h: W_Q, W_K, W_V"), "qkv", 0, 2, "mha"),
    (QT_TRANSLATE_NOOP("Diagram", "MatMul: Q·Kᵀ"), "scores", 1, 1, "sdpa"),
    (QT_TRANSLATE_NOOP("Diagram", "Scale: ÷√d_k"), "scaled", 1, 2, "sdpa"),
    (QT_TRANSLATE_NOOP("Diagram", "Mask (opt.)"), "scaled", 1, 3, "sdpa"),
    (QT_TRANSLATE_NOOP("Diagram", "SoftMax"), "weights", 1, 4, "sdpa"),
    (QT_TRANSLATE_NOOP("Diagram", "MatMul: weights · V"), "weighted_sum", 1, 5, "sdpa"),
    (QT_TRANSLATE_NOOP("Diagram", "Concat (h heads)"), "concat", 0, 6, "mha"),
    (QT_TRANSLATE_NOOP("Diagram", "Linear: W_O"), "concat", 0, 7, "mha"),
    (QT_TRANSLATE_NOOP("Diagram", "Output: new vectors"), "new_vectors", 0, 8, "io"),
)
ROWS = 1 + max(row for *_rest, row, _colour in BOXES)


def box_position(column: int, row: int) -> QPointF:
    """Top-left of a box: the paper draws bottom-up, so row 0 is at the bottom."""
    return QPointF(20 + column * (BOX_W + 90), 40 + (ROWS - 1 - row) * (BOX_H + 22))


class StageBox(QGraphicsRectItem):
    """A clickable box: the paper's label over the player's stage name."""

    def __init__(self, label: str, stage_name: str, key: str, colour: str, on_click) -> None:
        super().__init__(0, 0, BOX_W, BOX_H)
        self.key, self._on_click = key, on_click
        self.setBrush(QBrush(QColor(FILL[colour])))
        self.setPen(PLAIN_PEN)
        self.setCursor(Qt.CursorShape.PointingHandCursor)
        self.setFlag(QGraphicsItem.GraphicsItemFlag.ItemIsSelectable, False)
        self.setToolTip(stage_name)
        self.text = QGraphicsTextItem(self)  # kept: the wrapper must live as long as the box
        self.text.setTextWidth(BOX_W - 8)
        self.text.setDefaultTextColor(QColor("#111111"))
        self.text.setHtml(f"<div align='center'><b>{html.escape(label)}</b><br/>"
                          f"<span style='color:#555'>{html.escape(stage_name)}</span></div>")
        self.text.setPos(4, 3)

    def mousePressEvent(self, event) -> None:  # noqa: N802 - Qt name
        self._on_click(self.key)
        event.accept()


class DiagramDialog(QDialog):
    """The figure; ``stageRequested(index)`` when a box is clicked."""

    stageRequested = Signal(int)

    def __init__(self, stage_names, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("diagramDialog")
        self.setWindowTitle(self.tr("The paper's diagram, from the player's stages"))
        layout = QVBoxLayout(self)
        caption = QLabel(self.tr(
            "Figure 2 of “Attention Is All You Need”: Multi-Head Attention (left) runs Scaled Dot-Product Attention "
            "(right) once per head. Each box is one of the step-through player's stages; click a box to open the "
            "player there. The outlined box is the stage the player shows."))
        caption.setWordWrap(True)
        layout.addWidget(caption)
        self.scene = QGraphicsScene(self)
        self.view = QGraphicsView(self.scene)
        self.view.setObjectName("diagramView")
        self.view.setRenderHint(QPainter.RenderHint.Antialiasing)
        layout.addWidget(self.view, 1)
        names = dict(zip(STAGE_KEYS, stage_names))
        self.boxes: list[StageBox] = []
        for label, key, column, row, colour in BOXES:
            box = StageBox(QCoreApplication.translate("Diagram", label), names[key], key, colour, self._clicked)
            box.setPos(box_position(column, row))
            self.scene.addItem(box)
            self.boxes.append(box)
        self._draw_frames_and_arrows()
        self.current = None
        self.resize(720, 860)

    def _box(self, key: str, column: int) -> StageBox:
        return next(box for box, spec in zip(self.boxes, BOXES) if spec[1] == key and spec[2] == column)

    def _arrow(self, start: QPointF, end: QPointF) -> None:
        pen = QPen(QColor("#444444"), 1.5)
        self.scene.addLine(start.x(), start.y(), end.x(), end.y(), pen)
        direction = end - start
        length = max((direction.x() ** 2 + direction.y() ** 2) ** 0.5, 1e-9)
        ux, uy = direction.x() / length, direction.y() / length
        for side in (1, -1):  # the arrowhead's two strokes
            tip = QPointF(end.x() - 9 * ux + side * 5 * uy, end.y() - 9 * uy - side * 5 * ux)
            self.scene.addLine(end.x(), end.y(), tip.x(), tip.y(), pen)

    def _draw_frames_and_arrows(self) -> None:
        # the right column's frame: one head's Scaled Dot-Product Attention (× h)
        sdpa = [box for box, spec in zip(self.boxes, BOXES) if spec[2] == 1]
        top = min(box.pos().y() for box in sdpa) - 30
        bottom = max(box.pos().y() for box in sdpa) + BOX_H + 12
        left = sdpa[0].pos().x() - 12
        frame = self.scene.addRect(QRectF(left, top, BOX_W + 24, bottom - top),
                                   QPen(QColor("#1f77b4"), 1.5, Qt.PenStyle.DashLine))
        frame.setZValue(-1)
        title = self.scene.addText(self.tr("Scaled Dot-Product Attention (× h heads)"))
        title.setPos(left + 4, top + 2)
        mha = self.scene.addText(self.tr("Multi-Head Attention"))
        mha.setPos(20, box_position(0, 2).y() - 26)
        column0 = sorted((box for box, spec in zip(self.boxes, BOXES) if spec[2] == 0), key=lambda b: -b.pos().y())
        for lower, upper in zip(column0, column0[1:]):
            if lower.key == "qkv":  # the heads run the right column in between
                continue
            self._arrow(QPointF(lower.pos().x() + BOX_W / 2, lower.pos().y()),
                        QPointF(upper.pos().x() + BOX_W / 2, upper.pos().y() + BOX_H))
        for lower, upper in zip(sorted(sdpa, key=lambda b: -b.pos().y()), sorted(sdpa, key=lambda b: -b.pos().y())[1:]):
            self._arrow(QPointF(lower.pos().x() + BOX_W / 2, lower.pos().y()),
                        QPointF(upper.pos().x() + BOX_W / 2, upper.pos().y() + BOX_H))
        qkv, scores = self._box("qkv", 0), self._box("scores", 1)
        self._arrow(QPointF(qkv.pos().x() + BOX_W, qkv.pos().y() + BOX_H / 2),
                    QPointF(scores.pos().x(), scores.pos().y() + BOX_H / 2))
        mixed, concat = self._box("weighted_sum", 1), self._box("concat", 0)
        self._arrow(QPointF(mixed.pos().x(), mixed.pos().y() + BOX_H / 2),
                    QPointF(concat.pos().x() + BOX_W, concat.pos().y() + BOX_H / 2))
        # V skips Scale, Mask and SoftMax: it enters at the second MatMul
        self._arrow(QPointF(qkv.pos().x() + BOX_W * 0.85, qkv.pos().y()),
                    QPointF(mixed.pos().x() - 12, mixed.pos().y() + BOX_H * 0.8))
        qk_label = self.scene.addText("Q, K")
        qk_label.setPos(qkv.pos().x() + BOX_W + 20, qkv.pos().y() + BOX_H / 2 + 4)
        v_label = self.scene.addText("V")
        v_label.setPos(qkv.pos().x() + BOX_W * 0.85 + 8, qkv.pos().y() - 60)
        font = QFont()
        font.setBold(True)
        for item in (title, mha, qk_label, v_label):
            item.setFont(font)

    def _clicked(self, key: str) -> None:
        self.stageRequested.emit(STAGE_KEYS.index(key))

    def set_current(self, index: int) -> None:
        """Outline the boxes of the player's stage ``index`` (others plain)."""
        self.current = index
        key = STAGE_KEYS[index] if 0 <= index < len(STAGE_KEYS) else None
        for box in self.boxes:
            box.setPen(CURRENT_PEN if box.key == key else PLAIN_PEN)
