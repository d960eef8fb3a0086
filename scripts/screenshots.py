"""Regenerate the README's pictures: screenshots of the real window and an exported figure.

    xvfb-run -a -s "-screen 0 1600x1000x24" python scripts/screenshots.py   # or with a DISPLAY
    SCREENSHOTS_OUT=/tmp/shots python scripts/screenshots.py                # elsewhere than docs/images

Each scene sets the window up as a user would (sentence, preset, panel), waits for the worker,
then grabs the screen under the window (QScreen.grabWindow; a widget grab when offscreen).
Settings go to a temporary folder, so the user's own are never touched.
"""
from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = Path(os.environ.get("SCREENSHOTS_OUT", ROOT / "docs" / "images"))
sys.path.insert(0, str(ROOT))
os.environ.setdefault("QT_QPA_PLATFORM", "xcb" if os.environ.get("DISPLAY") else "offscreen")

from PySide6.QtWidgets import QApplication  # noqa: E402

ANIMAL = "The animal didn't cross the street because it was too tired."


def settle(app, window, seconds: float = 0.8) -> None:
    window.wait_until_idle(120)
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        app.processEvents()
        time.sleep(0.02)
    window.wait_until_idle(120)
    app.processEvents()


def shoot(app, window, name: str) -> None:
    settle(app, window)
    if QApplication.platformName() == "xcb":
        geometry = window.frameGeometry()
        image = window.screen().grabWindow(0, geometry.x(), geometry.y(), geometry.width(), geometry.height())
    else:
        image = window.grab()
    path = OUT / name
    image.save(str(path))
    print("wrote", path)


def set_text(window, text: str) -> None:
    window.panels["input"].text.setPlainText(text)


def analysis_scenes(app, window, tokens) -> None:
    """Issue 14 on MiniLM: value-weighted attention, rollout, switched-off heads and their
    ranking, the head dashboard."""
    c = window.controller
    c.set_model("minilm", 3)
    c.select(head=1, stage="value_norms", focus=tokens.index("it"))
    shoot(app, window, "value-weighted.png")
    c.select(stage="weights")
    for key in ("rollout", "ablation", "dashboard"):
        window.docks[key].show()
    window.docks["rollout"].raise_()
    rollout = window.panel("rollout")
    rollout.kind.setCurrentIndex(rollout.kind.findData("value_rollout"))
    shoot(app, window, "rollout.png")
    c.set_ablation({(3, 1), (5, 11)})
    window.docks["ablation"].raise_()
    ablation = window.panel("ablation")
    settle(app, window)
    ablation.rank()
    while ablation.is_ranking():
        app.processEvents()
        time.sleep(0.02)
    shoot(app, window, "ablation.png")
    window.docks["dashboard"].raise_()
    shoot(app, window, "dashboard.png")
    c.set_ablation(frozenset())
    c.set_model("minilm", 0)
    settle(app, window)


def main() -> None:
    settings = tempfile.mkdtemp()
    app = QApplication(sys.argv[:1])
    from app.fonts import install_cjk_font
    from app.window import MainWindow, use_settings_folder

    use_settings_folder(settings)

    install_cjk_font(app)
    window = MainWindow(restore=False)
    window.move(0, 0)
    window.resize(1560, 1000)
    window.show()
    settle(app, window)

    set_text(window, "小明喜欢苹果")
    window.controller.select(focus=1)
    shoot(app, window, "window-xiaoming.png")

    set_text(window, "I ate the cake and it was delicious.")
    settle(app, window)
    window.controller.select(focus=5, head=1)
    shoot(app, window, "window-cake.png")

    player = window.show_player()
    player.set_stage(4)
    shoot(app, window, "player.png")

    window.controller.inspect(5, 3)
    window.docks["inspector"].raise_()
    window.docks["diffs"].raise_()
    shoot(app, window, "inspector.png")
    window.docks["arithmetic"].raise_()

    set_text(window, "苹果很好吃")
    settle(app, window)
    compare = window.panel("compare")
    window.docks["compare"].raise_()
    compare.text_b.setText("苹果发布了新手机")
    shoot(app, window, "compare.png")

    try:
        from engine.minilm import find_model_dir

        find_model_dir()
        set_text(window, ANIMAL)
        settle(app, window)
        window.model_combo.setCurrentIndex(window.model_combo.findData("minilm"))
        settle(app, window, 1.5)
        tokens = window.controller.snapshot.result.token_texts
        window.controller.select(focus=tokens.index("it"))
        layers = window.panel("layers")
        layers.key_combo.setCurrentIndex(tokens.index("animal"))
        layers._open(3, 1)
        shoot(app, window, "minilm.png")
        analysis_scenes(app, window, tokens)
        window.model_combo.setCurrentIndex(window.model_combo.findData("toy"))
        settle(app, window)
    except Exception as error:  # noqa: BLE001 - the model is optional
        print("MiniLM screenshot skipped:", error)


    window = window.switch_language("zh_CN")
    window.move(0, 0)
    set_text(window, "小明把苹果给了小红，她很高兴。")
    settle(app, window)
    window.controller.select(focus=7)
    shoot(app, window, "chinese.png")
    window.show_player().set_stage(5)
    shoot(app, window, "chinese-player.png")
    window.close()

    figure = OUT / "export-all-heads.png"
    subprocess.run([sys.executable, str(ROOT / "main.py"), "export", "--text", "I ate the cake and it was delicious.",
                    "--head", "all", "--width", "1400", "--out", str(figure)], check=True)
    print("wrote", figure)


if __name__ == "__main__":
    main()
