"""The Panel base wires a panel to the controller (ndv's _set_model_connected) and panels choose
models by capabilities, never by kind."""
from __future__ import annotations

import ast

import pytest
import shiboken6
from PySide6.QtWidgets import QApplication

from tests import ROOT
from app.controller import Controller
from app.panels.base import Panel
from engine.models import MODELS
from engine.models.contract import Capabilities



class Counting(Panel):
    def __init__(self, controller) -> None:
        super().__init__()
        self.controller = controller
        self.snapshots, self.selections = [], 0
        self.set_model_connected()

    def show_snapshot(self, snapshot) -> None:
        self.snapshots.append(snapshot)

    def show_selection(self) -> None:
        self.selections += 1


def _settle() -> None:
    for _ in range(5):
        QApplication.processEvents()


def test_the_base_connects_disconnects_and_lets_go_of_a_deleted_panel(qtbot):
    controller = Controller()
    try:
        panel = Counting(controller)
        controller.selectionChanged.emit()
        controller.snapshotChanged.emit("first")
        _settle()
        assert panel.selections == 1 and panel.snapshots == ["first"]  # the snapshot through Controller.deferred
        panel.set_model_connected()  # again: still one connection each, not two
        controller.selectionChanged.emit()
        _settle()
        assert panel.selections == 2
        panel.set_model_connected(False)
        controller.selectionChanged.emit()
        controller.snapshotChanged.emit("second")
        _settle()
        assert panel.selections == 2 and panel.snapshots == ["first"]
        panel.set_model_connected()
        shiboken6.delete(panel)  # gone: the deferred wrapper (a plain function) must not call into it
        assert controller.receivers("2selectionChanged()") == 0
        controller.snapshotChanged.emit("third")
        controller.selectionChanged.emit()
        _settle()
    finally:
        controller.shutdown()


def test_panels_need_capabilities_and_registry_entries_declare_them():
    class ToyOnly(Panel):
        NEEDS = {"configurable": True}

    class Trained(Panel):
        NEEDS = {"configurable": False}

    toy, decoder = Capabilities(configurable=True), Capabilities(next_token_logits=True)
    assert ToyOnly.supports(toy) and not ToyOnly.supports(decoder)
    assert Trained.supports(decoder) and not Trained.supports(toy) and Panel.supports(toy)
    for entry in MODELS.values():  # the registry's answer before loading matches what it says elsewhere
        assert entry.capabilities.configurable == entry.configurable
        assert entry.capabilities.next_token_logits == entry.predicts_next_token


def test_app_never_branches_on_a_model_s_kind():
    """Outside the registry, models are told apart by capabilities: app/ reads no ``.kind`` of a
    model entry or facts and imports none of the registry's kind lists."""
    problems = []
    for path in sorted((ROOT / "app").rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("engine.models"):
                problems += [f"{path.name}: imports {a.name}" for a in node.names if a.name.endswith("KINDS")]
            if isinstance(node, ast.Attribute) and node.attr == "kind":
                owner = ast.unparse(node.value)
                if "model_info" in owner or "facts" in owner or "MODELS" in owner or "entry" in owner:
                    problems.append(f"{path.name}:{node.lineno}: {owner}.kind")
    assert problems == []


@pytest.mark.slow
def test_every_dock_comes_from_the_table_with_its_group(window):
    from app.dock_table import DOCKS, group_keys

    assert list(window.docks) == [row.key for row in DOCKS]
    for row in DOCKS:
        dock = window.docks[row.key]
        assert dock.objectName() == f"{row.key}Dock" and dock.windowTitle() == row.title
        assert type(window.panel(row.key)).__name__ == row.panel
        assert window.dock_groups.group_of.get(row.key, "") == row.group
        if row.tab_with and not dock.isHidden():  # (a hidden group's docks report no tabs)
            assert window.docks[row.tab_with] in window.tabifiedDockWidgets(dock), row.key
    assert group_keys("labs")[0] == "positional"  # the row marked front is raised first
    assert [row.key for row in DOCKS if row.group == "labs"] == ["plane", "positional", "scaling"]
