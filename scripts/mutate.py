"""Mutation testing: does the suite fail when a plausible one-line bug is made?

Each mutant is one textual replacement in one file (it must match exactly once). For each, the
tree is copied to a temporary folder, the replacement applied there, and the test suite run
(stopping at the first failure); a mutant the suite still passes "survives". The table printed
at the end is the score quoted in the closing notes.

    python scripts/mutate.py                 # every mutant, the whole suite each time
    python scripts/mutate.py --only lanes    # mutants whose name contains "lanes"
    python scripts/mutate.py --list          # names only

The working tree itself is never modified. Outside the engine's numerics on purpose: those are
covered by property tests and the reference fixtures (see issue 16's measurement).
"""
from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


@dataclass(frozen=True)
class Mutant:
    name: str
    path: str  # relative to the repository root
    old: str
    new: str


MUTANTS: list[Mutant] = [
    # filled below, grouped by area
]


def mutant(name: str, path: str, old: str, new: str) -> None:
    MUTANTS.append(Mutant(name, path, old, new))


# ------------------------------------------------------------------ the mutants
from mutants import register  # noqa: E402  (scripts/mutants.py: the list, kept apart from the runner)

register(mutant)


def _copy_tree(destination: Path) -> None:
    """The tracked and untracked-but-not-ignored files, as they are now (no .venv, no .git)."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT, check=True, capture_output=True,
    ).stdout.split(b"\0")
    for raw in listed:
        if not raw:
            continue
        relative = raw.decode()
        source = ROOT / relative
        if not source.is_file():
            continue
        target = destination / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(source, target)


def run_one(item: Mutant, python: str, timeout: float, pytest_args: list[str]) -> tuple[str, float, str]:
    """("killed" | "survived" | "stale" | "timeout", seconds, the first failing test or reason)."""
    with tempfile.TemporaryDirectory(prefix="mutant-") as folder:
        tree = Path(folder)
        _copy_tree(tree)
        target = tree / item.path
        if not target.is_file():
            return "stale", 0.0, f"{item.path} does not exist"
        text = target.read_text(encoding="utf-8")
        count = text.count(item.old)
        if count != 1:
            return "stale", 0.0, f"the original line occurs {count} times"
        target.write_text(text.replace(item.old, item.new), encoding="utf-8")
        started = time.monotonic()
        env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1", QT_QPA_PLATFORM="offscreen")
        try:
            completed = subprocess.run(
                [python, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider", *pytest_args],
                cwd=tree, env=env, capture_output=True, text=True, timeout=timeout,
            )
        except subprocess.TimeoutExpired:
            return "timeout", time.monotonic() - started, "the suite did not finish (counts as killed)"
        seconds = time.monotonic() - started
        if completed.returncode == 0:
            return "survived", seconds, ""
        failed = [line for line in completed.stdout.splitlines() if line.startswith(("FAILED", "ERROR"))]
        return "killed", seconds, (failed[0] if failed else completed.stdout.strip().splitlines()[-1])[:120]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", default="", help="run the mutants whose name contains this")
    parser.add_argument("--list", action="store_true", help="print the mutants' names and exit")
    parser.add_argument("--python", default=str(ROOT / ".venv" / "bin" / "python"))
    parser.add_argument("--timeout", type=float, default=600.0, help="seconds per mutant")
    parser.add_argument("pytest_args", nargs="*", help="passed to pytest (e.g. a test file)")
    args = parser.parse_args(argv)
    chosen = [m for m in MUTANTS if args.only in m.name]
    if args.list:
        for item in chosen:
            print(f"{item.name:40} {item.path}")
        return 0
    rows = []
    for index, item in enumerate(chosen, 1):
        outcome, seconds, detail = run_one(item, args.python, args.timeout, args.pytest_args)
        rows.append((item, outcome, seconds, detail))
        print(f"[{index}/{len(chosen)}] {outcome:8} {seconds:6.1f} s  {item.name}  {detail}", flush=True)
    counts = {key: sum(1 for row in rows if row[1] == key) for key in ("killed", "timeout", "survived", "stale")}
    valid = len(rows) - counts["stale"]
    score = (counts["killed"] + counts["timeout"]) / valid if valid else 0.0
    print()
    print(f"{'mutant':40} {'outcome':9} caught by")
    for item, outcome, _, detail in rows:
        print(f"{item.name:40} {outcome:9} {detail}")
    print()
    print(f"mutants: {len(rows)}  killed: {counts['killed'] + counts['timeout']}  survived: {counts['survived']}  "
          f"stale: {counts['stale']}  score: {score:.0%}")
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    sys.exit(main())
