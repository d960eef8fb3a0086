"""The model's message row: a missing model's install command, a file Open model… refused.

Why: the message used to be a label at the end of the model toolbar, pushed into the
toolbar's overflow (») when long (SmolLM2's and e5's commands are) and drawn over the panel
titles once opened. It now has a toolbar row of its own, under the model toolbar, shown only
while there is a message: the label wraps to the window's width and its text can be selected
and copied (the install command is meant to be pasted into a terminal). A × clears it.
"""
from __future__ import annotations

from PySide6.QtCore import QCoreApplication, QSize, Qt
from PySide6.QtWidgets import QLabel, QSizePolicy, QToolBar, QToolButton

MARGIN = 48  # pixels of the row not given to the text (the × and the toolbar's handle)


class NoteLabel(QLabel):
    """A wrapped, selectable label whose size hint is its height at the row's real width (a
    toolbar asks for the size hint only, never for the height at a given width)."""

    def __init__(self, bar: "NoticeBar") -> None:
        super().__init__()
        self._bar = bar
        self.setObjectName("modelNote")
        self.setWordWrap(True)
        self.setTextFormat(Qt.TextFormat.PlainText)  # file names and commands as written
        self.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.setStyleSheet("color: #c62828; padding: 2px 8px;")
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Preferred)

    def setText(self, text: str) -> None:  # noqa: N802 - Qt name: the row shows only with a message
        super().setText(text)
        self._bar.setVisible(bool(text))
        self.updateGeometry()

    def clear(self) -> None:
        self.setText("")

    def _width(self) -> int:
        window = self._bar.parentWidget()
        return max(200, (window.width() if window is not None else 800) - MARGIN)

    def sizeHint(self) -> QSize:  # noqa: N802 - Qt name
        width = self._width()
        return QSize(width, max(self.heightForWidth(width), self.fontMetrics().height() + 4))

    def minimumSizeHint(self) -> QSize:  # noqa: N802 - Qt name
        return QSize(120, self.sizeHint().height())


class NoticeBar(QToolBar):
    """The row holding :class:`NoteLabel`; hidden while the label is empty."""

    def __init__(self, window) -> None:
        super().__init__(QCoreApplication.translate("NoticeBar", "Messages"), window)
        self.setObjectName("noticeToolBar")
        self.setMovable(False)
        self.setFloatable(False)
        self.toggleViewAction().setVisible(False)  # not a toolbar one turns on: it comes with a message
        self.label = NoteLabel(self)
        self.addWidget(self.label)
        close = QToolButton()
        close.setObjectName("noticeClose")
        close.setText("×")
        close.setAutoRaise(True)
        close.setToolTip(QCoreApplication.translate("NoticeBar", "Hide this message"))
        close.clicked.connect(self.label.clear)
        self.addWidget(close)
        self.setVisible(False)

    def fit_width(self) -> None:
        """The window's width changed: the text wraps again."""
        if self.isVisible():
            self.label.updateGeometry()
