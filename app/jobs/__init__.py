"""The window's Qt-free work, named by role: what the worker thread runs (through lanes) and the
snapshots it hands to the GUI thread. Nothing here imports Qt at module level."""
