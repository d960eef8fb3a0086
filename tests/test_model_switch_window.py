"""Switching models and presets in the window: what is on screen after the switch belongs to the new
model (its layer, head and focus within it, its caption over its own heatmap), and the bottom place
the user chose stays where it is."""
from __future__ import annotations

import time

import pytest
from PySide6.QtWidgets import QApplication

from app.presets import menu_presets


def _index(fragment: str) -> int:
    matches = [i for i, p in enumerate(menu_presets()) if fragment in p.title]
    assert len(matches) == 1, fragment
    return matches[0]


def _settle(window, until, timeout: float = 90.0) -> None:
    """Process events until ``until()`` holds and the window is idle (presets look up in a lane of their own)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        QApplication.processEvents()
        if until() and window.wait_until_idle(1):
            return
        time.sleep(0.01)
    raise AssertionError("the window did not settle")


@pytest.mark.slow
@pytest.mark.parametrize("first", ["MiniLM: “it” → “animal”", "SmolLM2: “it” → “animal”"])
def test_a_multilingual_preset_after_another_models_preset_opens_on_its_own_model(window, first):
    """Opening a preset clears the caption, and the emptied caption looked like an undo followed by a
    redo of the previous preset: its model came back with the new preset's caption over it."""
    c, panel = window.controller, window.panels["attention"]
    window.apply_preset(_index(first))
    _settle(window, lambda: c.snapshot.model != "toy" and bool(panel.preset_caption.text()))
    item = window.apply_preset(_index("她 → 小红"))
    _settle(window, lambda: c.snapshot.model == "e5" and bool(panel.preset_caption.text()))
    assert c.model == "e5" and window.navigation.preset_opener.preset.title == item.title
    assert "小红" in panel.preset_caption.text()
    assert "她" in c.snapshot.result.token_texts[c.focus]
