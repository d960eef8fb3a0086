"""Screenshots of information-flow routes and value zeroing beside rollout (to look at), at 1366 × 768
in English and Chinese: SmolLM2's route to the last token of the Eiffel prompt, and MiniLM's value
zeroing rolled up beside attention rollout for "it".

    xvfb-run -a -s "-screen 0 1366x768x24" .venv/bin/python scripts/routes_screenshots.py
    SCREENSHOTS_OUT=/tmp/shots …                                      # elsewhere than docs/images
"""
from __future__ import annotations

import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "scripts"))
os.environ.setdefault("QT_QPA_PLATFORM", "xcb" if os.environ.get("DISPLAY") else "offscreen")

from PySide6.QtCore import Qt  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402

import screenshots  # noqa: E402
from evidence_screenshots import raise_dock, wait  # noqa: E402
from screenshots import ANIMAL, settle, shoot  # noqa: E402

screenshots.OUT = Path(os.environ.get("SCREENSHOTS_OUT", ROOT / "docs" / "images"))
EIFFEL = "The Eiffel Tower is in the city of"


def scenes(app, window, suffix: str) -> None:
    window.resize(1366, 768)
    screenshots.set_text(window, EIFFEL)
    window.model_combo.setCurrentIndex(window.model_combo.findData("smollm2"))
    settle(app, window, 2.0)
    window.controller.select(focus=window.controller.snapshot.result.n - 1)
    panel = raise_dock(window, "routes")
    window.resizeDocks([window.docks["routes"]], [430], Qt.Orientation.Vertical)
    wait(app, lambda: panel.value is not None)
    shoot(app, window, f"routes-eiffel-{suffix}.png")
    screenshots.set_text(window, ANIMAL)
    window.model_combo.setCurrentIndex(window.model_combo.findData("minilm"))
    settle(app, window, 2.0)
    window.controller.select(focus=10)  # "it"
    panel = raise_dock(window, "rollout")
    window.resizeDocks([window.docks["rollout"]], [380], Qt.Orientation.Vertical)
    panel.kind.setCurrentIndex(panel.kind.findData("value_zeroing"))
    wait(app, lambda: panel.value_zeroing() is not None)
    shoot(app, window, f"value-zeroing-{suffix}.png")


def main() -> None:
    app = QApplication(sys.argv[:1])
    window = screenshots.open_window(app)
    scenes(app, window, "en")
    window = window.switch_language("zh_CN")
    window.move(0, 0)
    settle(app, window)
    scenes(app, window, "zh")
    window.close()


if __name__ == "__main__":
    main()
