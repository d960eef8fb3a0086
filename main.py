"""Attention Explorer: ``python main.py`` opens the window; ``python main.py export …`` writes a trace.

Deliberately tiny: exporting must start fast and never import Qt (see app/cli.py).
"""
import sys

from app.cli import main

if __name__ == "__main__":
    sys.exit(main())
