"""Switching models and presets in the window: what is on screen after the switch belongs to the new
model (its layer, head and focus within it, its caption over its own heatmap), and the bottom place
the user chose stays where it is."""
from __future__ import annotations

import time

import pytest
from PySide6.QtWidgets import QApplication

from app.presets import menu_presets

pytestmark = pytest.mark.slow  # whole windows and real models


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
    assert "(it has" not in window.statusBar().currentMessage()  # the preset's own head is no clamped one
    item = window.apply_preset(_index("她 → 小红"))
    _settle(window, lambda: c.snapshot.model == "e5" and bool(panel.preset_caption.text()))
    assert c.model == "e5" and window.navigation.preset_opener.preset.title == item.title
    assert "小红" in panel.preset_caption.text()
    assert "她" in c.snapshot.result.token_texts[c.focus]
    layers = window.panel("layers")
    _settle(window, lambda: layers.key_combo.count() == c.snapshot.result.n)
    assert "小" in layers.key_combo.currentText()  # Model layers' target is the preset's key word, not <s>
    # 她 → 小红 against 她 → 小明: both layer × head grids side by side, cell by cell what the caption counts
    from engine.analysis import pronoun_evidence

    from app.jobs.trained import trace
    from app.jobs.words import WordTrace

    text = c.snapshot.result.config.text
    words = WordTrace(trace("e5", text), text)
    counted = pronoun_evidence.contrast(words, "她", "小红", "小明")
    to_xiaohong, to_xiaoming = (view.matrix() for view in layers.two_key_maps)
    assert to_xiaohong.shape == to_xiaoming.shape == (12, 12)
    assert int((to_xiaohong > to_xiaoming).sum()) == counted.key_wins
    assert to_xiaoming.max() == pytest.approx(counted.rival_best[2]) and \
        to_xiaohong.max() == pytest.approx(counted.key_best[2])
    assert f"in {counted.key_wins} of 144 heads" in layers.two_keys_caption.text()
    assert layers.tabs.currentIndex() == layers.tabs.count() - 1 and window.dock_groups.current == "model"


SENTENCE = "The animal didn't cross the street because it was too tired."


@pytest.mark.slow
def test_a_switch_to_a_shallower_model_keeps_the_place_the_layer_within_it_and_the_focused_word(window):
    c, groups = window.controller, window.dock_groups
    c.update_config(text=SENTENCE)
    c.set_model("smollm2", 25)
    _settle(window, lambda: c.snapshot.model == "smollm2")
    c.select(focus=[t.strip() for t in c.snapshot.result.token_texts].index("it"))
    groups.select("analysis")
    window.layer_spin.setValue(20)  # a layer typed while Analysis is shown
    _settle(window, lambda: c.snapshot.layer == 20)
    assert groups.current == "analysis"
    c.set_model("minilm")
    # at once, before the new model's picture: a busy sign, and the heatmap says whose picture it still is
    assert window.busy.isVisibleTo(window) and "SmolLM2" in window.panels["attention"].caption.text()
    _settle(window, lambda: c.snapshot.model == "minilm")
    QApplication.processEvents()
    assert (c.layer, window.layer_spin.value(), c.snapshot.layer) == (5, 5, 5)
    assert c.last_failure is None and "Not updated" not in window.statusBar().currentMessage()
    assert "layer 20 → 5" in window.statusBar().currentMessage()
    assert c.snapshot.result.token_texts[c.focus] == "it"  # the same word, at its new position
    assert groups.current == "analysis"


@pytest.mark.slow
def test_the_language_switch_keeps_the_place_and_the_preset_caption(window):
    import app.i18n as i18n

    window.apply_preset(_index("the hand calculation"))
    assert window.wait_until_idle()
    caption = window.panels["attention"].preset_caption.text()
    window.dock_groups.select("analysis")
    chinese = window.switch_language(i18n.CHINESE)
    try:
        assert chinese.wait_until_idle(30)
        QApplication.processEvents()
        assert chinese.dock_groups.current == "analysis"
        shown = chinese.panels["attention"].preset_caption
        assert shown.isVisibleTo(chinese) and shown.text() and shown.text() != caption  # in Chinese now
    finally:
        chinese.close()
        i18n.install_translator(QApplication.instance(), i18n.ENGLISH)
