"""Presets and model switches at the screen's size: the captions over their own heatmaps, the two-keys
grids of 她 → 小红 against 她 → 小明, Model layers' rows, the place kept across a model and a language
switch.

    xvfb-run -a -s "-screen 0 1366x768x24" .venv/bin/python scripts/switch_screenshots.py  # → /tmp/switch/1366x768/…
    SWITCH_OUT=/tmp/s xvfb-run -a -s "-screen 0 1024x600x24" .venv/bin/python scripts/switch_screenshots.py

After each screenshot it prints what app.layout_check finds cut ("nothing cut" or one line a problem).
"""
from __future__ import annotations

import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "scripts"))
os.environ.setdefault("QT_QPA_PLATFORM", "xcb" if os.environ.get("DISPLAY") else "offscreen")

from PySide6.QtWidgets import QApplication  # noqa: E402

import screenshots  # noqa: E402
from layout_screenshots import grab  # noqa: E402
from screenshots import _preset_index  # noqa: E402


def wait(app, condition, seconds: float = 300) -> None:
    deadline = time.monotonic() + seconds
    while not condition() and time.monotonic() < deadline:
        app.processEvents()
        time.sleep(0.05)


def main() -> None:
    app = QApplication(sys.argv[:1])
    from figures.fonts import install_cjk_font
    from app.i18n import CHINESE, ENGLISH, install_translator
    from app.shell.identity import use_settings_folder
    from app.window import MainWindow

    use_settings_folder(tempfile.mkdtemp())
    install_cjk_font(app)
    install_translator(app, ENGLISH)
    window = MainWindow()
    screen = window.screen().availableGeometry()
    out = Path(os.environ.get("SWITCH_OUT", "/tmp/switch")) / f"{screen.width()}x{screen.height()}"
    out.mkdir(parents=True, exist_ok=True)
    window.show()
    window.showMaximized()
    screenshots.settle(app, window, 1.0)
    caption = window.panels["attention"].preset_caption
    c = window.controller
    for fragment, name in (("SmolLM2: “it” → “animal”", "smollm2-it-animal"), ("她 → 小红", "e5-she-xiaohong")):
        window.apply_preset(_preset_index(fragment))
        wait(app, lambda: caption.isVisible() and c.snapshot.model != "toy" and window.wait_until_idle(1))
        screenshots.settle(app, window, 1.5)
        grab(window, out / f"{name}.png")
    layers = window.panel("layers")
    layers.tabs.setCurrentIndex(0)  # the overview: every layer's row of thumbnails
    screenshots.settle(app, window, 1.0)
    grab(window, out / "e5-model-layers-overview.png")
    c.set_model("smollm2", 25)
    wait(app, lambda: c.snapshot.model == "smollm2" and window.wait_until_idle(1))
    window.dock_groups.select("analysis")
    screenshots.settle(app, window, 1.0)
    c.set_model("minilm")
    screenshots.settle(app, window, 0.3)
    grab(window, out / "switching-to-minilm-in-analysis.png")
    wait(app, lambda: c.snapshot.model == "minilm" and window.wait_until_idle(1))
    screenshots.settle(app, window, 1.0)
    grab(window, out / "minilm-after-smollm2-layer-25.png")
    window.apply_preset(_preset_index("the hand calculation"))
    window.wait_until_idle(30)
    window.dock_groups.select("analysis")
    screenshots.settle(app, window, 1.0)
    chinese = window.switch_language(CHINESE)
    chinese.showMaximized()
    chinese.wait_until_idle(60)
    screenshots.settle(app, chinese, 1.5)
    grab(chinese, out / "zh-after-switch-in-analysis.png")
    chinese.close()


if __name__ == "__main__":
    main()
