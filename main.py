"""Attention Explorer: ``python main.py`` opens the window; ``python main.py export …`` writes a trace.

Deliberately tiny: exporting must start fast and never import Qt (see cli/commands.py).
"""
import sys

from cli.commands import main
from engine.core.memory import keep_freed_memory


def entry() -> int:
    """The ``attention-explorer`` command of an installed copy: what ``python main.py`` does."""
    keep_freed_memory()  # reuse freed pages for the next trace (engine/core/memory.py says why)
    return main()


if __name__ == "__main__":
    sys.exit(entry())
