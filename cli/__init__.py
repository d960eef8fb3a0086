"""The command line (``./run export …``, ``./run --help``): no Qt here, so exporting starts fast.

cli/commands.py is the command line itself; the window's options are parsed in the same place.
"""
