"""The main window's parts, one job a module (app/window.py composes them).

Each part is built with the window and keeps its own state; parts reach each other through the
window's public attributes (``window.sessions``, ``window.status`` …) and the controller, never
through another part's ``_private`` names (tests/project/test_private_names.py).
"""
