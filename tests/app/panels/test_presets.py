"""The window shows each preset as the tutorial has it: after Presets → entry, the focused token,
the head, the stage, the caption over the heatmap and the heatmap's numbers (the tutorial's, or
the corrected exact value) are on screen — not only in the engine (tests/engine/toy/test_seeds.py)."""
from __future__ import annotations

import numpy as np
import pytest

from app.presets import TOY, MODEL_PRESETS, menu_presets

pytestmark = pytest.mark.slow  # a whole window a test

# title fragment → (focus token, its row at the preset's stage, to the tutorial's printed precision)
TUTORIAL_ROWS = {
    "the hand calculation": ("喜欢", [0.155, 0.422, 0.422], 3),  # weights; the tutorial rounds to 0.16/0.42/0.42
    "4-d embeddings of": ("喜欢", [1, 2, 1], 6),  # raw scores
    "Scores 8 / 5 / 7": ("喜欢", [0.705, 0.035, 0.259], 3),  # not the tutorial's [0.7, 0.1, 0.2]
    "Frames 5–7": ("喜欢", [0.45, 0.10, 0.45], 2),
    "scores 1.3 / 0.4 / 1.6": ("cake", None, 2),  # raw scores, checked by key below
    "b₁ =": ("我", [0.245, 0.015, 0.245, 0.496], 3),
    "The team meeting": ("成员A", [0.161, 0.217, 0.358, 0.265], 3),
}


def _open(window, index):
    item = window.apply_preset(index)
    assert window.wait_until_idle()
    return item


def _index(fragment):
    matches = [i for i, p in enumerate(TOY) if fragment in p.title]
    assert len(matches) == 1, fragment
    return matches[0]


def test_every_toy_preset_opens_with_its_focus_head_stage_and_caption(window):
    c, panel = window.controller, window.panels["attention"]
    for index, item in enumerate(TOY):
        shown = _open(window, index)
        result = c.snapshot.result
        assert result.config == item.config(), item.title
        if item.focus is not None:
            assert result.token_texts[c.focus] == item.focus, (item.title, result.token_texts, c.focus)
        assert (c.head, c.stage) == (item.head, item.stage), item.title
        assert panel.head.value() == item.head and panel.stage.currentData() == item.stage
        assert panel.preset_caption.isVisibleTo(window) and panel.preset_caption.text() == shown.caption
        assert shown.caption  # translated when a translator is installed; English here


@pytest.mark.parametrize("fragment", sorted(TUTORIAL_ROWS))
def test_the_heatmap_shows_the_tutorials_numbers(window, fragment):
    focus, row, digits = TUTORIAL_ROWS[fragment]
    item = _open(window, _index(fragment))
    c = window.controller
    texts = c.snapshot.result.token_texts
    assert texts[c.focus] == focus
    shown = window.panels["attention"].heatmap.matrix()[c.focus]
    assert window.panels["attention"].stage.currentData() == item.stage
    if row is not None:
        np.testing.assert_allclose(shown, row, atol=0.5 * 10 ** -digits)
    else:  # seed 001's figures: cake·it = 1.30, cake·I = 0.40, cake·cake = 1.60
        for key, value in (("it", 1.30), ("I", 0.40), ("cake", 1.60)):
            assert round(float(shown[texts.index(key)]), 2) == value


def test_hand_calculation_opens_on_喜欢_not_小明(window):
    _open(window, _index("the hand calculation"))
    assert window.controller.snapshot.result.token_texts[window.controller.focus] == "喜欢"
    assert window.panels["attention"].heatmap.matrix().shape == (3, 3)


def test_512_preset_shows_head_1_of_8(window):
    item = _open(window, _index("512 dimensions"))
    assert window.controller.head == 1 == window.panels["attention"].head.value()
    assert window.controller.snapshot.result.weights.shape[0] == 8 and item.config().d_k == 64
    assert "65–128" in window.panels["attention"].preset_caption.text()


def test_changing_a_setting_hides_the_caption(window):
    _open(window, _index("the hand calculation"))
    panel = window.panels["attention"]
    assert panel.preset_caption.isVisibleTo(window)
    window.controller.update_config(text="小明 喜欢 香蕉")
    assert window.wait_until_idle()
    assert not panel.preset_caption.isVisibleTo(window)


def test_a_menu_entry_opens_each_preset(window):
    from PySide6.QtWidgets import QMenu

    menu = next(m for m in window.menuBar().findChildren(QMenu) if m.title().replace("&", "") == "Presets")
    titles = [a.text() for a in menu.actions() if not a.isSeparator()]
    assert len(titles) == len(menu_presets())
    menu.actions()[_index("Scores 8 / 5 / 7")].trigger()
    assert window.wait_until_idle()
    assert window.panels["attention"].preset_caption.text().startswith("“Self-Attention 本质”")


def test_minilm_preset_opens_at_the_strongest_head_with_the_caption_filled(window, qtbot, require_model):
    require_model(MODEL_PRESETS[0].model)
    index = next(i for i, p in enumerate(menu_presets()) if p.model != "toy" and p.key == "cake" and p.focus == "it")
    window.apply_preset(index)
    caption = window.panels["attention"].preset_caption
    qtbot.waitUntil(lambda: caption.isVisibleTo(window), timeout=60000)
    assert window.wait_until_idle(60)
    c = window.controller
    from engine.analysis.meaning import strongest_head

    finding = strongest_head(c.snapshot.bert, "it", "cake")
    assert (c.model, c.layer, c.head) == (menu_presets()[index].model, finding.layer, finding.head)
    assert c.snapshot.result.token_texts[c.focus] == "it"
    assert f"{finding.weight:.2f}" in caption.text() and "%" not in caption.text()
    row = window.panels["attention"].heatmap.matrix()[c.focus]
    assert round(float(row[finding.key_index]), 2) == round(finding.weight, 2)
    assert c.cell == (finding.query_index, finding.key_index)  # the inspector takes it → cake apart


def test_projections_from_a_file_show_as_custom_weights_and_errors_as_for_the_table(window, tmp_path):
    import json

    from app.presets import PRESET_DIR

    panel, c = window.panels["input"], window.controller
    _open(window, _index("scores 1.3 / 0.4 / 1.6"))  # a preset whose W_Q, W_K, W_V come from a file
    assert c.config.projections is not None
    assert panel.weights.currentData() == "custom" and "W_Q" in panel.weights.currentText()
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"w_q": [[1, 0], [0, 1]], "w_k": [[1, 0], [0, 1]], "w_v": [[1, 0], [0, 1]]}))
    before = c.config
    assert not panel.load_projections_file(str(bad))  # 2 × 2 for d_model 4: refused, nothing changes
    assert c.config == before and panel.messages["projections"].isVisibleTo(window)
    assert "d_model" in panel.messages["projections"].text()
    panel.heads.setValue(2)  # another setting keeps the file's matrices
    assert window.wait_until_idle()
    assert c.config.projections is not None and c.config.heads == 2
    panel.weights.setCurrentIndex(panel.weights.findData("identity"))  # choosing identity drops them
    assert window.wait_until_idle()
    assert c.config.projections is None and panel.weights.findData("custom") < 0
    assert panel.load_projections_file(str(PRESET_DIR / "seed001_cake_projections.json"))
    assert window.wait_until_idle()
    assert c.config.projections is not None and panel.weights.currentData() == "custom"


def test_word_similarity_in_minilm_puts_pie_nearer_cake_than_keyboard(window, qtbot, require_model):
    from engine.models import ENGLISH_MODEL

    require_model(ENGLISH_MODEL)
    panel = window.navigation.show_similarity()
    panel.model.setCurrentIndex(panel.model.findData(ENGLISH_MODEL))
    panel.words.setText("cake pie keyboard")
    panel.compute()
    qtbot.waitUntil(lambda: panel.result is not None, timeout=60000)
    for key in ("static", "contextual"):
        table = panel.tables[key]
        pie, keyboard = float(table.item(0, 1).text()), float(table.item(0, 2).text())
        assert pie > keyboard, key  # 蛋糕 closer to 派 than to 键盘, in the model's own numbers
        assert float(table.item(1, 1).text()) == 1.0
    assert "“pie”" in panel.status.text()


def test_a_toy_preset_chosen_while_a_model_preset_is_looked_up_wins(window, qtbot, monkeypatch):
    """The finding of a superseded real-model preset never opens over the preset chosen after it."""
    import threading

    import app.jobs.trained
    from engine.analysis.meaning import HeadFinding

    finding = HeadFinding(query="it", key="cake", query_index=6, key_index=4, layer=5, head=11, weight=0.64,
                          runner_up=0.5)
    monkeypatch.setattr(app.jobs.trained, "strongest_head_in", lambda *args: finding)
    gate = threading.Event()
    blocker = window.controller.worker.lane("test-gate", window)
    blocker.submit(gate.wait, 30)  # the worker is busy: both presets' jobs queue behind this
    window.apply_preset(next(i for i, p in enumerate(menu_presets()) if p.model != "toy"))
    toy = window.apply_preset(_index("Scores 8 / 5 / 7"))
    gate.set()  # the toy computation runs first (its lane goes first), the model's lookup after it
    assert window.controller.worker.wait_until_idle(60)
    qtbot.wait(50)
    assert window.wait_until_idle(60)
    c = window.controller
    assert c.model == "toy" and c.snapshot.result.config == toy.config()
    assert c.snapshot.result.token_texts[c.focus] == toy.focus and (c.head, c.stage) == (toy.head, toy.stage)
    assert window.panels["attention"].preset_caption.text() == toy.caption
