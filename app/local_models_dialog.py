"""Model → Local models…: the models already on this computer, found and opened without freezing.

The scan (engine.models.local_models.scan: hub caches, LM Studio's folders, the folders the user
added) runs as a worker task (app.worker.Lane.start) with a progress bar; Esc stops it (and, when
nothing runs, closes the dialog). Opening a row hands its path to app.decoder_window.open_model, which loads it in the worker
as File → Open model does. The added folders are kept in QSettings under ``localModels/folders``.
"""
from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QCoreApplication as Q
from PySide6.QtCore import Qt
from PySide6.QtWidgets import (QAbstractItemView, QDialog, QFileDialog, QHBoxLayout, QHeaderView, QLabel,
                               QProgressBar, QPushButton, QTableWidget, QTableWidgetItem, QVBoxLayout)

from engine.core.memory import format_bytes

from .text import fill
from .worker import engine_task

def QT_TRANSLATE_NOOP(context: str, text: str) -> str:  # noqa: N802 - the marker lupdate looks for
    return text


# engine.models.families.loading.TOKENIZER_NOTES, for lupdate (the engine cannot call Qt)
FOLDER_TOKENIZER_NOTES = (
    QT_TRANSLATE_NOOP("Model", "WordPiece tokenizer (tokenizer.json)"),
    QT_TRANSLATE_NOOP("Model", "BPE tokenizer (tokenizer.json)"),
    QT_TRANSLATE_NOOP("Model", "Unigram tokenizer (tokenizer.json)"),
)
LANE = "local-models"
SETTINGS_KEY = "localModels/folders"


def added_folders(settings) -> list[str]:
    value = settings.value(SETTINGS_KEY, []) or []
    if isinstance(value, str):
        value = [value]
    return [str(v) for v in value if isinstance(v, str) and v][:50]


def _scan(roots, progress, cancelled):
    from engine.models.local_models import scan

    return scan(roots, progress=progress, cancelled=cancelled)


class LocalModelsDialog(QDialog):
    def __init__(self, window, roots=None) -> None:
        super().__init__(window)
        self.setObjectName("localModelsDialog")
        self.window_ = window
        self.setWindowTitle(self.tr("Local models"))
        self._roots = roots  # tests pass their own; None: engine.models.local_models.default_roots()
        self._found = []
        self.task = None  # the latest scan's app.worker.TaskState
        self.scanning = False
        layout = QVBoxLayout(self)
        self.where = QLabel()
        self.where.setWordWrap(True)
        layout.addWidget(self.where)
        self.table = QTableWidget(0, 5)
        self.table.setObjectName("localModelsTable")
        self.table.setHorizontalHeaderLabels([
            self.tr("Model"), self.tr("Family"), self.tr("Size"), self.tr("Layers × heads"), self.tr("Can open")])
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.verticalHeader().setVisible(False)
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.ResizeToContents)
        # why a model cannot open is a sentence or two (a pickle's refusal says how to convert it): the
        # last column takes the width left and wraps, and each row grows to its reason's lines
        for column in (1, 2, 3):
            header.setSectionResizeMode(column, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(4, QHeaderView.ResizeMode.Stretch)
        self.table.setWordWrap(True)
        self.table.setTextElideMode(Qt.TextElideMode.ElideNone)
        self.table.verticalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        self.table.itemSelectionChanged.connect(self._selection_changed)
        self.table.cellDoubleClicked.connect(lambda row, _: self.open_selected())
        layout.addWidget(self.table)
        self.progress = QProgressBar()
        self.progress.setRange(0, 100)
        self.status = QLabel()
        status_row = QHBoxLayout()
        status_row.addWidget(self.progress, 1)
        status_row.addWidget(self.status, 2)
        layout.addLayout(status_row)
        buttons = QHBoxLayout()
        self.add_button = QPushButton(self.tr("Add folder…"))
        self.add_button.clicked.connect(self.add_folder)
        self.rescan_button = QPushButton(self.tr("Scan again"))
        self.rescan_button.clicked.connect(self.start_scan)
        self.open_button = QPushButton(self.tr("Open"))
        self.open_button.setObjectName("openLocalModel")
        self.open_button.setEnabled(False)
        self.open_button.clicked.connect(self.open_selected)
        close = QPushButton(self.tr("Close"))
        close.clicked.connect(self.reject)
        for button in (self.add_button, self.rescan_button):
            buttons.addWidget(button)
        buttons.addStretch(1)
        buttons.addWidget(self.open_button)
        buttons.addWidget(close)
        layout.addLayout(buttons)
        self.lane = window.controller.worker.lane(LANE, self, long=True)  # a slow disk never holds the edits' thread
        self.lane.progressed.connect(self._on_progress)
        self.lane.done.connect(self._on_done)
        self.lane.failed.connect(self._on_failed)
        self.resize(860, 420)

    # ------------------------------------------------------------ scanning
    def roots(self):
        from engine.models.local_models import default_roots

        roots = list(self._roots) if self._roots is not None else default_roots()
        return roots + [(Path(folder), "added") for folder in added_folders(self.window_.settings)]

    def start_scan(self) -> None:
        roots = self.roots()
        self.where.setText(fill(self.tr("Looking in: %1"), ", ".join(str(root) for root, _ in roots)))
        self.scanning = True
        self.progress.setValue(0)
        self.status.setText(self.tr("Scanning… (Esc stops)"))
        self.rescan_button.setEnabled(False)
        # a scan still running stops at its next entry
        self.task = self.lane.start(engine_task, _scan, roots)

    def stop_scan(self) -> None:
        self.lane.cancel()
        self.scanning = False
        self.rescan_button.setEnabled(True)
        self.status.setText(self.tr("Scan stopped"))

    def _on_progress(self, done: int, total: int) -> None:
        if self.scanning:
            self.progress.setValue(int(round(100 * done / max(total, 1))))

    def _on_done(self, found) -> None:
        self.scanning = False
        self.rescan_button.setEnabled(True)
        self.progress.setValue(100)
        self._found = list(found)
        self._fill()
        openable = sum(model.can_open for model in self._found)
        self.status.setText(fill(self.tr("%1 models found, %2 can be opened"), len(self._found), openable))

    def _on_failed(self, error) -> None:
        from .i18n import error_text

        self.scanning = False
        self.rescan_button.setEnabled(True)
        self.status.setText(error_text(error))

    def _fill(self) -> None:
        from .i18n import error_text

        self.table.setRowCount(len(self._found))
        for row, model in enumerate(self._found):
            shape = f"{model.layers} × {model.heads}" if model.layers else "—"
            problem = error_text(model.error) if model.error is not None else model.problem  # translated
            status = self.tr("yes") if model.can_open else _short(problem, model.path)
            cells = (model.name, model.family or "?", format_bytes(model.size) if model.size else "—", shape, status)
            for column, text in enumerate(cells):
                item = QTableWidgetItem(text)
                item.setToolTip(str(model.path) if column == 0 else (problem or str(model.path)))
                if not model.can_open:
                    item.setForeground(Qt.GlobalColor.darkGray)
                self.table.setItem(row, column, item)
        self.table.resizeRowsToContents()

    # ------------------------------------------------------------ actions
    def _selection_changed(self) -> None:
        model = self.selected()
        self.open_button.setEnabled(model is not None and model.can_open)

    def selected(self):
        rows = self.table.selectionModel().selectedRows()
        return self._found[rows[0].row()] if rows else None

    def open_selected(self) -> None:
        from . import decoder_window

        model = self.selected()
        if model is None or not model.can_open:
            return
        decoder_window.open_model(self.window_, str(model.path))
        self.accept()

    def add_folder(self) -> None:
        folder = QFileDialog.getExistingDirectory(self, self.tr("Add a folder of models"), str(Path.home()))
        if folder:
            self.remember(folder)
            self.start_scan()

    def remember(self, folder: str) -> None:
        folders = added_folders(self.window_.settings)
        if folder not in folders:
            self.window_.settings.setValue(SETTINGS_KEY, folders + [folder])

    def keyPressEvent(self, event) -> None:  # noqa: N802 (Qt's name)
        if event.key() == Qt.Key.Key_Escape and self.scanning:
            self.stop_scan()
            return
        super().keyPressEvent(event)

    def reject(self) -> None:
        self.lane.cancel()
        super().reject()


def _short(problem: str, path: Path) -> str:
    """The refusal without the path it starts with (the tooltip has all of it); the cell wraps the rest whole."""
    for prefix in (str(path / "config.json"), str(path)):
        for colon in (": ", "："):  # the Chinese templates use a full-width colon
            if problem.startswith(prefix + colon):
                problem = problem[len(prefix + colon):]
                break
        else:
            continue
        break
    return problem


def show(window, roots=None) -> LocalModelsDialog:
    dialog = LocalModelsDialog(window, roots)
    dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
    dialog.show()
    dialog.start_scan()
    return dialog


def add_menu(window, menus) -> None:
    """The Model menu: open a file or folder, the local models, the bundled models' installer."""
    from . import decoder_window
    from .shell.actions import add_action

    menu = menus.addMenu(Q.translate("LocalModels", "&Model"))
    add_action(window, menu, Q.translate("LocalModels", "&Local models…"), lambda: show(window), "Ctrl+Shift+M",
                   Q.translate("LocalModels", "Models already on this computer: Hugging Face cache, LM Studio, "
                                              "folders you add"))
    add_action(window, menu, Q.translate("LocalModels", "Open model &file…"), lambda: decoder_window.open_model_dialog(window))
    add_action(window, menu, Q.translate("LocalModels", "Open model f&older…"),
                   lambda: decoder_window.open_folder_dialog(window))
    try:
        from . import install_models
    except ImportError:  # pragma: no cover
        return
    install_models.add_actions(window, menu)
