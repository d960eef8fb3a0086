"""Screenshots of the Attribution dock at 1366 × 768, English and Chinese: SmolLM2 on the Eiffel
prompt, the head attribution grid, the logit layer by layer and the logit lens grid (to look at).

    xvfb-run -a -s "-screen 0 1366x768x24" .venv/bin/python scripts/attribution_screenshots.py
    SCREENSHOTS_OUT=/tmp/shots-dla …                                  # elsewhere than docs/images
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

from PySide6.QtCore import Qt  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402

import screenshots  # noqa: E402
from evidence_screenshots import raise_dock, wait  # noqa: E402
from screenshots import settle, shoot  # noqa: E402

screenshots.OUT = Path(os.environ.get("SCREENSHOTS_OUT", ROOT / "docs" / "images"))
EIFFEL = "The Eiffel Tower is in the city of"


def scene(app, window, suffix: str) -> None:
    c = window.controller
    screenshots.set_text(window, EIFFEL)
    settle(app, window)
    c.set_model("smollm2", 20)
    settle(app, window, 2.0)
    panel = raise_dock(window, "attribution")
    window.resizeDocks([window.docks["attribution"]], [380], Qt.Orientation.Vertical)
    panel.answer.setText(" Paris")
    panel.start()
    wait(app, lambda: not panel.running)
    c.select(head=3, focus=3)
    settle(app, window, 1.0)
    shoot(app, window, f"attribution{suffix}.png")
    window.resizeDocks([window.docks["attribution"]], [520], Qt.Orientation.Vertical)
    panel.colour.setCurrentIndex(panel.colour.findData("top_probabilities"))
    panel.grid.cellHovered.emit(26, 8)  # layer 25's output after " of": its top token in the hover line
    settle(app, window, 1.0)
    shoot(app, window, f"attribution-lens{suffix}.png")
    panel.colour.setCurrentIndex(0)


def main() -> None:
    from figures.fonts import install_cjk_font
    from app.shell.identity import use_settings_folder
    from app.window import MainWindow

    app = QApplication(sys.argv[:1])
    use_settings_folder(tempfile.mkdtemp())
    install_cjk_font(app)
    window = MainWindow(restore=False)
    window.move(0, 0)
    window.resize(1366, 728)
    window.show()
    settle(app, window)
    scene(app, window, "-1366")
    window = window.switch_language("zh_CN")
    window.move(0, 0)
    window.resize(1366, 728)
    settle(app, window)
    scene(app, window, "-1366-zh")
    window.close()


if __name__ == "__main__":
    main()
