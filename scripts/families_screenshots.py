"""Screenshots of the model families under Xvfb, to look at: Local models on a cache laid out as the tools
lay it out (tests/local_cache.py), a tiny gpt2 folder opened in the window, and the model list
with the bundled models installed (run it with a fresh clone's .venv after ``./run``).

    xvfb-run -a -s "-screen 0 1600x1000x24" .venv/bin/python scripts/families_screenshots.py [OUT_DIR]
"""
from __future__ import annotations

import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]
os.environ.setdefault("QT_QPA_PLATFORM", "xcb" if os.environ.get("DISPLAY") else "offscreen")

from PySide6.QtWidgets import QApplication  # noqa: E402


def pump(app, seconds: float) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        app.processEvents()
        time.sleep(0.02)


def wait(app, condition, timeout: float = 120.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and not condition():
        app.processEvents()
        time.sleep(0.02)


def grab(widget, path: Path) -> None:
    screen = widget.screen()
    if QApplication.platformName() == "offscreen" or screen is None:
        widget.grab().save(str(path))
    else:
        geometry = widget.frameGeometry()
        screen.grabWindow(0, geometry.x(), geometry.y(), geometry.width(), geometry.height()).save(str(path))
    print("wrote", path)


def main() -> None:
    out = Path(sys.argv[1] if len(sys.argv) > 1 else tempfile.mkdtemp(prefix="families-shots-"))
    out.mkdir(parents=True, exist_ok=True)
    settings = tempfile.mkdtemp(prefix="families-settings-")
    app = QApplication(sys.argv[:1])
    from figures.fonts import install_cjk_font
    from app.window import MainWindow
    from app.shell.identity import use_settings_folder

    use_settings_folder(settings)
    install_cjk_font(app)
    window = MainWindow(restore=False)
    window.resize(1500, 920)
    window.show()
    window.wait_until_idle(120)
    pump(app, 0.5)

    # the model list: every registry model (the three real ones when installed)
    combo = window.model_combo
    combo.showPopup()
    pump(app, 0.6)
    grab(window, out / "model-list.png")
    combo.hidePopup()
    from app.install_models import missing

    print("models in the list:", [combo.itemText(i) for i in range(combo.count())])
    print("missing bundled models:", [entry.name for entry in missing()])

    # Local models on a laid-out cache
    from app import local_models_dialog
    from engine.models.local_models import default_roots
    from local_cache import lay_out

    home = Path(tempfile.mkdtemp(prefix="families-home-"))
    paths = lay_out(home)
    window.settings.setValue(local_models_dialog.SETTINGS_KEY, [str(paths["added"])])
    dialog = local_models_dialog.show(window, roots=default_roots({}, home))
    wait(app, lambda: not dialog.scanning and dialog.table.rowCount() > 0)
    dialog.resize(1100, 430)
    dialog.move(window.x() + 150, window.y() + 150)
    pump(app, 0.8)
    grab(dialog, out / "local-models.png")

    # a tiny gpt2 folder opened from the dialog
    names = [dialog.table.item(row, 0).text() for row in range(dialog.table.rowCount())]
    dialog.table.selectRow(names.index("tiny/gpt2"))
    window.controller.set_config(window.controller.config.replace(text="The cat sat on the mat, then 小猫 slept."),
                                 immediate=True)
    dialog.open_button.click()
    wait(app, lambda: window.controller.snapshot is not None and window.controller.snapshot.model.startswith("hf:")
         and window.controller.is_idle())
    window.wait_until_idle(120)
    pump(app, 1.5)
    grab(window, out / "tiny-gpt2-window.png")
    window.close()


if __name__ == "__main__":
    main()
