"""Attention Explorer: ``python main.py`` opens the window; ``python main.py export …`` writes a trace.

Deliberately tiny: exporting must start fast and never import Qt (see cli/commands.py). This is the
one place that knows both the command line and the window: cli/ never imports the app, so the
window's start is handed to it here.
"""
import sys

from cli.commands import main
from engine.core.memory import keep_freed_memory


def start_window(arguments: list[str]) -> int:
    """The window with ``arguments`` (after the program's name); imported only when it starts."""
    from app.shell.startup import run

    return run(arguments)


def entry() -> int:
    """``./run`` and an installed command: the window or a command, by the arguments."""
    keep_freed_memory()  # reuse freed pages for the next trace (engine/core/memory.py says why)
    return main(window=start_window)


if __name__ == "__main__":
    sys.exit(entry())
