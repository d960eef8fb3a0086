"""Screenshots of the later lessons' views, English and Chinese: GPU against RNN, the paper's diagram,
the Netflix sum and the scaling lab's sensitivity sweep.

    xvfb-run -a -s "-screen 0 1366x768x24" python scripts/lessons2_screenshots.py   # → /tmp/lessons2/{en,zh_CN}/…

Until the lead rebuilds the .qm, the Chinese strings of resources/i18n/zh_CN/lessons2.json are laid
over the catalogue by a translator made from that file (a preview: nothing is written to the .ts/.qm).
"""
from __future__ import annotations

import json
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "scripts"))
os.environ.setdefault("QT_QPA_PLATFORM", "xcb" if os.environ.get("DISPLAY") else "offscreen")

from PySide6.QtCore import QTranslator  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402

import screenshots  # noqa: E402


class JsonTranslator(QTranslator):
    """The branch's JSON translations, asked after the .qm finds nothing."""

    def __init__(self, path: Path, parent=None) -> None:
        super().__init__(parent)
        self.table = {(e["context"], e["source"]): e["translation"] for e in json.loads(path.read_text("utf-8"))}

    def translate(self, context, source, disambiguation=None, n=-1):  # noqa: D401 - Qt's signature
        return self.table.get((context, source), "")

    def isEmpty(self) -> bool:  # noqa: N802 - Qt name
        return False


def wait(app, condition, seconds: float = 120.0) -> None:
    deadline = time.monotonic() + seconds
    while not condition() and time.monotonic() < deadline:
        app.processEvents()
        time.sleep(0.02)


def main() -> None:
    app = QApplication(sys.argv[:1])
    from app import lesson_views
    from figures.fonts import install_cjk_font
    from app.shell.identity import use_settings_folder
    from app.window import MainWindow

    use_settings_folder(tempfile.mkdtemp())
    install_cjk_font(app)
    language = os.environ.get("LESSONS2_LANGUAGE", "en")
    window = MainWindow(restore=False)
    if language != "en":
        app.installTranslator(JsonTranslator(ROOT / "resources" / "i18n" / "zh_CN" / "lessons2.json", app))
        window = window.switch_language(language)
    out = Path(os.environ.get("LESSONS2_OUT", "/tmp/lessons2")) / language
    out.mkdir(parents=True, exist_ok=True)
    window.resize(1366, 768)
    window.show()
    screenshots.set_text(window, "I ate the cake and it was delicious.")
    screenshots.settle(app, window)

    parallel = lesson_views.show_parallel(window)
    wait(app, parallel.is_idle)
    screenshots.settle(app, window, 0.3)
    parallel.grab().save(str(out / "parallel.png"))

    movies = lesson_views.show_movie_sum(window)
    wait(app, lambda: movies.result is not None)
    screenshots.settle(app, window, 0.3)
    movies.grab().save(str(out / "movie_sum.png"))

    diagram = lesson_views.show_diagram(window)
    window.show_player().set_stage(5)  # softmax: its box outlined
    screenshots.settle(app, window, 0.3)
    diagram.grab().save(str(out / "diagram.png"))

    window.docks["scaling"].show()
    window.docks["scaling"].raise_()
    panel = window.panel("scaling")
    wait(app, lambda: panel.sweep is not None and panel.is_idle())
    screenshots.settle(app, window, 0.5)
    panel.grab().save(str(out / "scaling_sensitivity.png"))
    window.grab().save(str(out / "window_scaling.png"))
    print("wrote", *sorted(p.name for p in out.glob("*.png")))


if __name__ == "__main__":
    main()
