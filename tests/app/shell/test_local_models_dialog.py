"""Model → Local models: why a model cannot open is shown whole, wrapped in its row (a pickle-only
folder's refusal, which says how to convert it, was cut after 110 characters and elided)."""
from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QSettings
from PySide6.QtWidgets import QApplication, QWidget
from tests import FIXTURES

FAMILIES = FIXTURES / "families"



class _Window(QWidget):
    """What the dialog asks of the main window: a controller's worker and the settings."""

    def __init__(self, tmp_path: Path) -> None:
        from app.controller import Controller

        super().__init__()
        self.controller = Controller(parent=self)
        self.settings = QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat)


def test_a_long_reason_is_shown_whole_and_wrapped(qtbot, tmp_path):
    from app.local_models_dialog import LocalModelsDialog
    from app.i18n import error_text
    from engine.models.local_models import scan

    folder = tmp_path / "models" / "pickled"
    folder.mkdir(parents=True)
    (folder / "config.json").write_bytes((FAMILIES / "bert" / "config.json").read_bytes())  # a valid config
    (folder / "pytorch_model.bin").write_bytes(b"\x80")
    found = scan([(tmp_path / "models", "added")])
    assert len(found) == 1 and not found[0].can_open and found[0].error is not None
    refusal = found[0].error
    reason = error_text(refusal)
    assert len(reason) > 200  # the case worth testing: longer than a line
    window = _Window(tmp_path)
    try:
        dialog = LocalModelsDialog(window, roots=[])
        qtbot.addWidget(dialog)
        dialog._found = found
        dialog._fill()
        dialog.resize(860, 420)
        dialog.show()
        QApplication.processEvents()
        cell = dialog.table.item(0, 4).text()
        assert reason.endswith(cell) and len(cell) >= len(reason) - len(str(folder)) - 2  # only the path went
        assert not cell.endswith("…")
        table = dialog.table
        right = table.columnViewportPosition(4) + table.columnWidth(4)
        assert right <= table.viewport().width()  # no column runs off to the right
        line = table.fontMetrics().lineSpacing()
        assert table.rowHeight(0) >= 2 * line  # the reason wraps onto more lines
    finally:
        window.controller.shutdown()
