"""The Corpus dock on a finished job, in English and Chinese: the head table and the head clusters.

    ./run corpus --model minilm --texts sentences.txt --out /tmp/minilm1000 --limit 1000
    CORPUS_JOB=/tmp/minilm1000 xvfb-run -a -s "-screen 0 1366x768x24" python scripts/corpus_screenshots.py
    # → /tmp/corpus-shots/corpus-{en,zh_CN}.png, …-qk.png (the joint query-key map), …-tsne.png (by t-SNE),
    # …-opened.png (a head opened), corpus-en-layer.png (coloured by layer)

A window as on a first run (a temporary settings folder) at the screen's size, the Corpus dock
raised with the job open (coloured by the weight on the previous token, then by layer), then the
head at the top of the "on previous token" column opened on its most typical sentence.
"""
from __future__ import annotations

import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("QT_QPA_PLATFORM", "xcb" if os.environ.get("DISPLAY") else "offscreen")

from PySide6.QtCore import Qt  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402


def settle(window, seconds: float = 0.5) -> None:
    window.wait_until_idle(120)
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        QApplication.processEvents()
        time.sleep(0.01)


def main() -> None:
    job = os.environ["CORPUS_JOB"]
    out = Path(os.environ.get("CORPUS_SHOTS", "/tmp/corpus-shots"))
    out.mkdir(parents=True, exist_ok=True)
    app = QApplication(sys.argv[:1])
    from figures.fonts import install_cjk_font
    from app.i18n import install_translator
    from app.shell.identity import use_settings_folder
    from app.window import MainWindow

    install_cjk_font(app)
    for language in ("en", "zh_CN"):
        use_settings_folder(tempfile.mkdtemp())
        install_translator(app, language)
        window = MainWindow(restore=False)
        window.resize(window.screen().availableGeometry().size())
        window.show()
        settle(window)
        window.docks["corpus"].show()
        window.docks["corpus"].raise_()
        panel = window.panel("corpus")
        panel.open_folder(job)
        while panel.arrays is None:
            settle(window, 0.1)
        panel.colour_by.setCurrentIndex(panel.colour_by.findData("previous"))
        panel.view.sortByColumn(5, Qt.SortOrder.DescendingOrder)
        settle(window)
        if language == "en":
            panel.colour_by.setCurrentIndex(panel.colour_by.findData("layer"))
            settle(window)
            window.grab().save(str(out / "corpus-en-layer.png"))
            panel.colour_by.setCurrentIndex(panel.colour_by.findData("previous"))
        path = out / f"corpus-{language}.png"
        window.grab().save(str(path))
        print("wrote", path)
        panel.tabs.setCurrentIndex(1)  # the joint query-key map of the table's first head
        panel.view.setCurrentIndex(panel.proxy.index(0, 0))
        settle(window)
        path = out / f"corpus-{language}-qk.png"
        window.grab().save(str(path))
        print("wrote", path)
        panel.qk_method.setCurrentIndex(panel.qk_method.findData("tsne"))  # the same head by t-SNE
        settle(window)
        path = out / f"corpus-{language}-tsne.png"
        window.grab().save(str(path))
        print("wrote", path)
        panel.qk_method.setCurrentIndex(panel.qk_method.findData("points"))
        panel.tabs.setCurrentIndex(0)
        panel.view.doubleClicked.emit(panel.proxy.index(0, 0))
        settle(window, 2.0)
        path = out / f"corpus-{language}-opened.png"
        window.grab().save(str(path))
        print("wrote", path)
        window.close()
        window.controller.shutdown()


if __name__ == "__main__":
    main()
