"""The engine's packages import in one direction: core < text < toy < models < grad < analysis < files < corpus.

A package may import the packages before it in :data:`ORDER`, never one after it, at module level
or inside a function (a deferred import is the same dependency). So core knows no model, text no
model file, the toy no analysis, a model no analysis and no exporter: each layer can be read,
tested and changed with only the layers below it in mind. ``engine/__init__.py`` is the façade
above them all.
"""
from __future__ import annotations

from tests.project.test_imports import module_graph

ORDER = ("core", "text", "toy", "models", "grad", "analysis", "files", "corpus")  # a corpus job maps the analyses over texts


def package_of(module: str) -> str | None:
    """``engine.models.llama`` → ``models``; None for the façade ``engine`` and non-engine modules."""
    parts = module.split(".")
    return parts[1] if parts[0] == "engine" and len(parts) > 1 else None


def wrong_way(graph: dict[str, set[str]]) -> list[str]:
    """Every import of an engine package from one that comes before it in ORDER (or of a package
    ORDER does not name), as "importer → imported"."""
    found = []
    for module, targets in sorted(graph.items()):
        source = package_of(module)
        if source is None:
            continue
        for target in sorted(targets):
            destination = package_of(target)
            if destination is None or destination == source:
                continue
            if source not in ORDER or destination not in ORDER or ORDER.index(destination) > ORDER.index(source):
                found.append(f"{module} ({source}) → {target} ({destination})")
    return found


def test_the_order_check_catches_an_upward_import_and_an_unknown_package():
    graph = {"engine.core.trace": {"engine.models.contract", "engine.core.errors"},
             "engine.models.llama": {"engine.core.hooks", "engine.text.tokenize", "engine.toy.trace"},
             "engine.text.bpe": {"engine.models.gguf_file"},
             "engine.newpart.x": {"engine.core.errors"},
             "engine": {"engine.analysis.explain"}}
    assert wrong_way(graph) == ["engine.core.trace (core) → engine.models.contract (models)",
                                "engine.newpart.x (newpart) → engine.core.errors (core)",
                                "engine.text.bpe (text) → engine.models.gguf_file (models)"]


def test_every_engine_package_has_its_place():
    packages = {package_of(module) for module in module_graph(("engine",))} - {None}
    assert packages == set(ORDER)


def test_engine_packages_import_in_one_direction():
    problems = wrong_way(module_graph(("engine",)))
    assert problems == [], "imports against the order " + " < ".join(ORDER) + ":\n" + "\n".join(problems)
