"""Tests of app/shell/: the window, its menus, layout, help and dialogs."""
