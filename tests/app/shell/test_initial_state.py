"""First states a newcomer meets: model facts, help, title, folders, the form."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from PySide6.QtWidgets import QApplication
from tests import ROOT



@pytest.mark.slow
def test_examples_table_is_the_tutorials_and_loads(window):
    table = json.loads((ROOT / "examples" / "table.json").read_text(encoding="utf-8"))
    assert table == {"小明": [1, 0], "喜欢": [0, 1], "苹果": [1, 1]}
    panel = window.panels["input"]
    assert "examples/table.json" in panel.load_table.toolTip()
    window.controller.set_config(window.controller.config.replace(text="小明 喜欢 苹果", tokenizer="whitespace",
                                                                  d_model=2, heads=1), immediate=True)
    assert panel.load_table_file(str(ROOT / "examples" / "table.json"))
    assert window.wait_until_idle(30)
    assert dict(window.controller.config.embeddings)["苹果"] == (1.0, 1.0)


@pytest.mark.slow
def test_divisible_message_does_not_move_the_form(window):
    panel = window.panels["input"]
    seed_top = panel.seed.mapTo(panel, panel.seed.rect().topLeft()).y()
    panel.heads.setValue(5)  # 64 is not divisible by 5
    QApplication.processEvents()
    assert panel.messages["heads"].isVisible() and "divisible" in panel.messages["heads"].text()
    assert panel.seed.mapTo(panel, panel.seed.rect().topLeft()).y() == seed_top
    panel.heads.setValue(4)
    QApplication.processEvents()
    assert panel.seed.mapTo(panel, panel.seed.rect().topLeft()).y() == seed_top


@pytest.mark.slow
def test_title_names_the_open_session(window, tmp_path):
    assert window.windowTitle() == "Attention Explorer"
    path = tmp_path / "my-sentence.json"
    assert window.save_session(str(path))
    assert window.windowTitle() == "my-sentence.json[*] — Attention Explorer"  # [*]: where Qt marks "modified"
    assert not window.isWindowModified()
    other = tmp_path / "other.json"
    other.write_text(path.read_text(encoding="utf-8"), encoding="utf-8")
    assert window.open_session(str(other))
    assert window.windowTitle().startswith("other.json") and not window.isWindowModified()
    # a lesson's step (a preset on another model) changes what the file holds: the title says so
    window.lesson = {"tutorial": 0, "step": 1}
    window.controller.set_model("minilm")
    assert window.isWindowModified()
    assert window.save_session(str(other)) and not window.isWindowModified()
    window.controller.update_config(text="Another sentence.")
    assert window.isWindowModified()


@pytest.mark.slow
def test_file_dialogs_remember_the_folder_per_kind(window, tmp_path):
    sessions, images = tmp_path / "sessions", tmp_path / "images"
    sessions.mkdir()
    images.mkdir()
    assert window.save_session(str(sessions / "s.json"))
    assert window.export_heatmap(str(images / "h.png"), 0, 200)
    assert Path(window.sessions.last_folder(kind="session")) == sessions
    assert Path(window.sessions.last_folder(kind="image")) == images
    assert Path(window.sessions.last_folder("x.png", "image")) == images / "x.png"


@pytest.mark.slow
def test_help_has_a_guide_shortcuts_and_credits(window, monkeypatch):
    from PySide6.QtWidgets import QMessageBox, QTextBrowser

    from PySide6.QtWidgets import QMenu

    texts = [action.text() for menu in window.menuBar().findChildren(QMenu) for action in menu.actions()]
    assert any("Getting started" in t for t in texts) and any("Keyboard shortcuts" in t for t in texts)
    window.help.shortcuts()
    shortcuts = window.help.dialog.findChild(QTextBrowser).toPlainText()
    assert "Ctrl+E" in shortcuts and "F6" in shortcuts and "Show the step-through player" in shortcuts
    window.help.dialog.close()
    window.help.guide()
    assert "Cell inspector" in window.help.dialog.findChild(QTextBrowser).toPlainText()
    window.help.dialog.close()
    shown = []
    monkeypatch.setattr(QMessageBox, "about", lambda parent, title, text: shown.append(text))
    window.help.about()
    assert "0.1.0" in shown[0] and "Apache-2.0" in shown[0] and "all-MiniLM-L6-v2" in shown[0]


def test_presets_name_the_tutorials_not_their_file_ids():
    from app.presets import PRESETS

    titles = [title for title, _ in PRESETS]
    assert not any("seed 00" in title for title in titles), titles
    assert any("Self-Attention 本质" in title for title in titles)


@pytest.mark.slow
def test_minilm_mode_shows_the_models_own_facts(window, require_model):
    require_model("minilm")
    panel = window.panels["input"]
    window.model_combo.setCurrentIndex(window.model_combo.findData("minilm"))
    assert window.wait_until_idle(120)
    facts = panel.model_facts.text()
    assert panel.model_facts.isVisible() and not panel.settings_box.isVisible()
    assert "6 layers × 12 heads" in facts and "d_model 384" in facts and "learned position" in facts
    window.model_combo.setCurrentIndex(window.model_combo.findData("toy"))
    assert window.wait_until_idle(60)
    assert panel.settings_box.isVisible() and not panel.model_facts.isVisible()
