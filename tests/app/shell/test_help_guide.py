"""Help → Getting started names what the window has: every place along the bottom with its
shortcut range, and every family a GGUF file or a model folder may be of."""
from __future__ import annotations

from PySide6.QtCore import QCoreApplication


def test_the_guide_names_every_place_its_shortcuts_and_every_family(qapp):
    from app.dock_groups import GROUPS
    from app.shell.help import Help
    from engine.models.families import folder_families, gguf_architectures, registry

    shown = []
    guide = Help(None)
    guide.show = lambda title, text: shown.append(text)
    guide.guide()
    text = shown[0]
    for _name, title in GROUPS:
        assert f"<b>{QCoreApplication.translate('DockGroups', title)}</b>" in text
    assert f"Ctrl+Alt+1 … {len(GROUPS)}" in text
    assert gguf_architectures() in text and "gemma2" in gguf_architectures()
    assert folder_families() in text and all(family in text for family in registry())
