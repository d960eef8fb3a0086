"""Screenshots of the causal-evidence views (to look at, and for docs/images): the patching dock with both
grids, attention flow beside rollout, leave-one-out bars, and the pronoun presets in English and
Chinese.

    xvfb-run -a -s "-screen 0 1600x1000x24" .venv/bin/python scripts/evidence_screenshots.py
    SCREENSHOTS_OUT=/tmp/shots …                                      # elsewhere than docs/images
    EVIDENCE_SCENES=smollm2 xvfb-run -a -s "-screen 0 1366x768x24" …  # SmolLM2's 30 × 16 grid, maximised
    EVIDENCE_SCENES=atp xvfb-run -a -s "-screen 0 1366x768x24" …      # AtP beside the exact grids, en + zh
"""
from __future__ import annotations

import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "scripts"))
os.environ.setdefault("QT_QPA_PLATFORM", "xcb" if os.environ.get("DISPLAY") else "offscreen")

from PySide6.QtWidgets import QApplication  # noqa: E402

import screenshots  # noqa: E402
from screenshots import ANIMAL, _preset_index, settle, shoot  # noqa: E402

screenshots.OUT = Path(os.environ.get("SCREENSHOTS_OUT", ROOT / "docs" / "images"))
WIDE = "The animal didn't cross the street because it was too wide."


def wait(app, condition, seconds: float = 600) -> None:
    deadline = time.monotonic() + seconds
    while not condition() and time.monotonic() < deadline:
        app.processEvents()
        time.sleep(0.05)


def raise_dock(window, key):
    window.docks[key].show()
    window.docks[key].raise_()
    return window.panel(key)


def preset(app, window, fragment: str, name: str) -> None:
    window.apply_preset(_preset_index(fragment))
    wait(app, lambda: window.panels["attention"].preset_caption.isVisible(), 600)
    settle(app, window, 2.0)
    shoot(app, window, name)


CLEAN = "The famous Eiffel Tower, built long ago, is found in the city of"  # 16 SmolLM2 tokens
CORRUPT = "The famous Colosseum, built long ago, is found in the city of"


def _smollm2_patching_maximised(app, window):
    """The window at what a maximised one gets on this screen, its first start's proportions, SmolLM2
    chosen and the Evidence place's patching dock raised: the dock."""
    screen = window.screen().size()
    window.resize(screen.width() - 16, screen.height() - 48)
    window.reset_layout()  # the first start's proportions for this size
    settle(app, window, 1.0)
    window.model_combo.setCurrentIndex(window.model_combo.findData("smollm2"))
    settle(app, window, 2.0)
    window.dock_groups.select("evidence")
    panel = raise_dock(window, "patching")
    settle(app, window, 1.0)
    return panel


def smollm2_grid(app) -> None:
    """SmolLM2's 30-layer residual grid over 16 tokens and its head grid, in a window maximised on
    the screen Xvfb was given (the grid should fit whole at 1366 × 768: no scroll bar). Xvfb has no window
    manager to maximise it: the window takes what a maximised one gets there (tests/app/shell/test_layout_fit.py's sizes)."""
    window = screenshots.open_window(app)
    screen = window.screen().size()
    panel = _smollm2_patching_maximised(app, window)
    panel.clean.setText(CLEAN)
    panel.corrupt.setText(CORRUPT)
    panel.answer.setText(" Paris")
    panel.start()
    wait(app, lambda: not panel.running)
    shoot(app, window, f"evidence-patching-smollm2-{screen.width()}x{screen.height()}.png")
    window.close()


def atp_grids(app) -> None:
    """The Eiffel pair on SmolLM2 with the AtP grids beside the exact ones, maximised: the estimate
    alone (drawn first), the finished grids of p(answer), then of the logit difference; English,
    then Chinese."""
    window = screenshots.open_window(app)
    for language in ("en", "zh"):
        if language == "zh":
            window = window.switch_language("zh_CN")
            window.move(0, 0)
        screen = window.screen().size()
        size = f"{screen.width()}x{screen.height()}"
        panel = _smollm2_patching_maximised(app, window)
        panel.clean.setText("The Eiffel Tower is in the city of")
        panel.corrupt.setText("The Colosseum is in the city of")
        panel.answer.setText(" Paris")
        panel.measure.setCurrentIndex(panel.measure.findData("p"))
        panel.start()
        wait(app, lambda: panel.view is not None)
        shoot(app, window, f"evidence-atp-first-{language}-{size}.png")
        wait(app, lambda: not panel.running)
        settle(app, window, 1.0)
        shoot(app, window, f"evidence-atp-{language}-{size}.png")
        panel.measure.setCurrentIndex(panel.measure.findData("diff"))
        settle(app, window, 1.0)
        shoot(app, window, f"evidence-atp-logit-diff-{language}-{size}.png")
    window.close()


def main() -> None:
    app = QApplication(sys.argv[:1])
    screenshots.OUT.mkdir(parents=True, exist_ok=True)
    if os.environ.get("EVIDENCE_SCENES") == "smollm2":
        smollm2_grid(app)
        return
    if os.environ.get("EVIDENCE_SCENES") == "atp":
        atp_grids(app)
        return
    window = screenshots.open_window(app)
    screenshots.set_text(window, ANIMAL)
    settle(app, window)
    window.model_combo.setCurrentIndex(window.model_combo.findData("minilm"))
    settle(app, window, 2.0)
    window.controller.select(focus=10)
    scenes = os.environ.get("EVIDENCE_SCENES", "patching,flow,occlusion,presets").split(",")
    if "patching" in scenes:
        panel = raise_dock(window, "patching")
        window.resizeDocks([window.docks["patching"]], [520], __import__("PySide6.QtCore").QtCore.Qt.Orientation.Vertical)
        panel.clean.setText(ANIMAL)
        panel.corrupt.setText(WIDE)
        panel.position.setValue(10)
        panel.start()
        wait(app, lambda: not panel.running)
        shoot(app, window, "evidence-patching.png")
    if "flow" in scenes:
        panel = raise_dock(window, "rollout")
        panel.kind.setCurrentIndex(panel.kind.findData("flow"))
        wait(app, lambda: panel.flow() is not None)
        shoot(app, window, "evidence-flow.png")
    if "occlusion" in scenes:
        panel = raise_dock(window, "occlusion")
        panel.start()
        wait(app, lambda: panel.result is not None)
        shoot(app, window, "evidence-occlusion.png")
    if "presets" in scenes:
        preset(app, window, "MiniLM: “it” → “animal”", "evidence-preset-it-animal.png")
        preset(app, window, "MiniLM: “it” → “cake”", "evidence-preset-it-cake.png")
        window = window.switch_language("zh_CN")
        window.move(0, 0)
        settle(app, window)
        preset(app, window, "她 → 小红", "evidence-preset-ta-zh.png")
    window.close()


if __name__ == "__main__":
    main()
