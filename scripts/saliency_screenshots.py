"""Screenshots of the Saliency dock (to look at): SmolLM2's integrated gradients of log p(" Paris"), and
MiniLM's input × gradient of the sentence-embedding cosine to another sentence's, and the toy engine's
(its default settings: the cosine of its mean output to the answer text's).

    xvfb-run -a -s "-screen 0 1600x1000x24" .venv/bin/python scripts/saliency_screenshots.py
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

from PySide6.QtWidgets import QApplication  # noqa: E402

import screenshots  # noqa: E402
from evidence_screenshots import raise_dock, wait  # noqa: E402
from screenshots import settle, shoot  # noqa: E402

screenshots.OUT = Path(os.environ.get("SCREENSHOTS_OUT", ROOT / "docs" / "images"))


def main() -> None:
    app = QApplication(sys.argv[:1])
    window = screenshots.open_window(app)
    for model, text, answer, method, name in (
            ("smollm2", "The capital of France is", " Paris", "ig", "saliency-smollm2-ig.png"),
            ("minilm", "The cat sat on the mat.", "A kitten rests on a rug.", "ixg", "saliency-minilm-ixg.png"),
            ("toy", "The cat sat on the mat because it was tired", "A kitten rests on a rug", "ixg",
             "saliency-toy-ixg.png")):
        screenshots.set_text(window, text)
        window.model_combo.setCurrentIndex(window.model_combo.findData(model))
        settle(app, window, 2.0)
        panel = raise_dock(window, "saliency")
        panel.answer.setText(answer)
        panel.method.setCurrentIndex(panel.method.findData(method))
        panel.start()
        wait(app, lambda: panel.result is not None)
        settle(app, window, 1.0)
        shoot(app, window, name)
    window.close()


if __name__ == "__main__":
    main()
