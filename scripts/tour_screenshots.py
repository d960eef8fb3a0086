"""Every dock in every installed model, at the screen's size: the pictures a reviewer looks through.

    xvfb-run -a -s "-screen 0 1366x768x24" python scripts/tour_screenshots.py    # → /tmp/tour/1366x768/…
    TOUR_OUT=/tmp/t TOUR_LANGUAGE=zh_CN xvfb-run -a -s "-screen 0 1920x1080x24" python scripts/tour_screenshots.py

The window fills the screen's available geometry (as a maximised window would); for each model
of the registry that is installed, every dock is shown and raised in turn and the screen under
the window grabbed. Settings go to a temporary folder. Prints the window's minimum size too, so a
layout that outgrows the screen shows in the log as well as in the pictures.
"""
from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "scripts"))
os.environ.setdefault("QT_QPA_PLATFORM", "xcb" if os.environ.get("DISPLAY") else "offscreen")

from PySide6.QtWidgets import QApplication  # noqa: E402

import screenshots  # noqa: E402  (settle, the shared scene helpers)

SENTENCES = {"toy": "小明喜欢苹果", "encoder": "The animal didn't cross the street because it was too tired.",
             "decoder": "The capital of France is"}


def main() -> None:
    app = QApplication(sys.argv[:1])
    from figures.fonts import install_cjk_font
    from app.window import MainWindow
    from app.shell.identity import use_settings_folder
    from engine.models import MODELS

    use_settings_folder(tempfile.mkdtemp())
    install_cjk_font(app)
    window = MainWindow(restore=False)
    if os.environ.get("TOUR_LANGUAGE"):
        window = window.switch_language(os.environ["TOUR_LANGUAGE"])
    screen = window.screen().availableGeometry()
    out = Path(os.environ.get("TOUR_OUT", "/tmp/tour")) / f"{screen.width()}x{screen.height()}"
    out.mkdir(parents=True, exist_ok=True)
    window.move(screen.topLeft())
    window.resize(screen.size())
    window.show()
    screenshots.settle(app, window)
    minimum = window.minimumSizeHint().expandedTo(window.minimumSize())
    print(f"screen {screen.width()}×{screen.height()}, window {window.width()}×{window.height()}, "
          f"minimum {minimum.width()}×{minimum.height()}")
    for name, entry in MODELS.items():
        if not entry.is_installed():
            print("skipped (not installed):", name)
            continue
        screenshots.set_text(window, SENTENCES.get(entry.kind, SENTENCES["toy"]))
        index = window.model_combo.findData(name)
        if index < 0:
            continue
        window.model_combo.setCurrentIndex(index)
        screenshots.settle(app, window, 2.0)
        for key, dock in window.docks.items():
            dock.show()
            dock.raise_()
            screenshots.settle(app, window, 0.4)
            path = out / f"{name}-{key}.png"
            pixmap = window.screen().grabWindow(0, window.x(), window.y(), window.width(), window.height()) \
                if os.environ.get("DISPLAY") else window.grab()
            pixmap.save(str(path))
            print("wrote", path)
    window.close()


if __name__ == "__main__":
    main()
