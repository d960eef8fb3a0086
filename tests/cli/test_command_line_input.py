"""Arguments the command line cannot use as given: text that is not UTF-8 and output names longer
than the file system allows. Each is one ``error:`` line of its own (exit 2, nothing written), not
``unexpected TypeError`` from the tokenizer or ``unexpected OSError`` from a stat call."""
from __future__ import annotations

import os
import subprocess
import sys

import pytest

from tests import ROOT
from cli import commands as cli

MAIN = str(ROOT / "main.py")
PATCH = ["patch", "--model", "smollm2", "--clean", "The cat sat", "--corrupt", "The dog sat", "--answer", " on"]


def one_error_line(text: str) -> str:
    lines = text.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and "Traceback" not in text, text
    assert "unexpected" not in lines[0], lines[0]
    return lines[0]


def replaced(args: list, option: str, value) -> list:
    args = list(args)
    args[args.index(option) + 1] = value
    return args


CASES = {  # label: (command line without --out, the option whose value is not UTF-8)
    "export --text (toy)": (["export", "--text", b"a \xff b"], "--text"),
    "export --text (minilm)": (["export", "--model", "minilm", "--text", b"caf\xe9 au lait"], "--text"),
    "export --text=": (["export", b"--text=a \xc3 b"], "--text"),
    "patch --clean": (replaced(PATCH, "--clean", b"The \xff sat"), "--clean"),
    "patch --corrupt": (replaced(PATCH, "--corrupt", b"The \xfe sat"), "--corrupt"),
    "patch --answer": (replaced(PATCH, "--answer", b" \xed\xa0\x80"), "--answer"),  # an encoded surrogate
}


@pytest.mark.slow
@pytest.mark.parametrize("label", list(CASES))
def test_text_that_is_not_utf8_is_one_line_naming_the_option(tmp_path, label):
    """The bytes reach Python as lone surrogates (surrogateescape); they are refused before any model loads."""
    args, option = CASES[label]
    out = tmp_path / "out.npz"
    done = subprocess.run([sys.executable, MAIN, *args, "--out", str(out)], capture_output=True, timeout=120,
                          env=dict(os.environ, PYTHONUTF8="1", LC_ALL="C.UTF-8"), cwd=str(tmp_path))
    line = one_error_line(done.stderr.decode("utf-8", "replace"))
    assert done.returncode == 2, (done.returncode, line)
    assert option in line and "UTF-8" in line, line
    assert os.listdir(tmp_path) == []


def test_text_with_a_lone_surrogate_in_process(tmp_path, capsys):
    """The same check for a caller that hands main() the decoded arguments."""
    out = tmp_path / "out.npz"
    assert cli.main(["main.py", "export", "--model", "minilm", "--text", "a\udcffb", "--out", str(out)]) == 2
    line = one_error_line(capsys.readouterr().err)
    assert "--text" in line and "UTF-8" in line
    assert not out.exists()


@pytest.mark.parametrize("name", ["a" * 252 + ".npz", "a" * 252 + ".gif", "a" * 300 + ".json"])
def test_an_output_name_longer_than_the_file_system_allows(tmp_path, name, capsys):
    """256 bytes and more: one line saying the name is too long, nothing written."""
    out = tmp_path / name
    args = ["main.py", "export", "--text", "a cat", "--out", str(out)]
    if name.endswith(".gif"):
        args.insert(2, "--steps")
    assert cli.main(args) == 2
    line = one_error_line(capsys.readouterr().err)
    assert "too long" in line and str(tmp_path) in line, line
    assert os.listdir(tmp_path) == []


def test_an_output_folder_path_longer_than_the_system_allows(tmp_path, capsys):
    """A path beyond PATH_MAX (4,096 bytes) of short names: the same kind of line."""
    out = tmp_path.joinpath(*["d" * 200] * 21, "x.npz")
    assert cli.main(["main.py", "export", "--text", "a cat", "--out", str(out)]) == 2
    line = one_error_line(capsys.readouterr().err)
    assert "too long" in line or "does not exist" in line, line


@pytest.mark.slow
def test_an_output_name_that_is_not_utf8_is_a_name_like_any_other(tmp_path):
    """Only text is checked: a file name may hold any bytes (Linux), and the export writes it."""
    env = dict(os.environ, PYTHONUTF8="1", LC_ALL="C.UTF-8")
    out = os.fsencode(tmp_path) + b"/caf\xe9.npz"
    done = subprocess.run([sys.executable, MAIN, "export", "--text", "a cat", "--out", out], capture_output=True,
                          timeout=120, env=env, cwd=str(tmp_path))
    assert done.returncode == 0, done.stderr
    assert os.path.getsize(out) > 0
