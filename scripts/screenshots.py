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


def _preset_index(fragment: str) -> int:
    from app.presets import menu_presets

    return next(i for i, p in enumerate(menu_presets()) if fragment in p.title)


def seed_scenes(app, window, prefix: str = "seeds") -> None:
    """The three tutorials' key moments, in the window's current language (docs/SEEDS.md)."""
    player = window.show_player()
    player.formula_button.setChecked(False)
    for fragment, name, stage in (("the hand calculation", "hand-calculation", "weights"),
                                  ("Scores 8 / 5 / 7", "softmax-8-5-7", "weights"),
                                  ("causal mask", "causal-mask", "scaled"),
                                  ("scores 1.3 / 0.4 / 1.6", "cake-scores", "scores")):
        window.apply_preset(_preset_index(fragment))
        settle(app, window)
        player.set_stage(player.stage_keys.index(stage))
        shoot(app, window, f"{prefix}-{name}.png")
    window.apply_preset(_preset_index("512 dimensions"))
    settle(app, window)
    player.set_stage(player.stage_keys.index("qkv"))
    shoot(app, window, f"{prefix}-8-heads-of-64.png")
    window.apply_preset(_preset_index("the hand calculation"))
    settle(app, window)
    player.formula_button.setChecked(True)
    player.set_stage(player.stage_keys.index("weighted_sum"))
    shoot(app, window, f"{prefix}-formula.png")
    player.formula_button.setChecked(False)
    try:
        from engine.models import ENGLISH_MODEL, MODELS

        if not MODELS[ENGLISH_MODEL].is_installed():
            raise RuntimeError("MiniLM is not installed")
        window.apply_preset(_preset_index("“it” → “cake”"))
        deadline = time.monotonic() + 120
        while not window.panels["attention"].preset_caption.isVisible() and time.monotonic() < deadline:
            app.processEvents()
            time.sleep(0.05)
        settle(app, window, 1.5)
        shoot(app, window, f"{prefix}-minilm-it-cake.png")
        panel = window.navigation.show_similarity()
        panel.compute()
        deadline = time.monotonic() + 120
        while panel.result is None and time.monotonic() < deadline:
            app.processEvents()
            time.sleep(0.05)
        settle(app, window)
        image = window.navigation.similarity_dialog.grab()
        image.save(str(OUT / f"{prefix}-similarity.png"))
        print("wrote", OUT / f"{prefix}-similarity.png")
        window.navigation.similarity_dialog.close()
        window.model_combo.setCurrentIndex(window.model_combo.findData("toy"))
        settle(app, window)
    except Exception as error:  # noqa: BLE001 - the model is optional
        print("MiniLM scenes skipped:", error)


CAPITAL = "The capital of France is"


def decoder_scenes(app, window, suffix: str = "") -> None:
    """SmolLM2: next-token bars, the logit lens, and a generated token (skipped when not installed)."""
    try:
        from engine.models.smollm2 import find_smollm2

        find_smollm2()
    except Exception as error:  # noqa: BLE001 - the model is optional
        print("SmolLM2 screenshots skipped:", error)
        return
    set_text(window, CAPITAL)
    settle(app, window)
    window.model_combo.setCurrentIndex(window.model_combo.findData("smollm2"))
    window.layer_spin.setValue(3)
    settle(app, window, 2.0)
    window.controller.select(focus=4, head=7)
    window.docks["next"].raise_()
    settle(app, window, 1.0)
    shoot(app, window, f"decoder-next-token{suffix}.png")
    window.docks["lens"].raise_()
    settle(app, window, 1.0)
    shoot(app, window, f"decoder-logit-lens{suffix}.png")
    window.docks["next"].raise_()
    window.panel("next").generate(greedy=True)
    settle(app, window, 1.5)
    shoot(app, window, f"decoder-generated{suffix}.png")
    window.controller.undo()
    settle(app, window)
    window.model_combo.setCurrentIndex(window.model_combo.findData("toy"))
    settle(app, window)


def open_window(app):
    """A fresh main window (its settings in a new temporary folder, the CJK font installed) at
    (0, 0), 1560 × 1000, shown and settled."""
    from figures.fonts import install_cjk_font
    from app.shell.identity import use_settings_folder
    from app.window import MainWindow

    use_settings_folder(tempfile.mkdtemp())
    install_cjk_font(app)
    window = MainWindow(restore=False)
    window.move(0, 0)
    window.resize(1560, 1000)
    window.show()
    settle(app, window)
    return window


def decoder_only() -> None:
    """SCREENSHOTS_ONLY=decoder: the decoder scenes at 1366 × 768 and 1920 × 1080."""
    app = QApplication(sys.argv[:1])
    from figures.fonts import install_cjk_font
    from app.window import MainWindow
    from app.shell.identity import use_settings_folder

    use_settings_folder(tempfile.mkdtemp())
    install_cjk_font(app)
    for width, height in ((1366, 768), (1920, 1080)):
        window = MainWindow(restore=False)
        window.move(0, 0)
        window.resize(width, height - 40)
        window.show()
        settle(app, window)
        decoder_scenes(app, window, f"-{width}")
        window.close()




def analysis_scenes(app, window, tokens) -> None:
    """The analyses on MiniLM: value-weighted attention, rollout, switched-off heads and their
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
    if os.environ.get("SCREENSHOTS_ONLY") == "decoder":
        return decoder_only()
    app = QApplication(sys.argv[:1])
    from app.multilingual_window import model_preset_index

    window = open_window(app)
    if os.environ.get("SCREENSHOTS_SEEDS_ONLY"):  # only the tutorials' scenes, in Chinese, at the screen's size
        window = window.switch_language("zh_CN")
        window.move(0, 0)
        window.resize(window.screen().availableGeometry().size())
        settle(app, window)
        seed_scenes(app, window, os.environ.get("SCREENSHOTS_PREFIX", "seeds"))
        window.close()
        return

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
        from engine.models.minilm import find_model_dir

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
    decoder_scenes(app, window)

    try:  # multilingual-e5-small: 小明喜欢苹果 by words, then 苹果 and apple across languages
        from app.presets import MODEL_PRESETS
        from engine.models.e5 import find_model_file

        find_model_file()
        shown = [key for key, dock in window.docks.items() if not dock.visibleRegion().isEmpty()]
        titles = [p.title for p in MODEL_PRESETS]
        window.apply_preset(model_preset_index(titles.index("Multilingual: 小明喜欢苹果 by words")))
        settle(app, window, 2.0)
        shoot(app, window, "e5-words.png")
        window.apply_preset(model_preset_index(titles.index("Multilingual: 苹果 and apple")))
        settle(app, window, 2.0)
        shoot(app, window, "e5-across-languages.png")
        window.controller.set_by_words(False)
        window.model_combo.setCurrentIndex(window.model_combo.findData("toy"))
        for key in shown:  # the later scenes see the tabs as before
            window.docks[key].raise_()
        settle(app, window)
    except Exception as error:  # noqa: BLE001 - the model is optional
        print("e5 screenshots skipped:", error)


    window = window.switch_language("zh_CN")
    window.move(0, 0)
    set_text(window, "小明把苹果给了小红，她很高兴。")
    settle(app, window)
    window.controller.select(focus=7)
    shoot(app, window, "chinese.png")
    window.show_player().set_stage(5)
    shoot(app, window, "chinese-player.png")
    seed_scenes(app, window)
    window.close()

    figure = OUT / "export-all-heads.png"
    subprocess.run([sys.executable, str(ROOT / "main.py"), "export", "--text", "I ate the cake and it was delicious.",
                    "--head", "all", "--width", "1400", "--out", str(figure)], check=True)
    print("wrote", figure)


if __name__ == "__main__":
    main()
