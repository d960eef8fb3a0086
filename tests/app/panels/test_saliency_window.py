"""The Saliency dock: bars of the worker's result (never computed on the GUI thread), the method and the
window's switched-off heads honoured, on MiniLM (its target: the sentence-embedding cosine to the answer
text's) and on the toy engine with the window's settings."""
from __future__ import annotations

import numpy as np
import pytest

from engine.analysis.request import RunRequest
from engine.analysis.saliency_request import request_saliency
from tests.shared_helpers import dock as _dock, settle as _settle  # noqa: E402

pytestmark = pytest.mark.slow  # a window, and a bundled model

TEXT = "The cat sat on the mat."
ANSWER = "A kitten rests on a rug."


def test_saliency_bars_by_method_with_heads_off(window, qtbot, minilm):
    c = window.controller
    c.set_config(c.config.replace(text=TEXT), immediate=True)
    window.model_combo.setCurrentIndex(window.model_combo.findData("minilm"))
    _settle(window, qtbot)
    off = frozenset({(0, 1), (3, 5)})
    c.set_ablation(off)
    qtbot.waitUntil(lambda: c.snapshot is not None and c.snapshot.ablate == off, timeout=120000)
    panel = _dock(window, "saliency")
    panel.answer.setText(ANSWER)
    panel.method.setCurrentIndex(panel.method.findData("ig"))
    panel.start()
    qtbot.waitUntil(lambda: panel.result is not None, timeout=120000)
    expected = request_saliency(minilm, RunRequest(text=TEXT, ablate=off, answer=ANSWER), "ig").result
    plain = request_saliency(minilm, RunRequest(text=TEXT, answer=ANSWER), "ig").result
    np.testing.assert_allclose(panel.values(), expected.scores, atol=1e-9)
    np.testing.assert_allclose(panel.bars.opts["height"], expected.scores, atol=1e-9)
    assert np.abs(plain.scores - expected.scores).max() > 1e-4  # ignoring the switched-off heads fails
    assert "completeness" in panel.caption.text() and "2 heads switched off" in panel.caption.text()


def test_saliency_of_the_toy_follows_the_windows_settings(window, qtbot):
    """The toy engine: bars of the window's own settings (the default toy's differ), a change of the
    settings said under them, integrated gradients refused with the reason."""
    from engine.models.toy import ToyModel

    c = window.controller
    c.set_config(c.config.replace(text=TEXT, d_model=16, heads=2, seed=3, mask="causal"), immediate=True)
    qtbot.waitUntil(lambda: c.snapshot is not None and c.snapshot.result.config.d_model == 16, timeout=30000)
    panel = _dock(window, "saliency")
    panel.answer.setText(ANSWER)
    panel.method.setCurrentIndex(panel.method.findData("ixg"))
    panel.start()
    qtbot.waitUntil(lambda: panel.result is not None, timeout=30000)
    expected = request_saliency(ToyModel(c.config), RunRequest(text=TEXT, answer=ANSWER), "ixg").result
    default = request_saliency(ToyModel(), RunRequest(text=TEXT, answer=ANSWER), "ixg").result
    np.testing.assert_allclose(panel.bars.opts["height"], expected.scores, atol=1e-9)
    assert np.abs(default.scores - expected.scores).max() > 1e-4  # the default toy's bars would fail
    assert panel.caption.text().startswith(f"cosine of the sentence embedding to {ANSWER!r}'s = ")
    _caption_in_chinese(panel)
    c.set_config(c.config.replace(seed=4), immediate=True)
    qtbot.waitUntil(lambda: "settings changed" in panel.caption.text(), timeout=30000)
    panel.method.setCurrentIndex(panel.method.findData("ig"))
    panel.start()
    qtbot.waitUntil(lambda: "integrated gradients need" in panel.caption.text(), timeout=30000)


def _caption_in_chinese(panel) -> None:
    """The caption drawn again in a Chinese window says what the target is in Chinese (the engine's
    description of it is English)."""
    from PySide6.QtWidgets import QApplication

    from app import i18n

    try:
        i18n.install_translator(QApplication.instance(), "zh_CN")
        panel._on_done(panel.result)
        chinese = panel.caption.text()
    finally:
        i18n.install_translator(QApplication.instance(), i18n.ENGLISH)
        panel._on_done(panel.result)
    assert chinese.startswith(f"句向量与 {ANSWER!r} 的句向量的余弦 = ") and "cosine" not in chinese, chinese
