"""The command that installs a package into the Python running the app (not whichever ``pip``
comes first on the PATH: that one often belongs to another Python, and the app then still says
the model is missing)."""
from __future__ import annotations

import sys


def pip_install(arguments: str) -> str:
    """``"<this interpreter>" -m pip install <arguments>``, quoted for bash, zsh and cmd alike."""
    return f'"{sys.executable or "python3"}" -m pip install {arguments}'
