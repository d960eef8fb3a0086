"""Tokens strip: the tokens as chips; clicking one makes it the focused query token."""
from __future__ import annotations

from PySide6.QtCore import QSignalBlocker, QSize, Qt
from PySide6.QtWidgets import QAbstractItemView, QListView, QListWidget, QListWidgetItem, QVBoxLayout, QWidget

from ..controller import Controller
from ..text import fill

CHIP_STYLE = """
QListWidget { background: palette(base); border: none; }
QListWidget::item { border: 1px solid #9aa5b1; border-radius: 8px; padding: 3px 7px; margin: 2px; }
QListWidget::item:selected { background: #ff2d55; color: white; border-color: #ff2d55; }
QListWidget::item:hover { border-color: #333; }
"""


class TokensPanel(QWidget):
    """One chip per token, in order; the focused query token is selected."""

    def __init__(self, controller: Controller, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("tokensPanel")
        self.controller = controller
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        self.chips = QListWidget()
        self.chips.setObjectName("tokenChips")
        self.chips.setViewMode(QListView.ViewMode.ListMode)
        self.chips.setFlow(QListView.Flow.LeftToRight)
        self.chips.setWrapping(True)
        self.chips.setResizeMode(QListView.ResizeMode.Adjust)
        self.chips.setUniformItemSizes(False)
        self.chips.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.chips.setStyleSheet(CHIP_STYLE)
        self.chips.setToolTip(self.tr("Click a token to make it the focused query everywhere"))
        layout.addWidget(self.chips)
        self.chips.currentRowChanged.connect(self._on_current_row_changed)
        controller.snapshotChanged.connect(self._on_snapshot_changed)
        controller.selectionChanged.connect(self._on_selection_changed)

    def _on_snapshot_changed(self, snapshot) -> None:
        tokens = snapshot.result.tokens
        with QSignalBlocker(self.chips):
            self.chips.clear()
            for index, token in enumerate(tokens):
                item = QListWidgetItem(token.text)
                item.setToolTip(fill(self.tr("#%1 “%2”, characters %3–%4"), index, token.text, token.start, token.end))
                self.chips.addItem(item)
            self.chips.setCurrentRow(self.controller.focus)

    def _on_selection_changed(self) -> None:
        if self.chips.currentRow() != self.controller.focus:
            with QSignalBlocker(self.chips):
                self.chips.setCurrentRow(self.controller.focus)

    def _on_current_row_changed(self, row: int) -> None:
        if row >= 0:
            self.controller.select(focus=row)

    def click_token(self, index: int) -> None:
        """Focus token ``index`` as a click on its chip would."""
        self.chips.setCurrentRow(index)
