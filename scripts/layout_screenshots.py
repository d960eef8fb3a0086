"""The first start and each group of docks, at the screen's size: the layout a newcomer meets.

    xvfb-run -a -s "-screen 0 1366x768x24" python scripts/layout_screenshots.py   # → /tmp/layout/1366x768/…
    LAYOUT_OUT=/tmp/l LAYOUT_MODEL=smollm2 xvfb-run -a -s "-screen 0 1024x600x24" python scripts/layout_screenshots.py
    LAYOUT_LANG=zh_CN xvfb-run -a -s "-screen 0 1024x600x24" python scripts/layout_screenshots.py  # in Chinese

A window as on a first run (no saved settings: a temporary settings folder), maximised to the
screen's available area; then every group of docks (Basics, Steps, Labs, Model, Analysis) in turn,
then View → Reset layout. With LAYOUT_MODEL the model is chosen first (its sentence typed). The
window's minimum size is printed, so a layout that outgrows the screen shows in the log too, and
after every screenshot what app.layout_check finds cut (a panel that scrolls in its dock, a plot's
axis or colour bar drawn past its widget): "nothing cut" or one line per problem.
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

import screenshots  # noqa: E402  (settle)

SENTENCES = {"toy": "小明喜欢苹果", "encoder": "The animal didn't cross the street because it was too tired.",
             "decoder": "The capital of France is"}


def grab(window, path: Path) -> None:
    from app.layout_check import cut_report

    pixmap = window.screen().grabWindow(0, window.x(), window.y(), window.width(), window.height()) \
        if os.environ.get("DISPLAY") else window.grab()
    pixmap.save(str(path))
    report = cut_report(window)
    print("wrote", path, "· nothing cut" if not report else "· CUT:")
    for key, problems in report.items():
        for problem in problems:
            print(f"    {key}: {problem}")


def main() -> None:
    app = QApplication(sys.argv[:1])
    from figures.fonts import install_cjk_font
    from app.i18n import install_translator
    from app.shell.identity import use_settings_folder
    from app.window import MainWindow
    from engine.models import model_info

    use_settings_folder(tempfile.mkdtemp())
    install_cjk_font(app)
    language = os.environ.get("LAYOUT_LANG", "en")
    install_translator(app, language)
    window = MainWindow()
    screen = window.screen().availableGeometry()
    out = Path(os.environ.get("LAYOUT_OUT", "/tmp/layout")) / f"{screen.width()}x{screen.height()}"
    out.mkdir(parents=True, exist_ok=True)
    window.show()
    window.showMaximized()
    screenshots.settle(app, window, 1.0)
    minimum = window.minimumSizeHint().expandedTo(window.minimumSize())
    print(f"screen {screen.width()}×{screen.height()}, window {window.width()}×{window.height()}, "
          f"minimum {minimum.width()}×{minimum.height()}")
    model = os.environ.get("LAYOUT_MODEL", "")
    prefix = (model or "first") + ("" if language == "en" else f"-{language}")
    grab(window, out / f"{prefix}-start.png")
    if model:
        screenshots.set_text(window, SENTENCES[model_info(model).kind])
        window.model_combo.setCurrentIndex(window.model_combo.findData(model))
        screenshots.settle(app, window, 3.0)
    groups = getattr(window, "dock_groups", None)
    for name in (groups.names() if groups else ()):
        groups.select(name)
        screenshots.settle(app, window, 0.6)
        grab(window, out / f"{prefix}-group-{name}.png")
        if name == "steps":  # the player's stages with heatmaps, not only its first (the token strip)
            player = window.panel("player")
            player.set_stage(player.stage_keys.index("weights"))
            screenshots.settle(app, window, 0.6)
            grab(window, out / f"{prefix}-group-steps-weights.png")
    window.reset_layout()
    screenshots.settle(app, window, 0.6)
    grab(window, out / f"{prefix}-reset.png")
    if not model:  # the inspector's columns and the head grid's rows with eight heads
        window.controller.set_config(window.controller.config.replace(heads=8), immediate=True)
        window.controller.inspect(1, 2)
        window.docks["inspector"].raise_()
        screenshots.settle(app, window, 0.6)
        grab(window, out / f"{prefix}-8-heads-inspector.png")
    window.close()


if __name__ == "__main__":
    main()
