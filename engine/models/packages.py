"""The one package finder: where an installed model package's files lie, without importing it
(importing would run its ``__init__``: sentence-transformers, llm, … that the engine never needs)."""
from __future__ import annotations

import importlib.util
from pathlib import Path


def package_locations(package: str) -> list[Path]:
    """The folders of installed package ``package`` ([] when it is not installed)."""
    try:
        spec = importlib.util.find_spec(package)
    except (ImportError, ValueError):
        spec = None
    return [Path(location) for location in (spec.submodule_search_locations or [])] if spec is not None else []


def package_file(package: str, relative: str) -> tuple[Path | None, bool]:
    """(the file ``relative`` inside installed package ``package`` or None, whether the package is installed)."""
    locations = package_locations(package)
    for location in locations:
        path = location / relative
        if path.is_file():
            return path, True
    return None, bool(locations)
