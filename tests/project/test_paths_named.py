"""Maps of the code that are true: every file or folder path that README.md, docs/ and the code's
comments and docstrings name exists, and every dotted module they name (``engine.analysis.flow``)
is a module of the tree. A module moved or renamed without its mentions fails here, naming each
stale mention with its place."""
from __future__ import annotations

import io
import re
import tokenize
from pathlib import Path
from tests import ROOT

PACKAGES = ("app", "engine", "cli", "figures")
TOP = ("app", "engine", "cli", "figures", "tests", "scripts", "benchmarks", "docs", "resources", "examples")
# a path: a top-level folder, then name/… (optionally ending in a file name); stops at the first
# character that cannot be in one of this tree's paths
PATH = re.compile(r"(?<![\w./-])((?:%s)/[\w./-]*[\w/])" % "|".join(TOP))
# a dotted module: app.x, engine.x.y, cli.x (then attribute names may follow)
DOTTED = re.compile(r"(?<![\w./-])((?:%s)(?:\.[A-Za-z_]\w*)+)" % "|".join(PACKAGES))
PLACEHOLDER = re.compile(r"[*{}<>]|\.\.\.|…")  # `tests/engine/…`, `engine/models/{family}.py`
# files whose mentions are deliberate examples of a missing module: the package-order checker's test
SKIPPED = {"tests/project/test_package_order.py"}
FILE_SUFFIXES = {"py", "npz", "json", "md", "png", "svg", "gguf", "txt", "csv", "pdf", "gif"}
# strings of code that only look like mentions: a QApplication named ``app`` in the scripts the
# tests and benchmarks run, a table's ratio columns
NOT_MENTIONS = {
    "benchmarks/bench_engine.py": {"engine/torch", "engine/loop"},
    "benchmarks/bench_soak.py": {"app.processEvents", "app.quit"},
    "tests/engine/models/test_bad_model_files.py": {"app.processEvents"},
}


def documents() -> list[Path]:
    return [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def code() -> list[Path]:
    here = Path(__file__).resolve()  # this file's own examples of stale names are on purpose
    return sorted(p for package in (*PACKAGES, "tests", "scripts", "benchmarks") for p in (ROOT / package).rglob("*.py")
                  if p != here and p.relative_to(ROOT).as_posix() not in SKIPPED)


def path_exists(text: str) -> bool:
    candidate = ROOT / text.rstrip("/.")
    return candidate.exists() or candidate.with_suffix(".py").exists()


def defines(source: Path, name: str) -> bool:
    """``name`` is defined in ``source``: a def or class, an assignment at the start of a line, an
    import (``from .x import name``, ``from . import name``, also in parentheses) or a module
    attribute (``__file__``); a name only mentioned in a docstring or comment is not."""
    if name.startswith("__") and name.endswith("__"):
        return True
    name = re.escape(name)
    text = source.read_text(encoding="utf-8")
    return any(re.search(pattern, text, re.M) for pattern in (
        r"^\s*(?:async\s+)?(?:def|class)\s+%s\b" % name,
        r"^\s*%s\s*(?::[^=\n]*)?=" % name,
        r"^\s*(?:from\s+\S+\s+)?import\s+[^\n(]*\b%s\b" % name,
        r"^\s*from\s+\S+\s+import\s*\([^)]*\b%s\b" % name,
    ))


def module_exists(dotted: str) -> bool:
    """The longest prefix of ``dotted`` that is a module or package of the tree, and the name after
    it (if any) defined there: ``engine.analysis.flow.attention_flow`` holds, ``engine.labs`` (a
    package with no such module or name) and ``engine.attention`` (a name engine/__init__.py
    mentions but does not define) do not."""
    parts = dotted.split(".")
    if len(parts) == 2 and parts[1] in FILE_SUFFIXES:  # ``cli.py``, ``cli.npz``: a file's name, not a module
        return True
    for length in range(len(parts), 0, -1):
        base = ROOT.joinpath(*parts[:length])
        source = base.with_suffix(".py") if base.with_suffix(".py").is_file() else base / "__init__.py"
        if source.is_file():
            return length == len(parts) or defines(source, parts[length])
    return False


def prose(file: Path) -> list[tuple[int, str]]:
    """(line number, text) of what a reader reads: a document's lines, a module's comments and
    strings (its code's own names — ``app.exec()`` on a QApplication — are not mentions)."""
    text = file.read_text(encoding="utf-8")
    if file.suffix != ".py":
        return list(enumerate(text.splitlines(), start=1))
    wanted = (tokenize.COMMENT, tokenize.STRING)
    pieces = []
    for token in tokenize.generate_tokens(io.StringIO(text).readline):
        if token.type in wanted:
            for offset, line in enumerate(token.string.splitlines()):
                pieces.append((token.start[0] + offset, line))
    return pieces


def stale(files, pattern, exists) -> list[str]:
    found = []
    for file in files:
        for number, line in prose(file):
            for match in pattern.finditer(line):
                text = match.group(1)
                place = file.relative_to(ROOT).as_posix() if file.is_relative_to(ROOT) else file.name
                if (PLACEHOLDER.search(line[match.start():match.end() + 2]) or text in NOT_MENTIONS.get(place, ())
                        or exists(text)):
                    continue
                found.append(f"{place}:{number}: {text}")
    return found


def test_every_path_the_documents_name_exists():
    assert stale(documents(), PATH, path_exists) == []


def test_every_path_the_code_names_exists():
    assert stale(code(), PATH, path_exists) == []


def test_every_module_the_documents_and_code_name_exists():
    assert stale(documents() + code(), DOTTED, module_exists) == []


def test_the_checks_catch_a_moved_module(tmp_path):
    note = tmp_path / "note.md"
    note.write_text("see `engine/labs.py`, engine.minilm and app/analysis_jobs.py; engine/analysis/flow.py is real\n")
    assert [entry.rpartition(": ")[2] for entry in stale([note], PATH, path_exists)] == ["engine/labs.py",
                                                                                         "app/analysis_jobs.py"]
    assert [entry.rpartition(": ")[2] for entry in stale([note], DOTTED, module_exists)] == ["engine.minilm"]
    note.write_text("engine.attention.attend moved; engine.core.attention.attend, engine.__file__, cli.npz and "
                    "engine.models.register_gguf are real\n")
    assert [entry.rpartition(": ")[2] for entry in stale([note], DOTTED, module_exists)] == ["engine.attention.attend"]


def layout_section() -> str:
    """README.md's *Layout* section: from its heading to the next heading of the same level."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    start = text.index("\n## Layout\n")
    end = text.find("\n## ", start + 1)
    return text[start:] if end < 0 else text[start:end]


def code_folders() -> list[str]:
    """Every folder of Python modules in the packages and in tests/ (fixtures and caches aside)."""
    found = []
    for top in (*PACKAGES, "tests"):
        for folder in sorted(p for p in (ROOT / top).rglob("*") if p.is_dir()):
            relative = folder.relative_to(ROOT).as_posix()
            if "__pycache__" in relative or relative.startswith("tests/fixtures") or not any(folder.glob("*.py")):
                continue
            found.append(relative + "/")
    return [f"{top}/" for top in PACKAGES] + found


def test_the_readme_layout_names_every_folder_of_the_tree():
    """The map is whole: a new package folder (engine/models/families/, tests/app/panels/) is in it."""
    section = layout_section()
    assert [folder for folder in code_folders() if f"`{folder}`" not in section] == []
