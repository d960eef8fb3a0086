"""The engine (and the export path of the command line) never imports Qt or pyqtgraph."""
import ast
import subprocess
import sys
from pathlib import Path

import pytest

from tests import ROOT

QT = ("PySide6", "pyqtgraph", "shiboken6")
ENGINE_FILES = sorted((ROOT / "engine").rglob("*.py"))  # every subfolder too


def imported_roots(path: Path) -> set[str]:
    """Top-level package of every import statement anywhere in the file (lazy ones too)."""
    roots = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            roots.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            roots.add(node.module.split(".")[0])
        elif isinstance(node, ast.Call) and getattr(node.func, "attr", getattr(node.func, "id", "")) in (
            "import_module", "__import__"
        ):
            roots.update(arg.value.split(".")[0] for arg in node.args if isinstance(arg, ast.Constant) and isinstance(arg.value, str))
    return roots


@pytest.mark.parametrize("path", ENGINE_FILES, ids=lambda p: p.relative_to(ROOT / "engine").as_posix())
def test_engine_source_imports_no_qt(path):
    assert not imported_roots(path) & set(QT)


def test_app_package_marker_imports_nothing():
    tree = ast.parse((ROOT / "app" / "__init__.py").read_text(encoding="utf-8"))
    assert not [node for node in ast.walk(tree) if isinstance(node, (ast.Import, ast.ImportFrom))]


def test_cli_and_main_import_no_qt_at_module_level():
    for path in (ROOT / "main.py", *sorted((ROOT / "cli").glob("*.py"))):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        top = [node for node in tree.body if isinstance(node, (ast.Import, ast.ImportFrom))]
        names = {alias.name.split(".")[0] for node in top if isinstance(node, ast.Import) for alias in node.names}
        names |= {node.module.split(".")[0] for node in top if isinstance(node, ast.ImportFrom) and node.module}
        assert not names & set(QT), path


def loaded_qt_after(code: str) -> list[str]:
    probe = code + f"\nprint(sorted(m for m in sys.modules if m.split('.')[0] in {QT!r}))"
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert done.returncode == 0, done.stderr
    return eval(done.stdout.strip().splitlines()[-1])


@pytest.mark.slow
def test_importing_and_running_the_engine_loads_no_qt():
    modules = ", ".join(".".join(p.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__")
                        for p in ENGINE_FILES)
    code = f"""import sys, engine, {modules}
r = engine.compute(engine.AttentionConfig(text="小明喜欢苹果 and more", d_model=8, heads=2, positional="rope"))
engine.explain(r, 0, 1).to_text()"""
    assert loaded_qt_after(code) == []


@pytest.mark.slow
def test_data_export_from_the_command_line_loads_no_qt(tmp_path):
    out = str(tmp_path / "trace.npz")
    code = f"""import sys
from cli.commands import main
assert main(["main.py", "export", "--text", "a b c", "--out", {out!r}]) == 0"""
    assert loaded_qt_after(code) == []


LAYERED = ("cli", "engine", "figures")  # none of them imports the window's package


@pytest.mark.parametrize("folder", LAYERED)
def test_the_command_line_the_engine_and_the_figures_never_import_the_app(folder):
    """cli/ imports the engine and the figures it draws images with; figures/ draws for both the window
    and the command line: neither may import app (main.py hands the window's start to the command line).
    Every import statement counts, function-level ones too, and the grep the review runs."""
    import re

    for path in sorted((ROOT / folder).rglob("*.py")):
        assert "app" not in imported_roots(path), path
        text = path.read_text(encoding="utf-8")
        assert not re.search(r"^\s*(from app|import app)\b", text, flags=re.MULTILINE), path


@pytest.mark.slow
def test_exports_of_images_and_steps_load_no_app_module(tmp_path):
    """What runs, not only what is written: a PNG and a step-through GIF load no module of app."""
    png, gif = str(tmp_path / "x.png"), str(tmp_path / "x.gif")
    probe = f"""import sys
from cli.commands import main
assert main(["main.py", "export", "--text", "a b c", "--out", {png!r}]) == 0
assert main(["main.py", "export", "--steps", "--text", "a b c", "--out", {gif!r}]) == 0
print(sorted(m for m in sys.modules if m.split('.')[0] == "app"))"""
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd=ROOT, timeout=120,
                          env={**__import__("os").environ, "QT_QPA_PLATFORM": "offscreen"})
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().splitlines()[-1] == "[]"
