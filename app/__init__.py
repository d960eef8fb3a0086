"""Attention Explorer's desktop window (Qt). Import nothing here: the engine and the CLI must load without Qt."""
