"""The window's command-line options, declared once: ``./run --help`` (cli/commands.py's top
parser), the window's own parsing at start (app/shell/startup.py) and the dispatch that tells a window
start from a command all read this table. Standard library only (exporting never imports Qt)."""
from __future__ import annotations

import argparse
import re

# option → argparse keywords; a new window option is one row here
WINDOW_OPTIONS: dict[str, dict] = {
    "--session": dict(metavar="FILE", help="open this session file at start"),
    "--text": dict(help="start with this sentence"),
    "--model": dict(metavar="NAME|FILE.gguf|FOLDER",
                    help="start with this model: a registry name (e.g. smollm2), a local GGUF file or a Hugging "
                         "Face model folder ({families})"),
}


def add_window_options(parser: argparse.ArgumentParser) -> None:
    from engine.models.families import folder_families  # the registry: one module a family

    for flag, keywords in WINDOW_OPTIONS.items():
        parser.add_argument(flag, **dict(keywords, help=keywords["help"].replace("{families}", folder_families())))


def starts_window(args: list[str]) -> bool:
    """True when the arguments (program name left out) open the window rather than run a command."""
    return not args or any(args[0] == flag or args[0].startswith(flag + "=") for flag in WINDOW_OPTIONS)


def parse_arguments(argv: list[str]) -> argparse.Namespace:
    """The window's options (argparse's own errors: usage and exit code 2)."""
    parser = argparse.ArgumentParser(prog="main.py", description="Attention Explorer: watch self-attention work.")
    add_window_options(parser)
    return parser.parse_args(argv)


def parse_ablate(text: str | None) -> frozenset:
    """``--ablate 3.1,5.11`` → {(3, 1), (5, 11)}, for every command that takes it (the model checks
    that the pairs exist); ValueError with the one line to show otherwise."""
    if not text:
        return frozenset()
    pairs = set()
    for item in text.split(","):
        match = re.fullmatch(r"([0-9]+)\.([0-9]+)", item.strip(), flags=re.ASCII)
        if match is None:
            raise ValueError(f"--ablate takes layer.head pairs of whole numbers separated by commas (e.g. 0.1,3.5); "
                             f"got {item.strip()!r}")
        pairs.add((int(match.group(1)), int(match.group(2))))
    return frozenset(pairs)
