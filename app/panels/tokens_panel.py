"""Tokens strip: the tokens as chips; clicking one makes it the focused query token.

A QListView over a small list model: the view asks only for the chips it draws, so a 2,000-token
sentence costs the GUI thread a model reset, not 2,000 widgets.
"""
from __future__ import annotations

from PySide6.QtCore import QAbstractListModel, QModelIndex, Qt
from PySide6.QtWidgets import QAbstractItemView, QListView, QVBoxLayout, QWidget

from ..controller import Controller
from ..text import fill, plain_tip, shown_piece
from .base import Panel

CHIP_STYLE = """
QListView { background: palette(base); border: none; }
QListView::item { border: 1px solid #9aa5b1; border-radius: 8px; padding: 3px 7px; margin: 2px; }
QListView::item:selected { background: #ff2d55; color: white; border-color: #ff2d55; }
QListView::item:hover { border-color: #333; }
"""


class TokensModel(QAbstractListModel):
    """The tokens of the snapshot on screen, one row each."""

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.tokens: tuple = ()
        self.tooltip = "#%1 “%2”, characters %3–%4"

    def set_tokens(self, tokens) -> None:
        self.beginResetModel()
        self.tokens = tuple(tokens)
        self.endResetModel()

    def rowCount(self, parent=QModelIndex()) -> int:  # noqa: N802 - Qt name
        return 0 if parent.isValid() else len(self.tokens)

    def data(self, index, role=Qt.ItemDataRole.DisplayRole):
        if not index.isValid() or not 0 <= index.row() < len(self.tokens):
            return None
        token = self.tokens[index.row()]
        if role == Qt.ItemDataRole.DisplayRole:
            return shown_piece(token.text)
        if role == Qt.ItemDataRole.ToolTipRole:
            return plain_tip(fill(self.tooltip, index.row(), token.text, token.start, token.end))
        return None


class TokensPanel(Panel):
    """One chip per token, in order; the focused query token is selected."""

    def __init__(self, controller: Controller, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("tokensPanel")
        self.controller = controller
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        self._showing = False  # True while the panel itself moves the selection (no echo to the controller)
        self.model = TokensModel(self)
        self.model.tooltip = self.tr("#%1 “%2”, characters %3–%4")
        self.chips = QListView()
        self.chips.setObjectName("tokenChips")
        self.chips.setModel(self.model)
        self.chips.setViewMode(QListView.ViewMode.ListMode)
        self.chips.setFlow(QListView.Flow.LeftToRight)
        self.chips.setWrapping(True)
        self.chips.setResizeMode(QListView.ResizeMode.Adjust)
        self.chips.setLayoutMode(QListView.LayoutMode.Batched)  # lays out long lists in steps
        self.chips.setBatchSize(200)
        self.chips.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.chips.setStyleSheet(CHIP_STYLE)
        self.chips.setToolTip(self.tr("Click a token to make it the focused query everywhere"))
        layout.addWidget(self.chips)
        self.chips.selectionModel().currentRowChanged.connect(self._on_current_row_changed)
        self.set_model_connected()

    def count(self) -> int:
        return self.model.rowCount()

    def rows_height(self, most_rows: int = 4) -> int:
        """Pixels of panel that show every row of chips, up to ``most_rows`` (the list scrolls past
        them): the window gives the chips' dock this much (a sixteen-token sentence's third
        row was cut under an empty input column)."""
        count = self.count()
        if count == 0:
            return 0
        first = self.chips.visualRect(self.model.index(0))
        last = self.chips.visualRect(self.model.index(count - 1))
        if not first.isValid() or not last.isValid():
            return 0
        row = max(first.height(), 1) + self.chips.spacing()
        content = min(last.bottom() - first.top() + 1, most_rows * row)
        margins = self.layout().contentsMargins()
        return content + margins.top() + margins.bottom() + 2 * self.chips.frameWidth() + 6

    def visual_rect(self, index: int):
        """Where chip ``index`` is drawn, in the view's viewport (tests click there)."""
        return self.chips.visualRect(self.model.index(index))

    def show_snapshot(self, snapshot) -> None:
        self.model.set_tokens(snapshot.result.tokens)
        self._select(self.controller.focus)

    def _select(self, row: int) -> None:
        """Make chip ``row`` the one selected chip. The selection model's signals are *not* blocked:
        the view repaints the chips they name (blocked, the old chip stayed red on screen);
        ``_showing`` keeps the change from going back to the controller."""
        index = self.model.index(row)
        self._showing = True
        try:
            self.chips.selectionModel().setCurrentIndex(index, self.chips.selectionModel().SelectionFlag.ClearAndSelect)
        finally:
            self._showing = False
        self.chips.scrollTo(index)

    def show_selection(self) -> None:
        if self.chips.currentIndex().row() != self.controller.focus:
            self._select(self.controller.focus)

    def _on_current_row_changed(self, current, _previous) -> None:
        if current.isValid() and not self._showing:
            self.controller.select(focus=current.row())

    def click_token(self, index: int) -> None:
        """Focus token ``index`` as a click on its chip would."""
        self.chips.setCurrentIndex(self.model.index(index))
