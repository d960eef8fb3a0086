"""Export files and the command line: contents read back against compute(), atomic writes,
and every bad input → exit 2, one ``error:`` line, no file."""
import csv
import json
import os
import subprocess
import sys
import types
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pytest

from tests import ROOT
from cli import commands as cli
from engine import ARRAY_NAMES, AttentionConfig, EngineError, compute
from engine.files.export import save_trace

MAIN = str(ROOT / "main.py")
TABLE = {"小明": [1, 0, 0, 1], "喜欢": [0, 1, 1, 0], "苹果": [1, 1, 0, 0]}
ARGS = ["--text", "小明 喜欢 苹果 小明", "--tokenizer", "whitespace", "--d-model", "4", "--heads", "2",
        "--seed", "5", "--positional", "rope", "--mask", "causal", "--temperature", "0.5"]
CONFIG = dict(text="小明 喜欢 苹果 小明", tokenizer="whitespace", d_model=4, heads=2, seed=5, positional="rope",
              mask="causal", temperature=0.5)


def run(*args):
    env = dict(os.environ, PYTHONUTF8="1")
    return subprocess.run([sys.executable, MAIN, *args], capture_output=True, text=True, timeout=60, env=env)


def read_json_array(value):
    return np.array(value, dtype=np.float64)  # "-Infinity" strings become -inf


def check_npz(path, result):
    with np.load(path) as data:  # no pickle needed: every entry is a plain array
        for name in ARRAY_NAMES:
            np.testing.assert_allclose(data[name], result.arrays()[name], rtol=1e-6, atol=1e-7, err_msg=name)
            assert data[name].shape == result.arrays()[name].shape
        assert data["tokens"].tolist() == result.token_texts
        assert data["token_spans"].tolist() == [[t.start, t.end] for t in result.tokens]
        assert AttentionConfig.from_dict(json.loads(str(data["config_json"]))) == result.config


def check_json(path, result):
    document = json.loads(Path(path).read_text(encoding="utf-8"))
    assert document["format"] == "attention-explorer-trace" and document["version"] == 1
    assert document["tokens"] == result.token_texts
    assert document["token_spans"] == [[t.start, t.end] for t in result.tokens]
    assert AttentionConfig.from_dict(document["config"]) == result.config
    for name in ARRAY_NAMES:
        np.testing.assert_allclose(read_json_array(document[name]), result.arrays()[name], rtol=1e-6, atol=1e-7)
    if result.mask is not None:
        assert document["scaled"][0][0][1] == "-Infinity"


def check_csv(path, result):
    with open(path, encoding="utf-8", newline="") as stream:
        rows = list(csv.reader(stream))
    texts = result.token_texts
    assert rows[0] == ["head", "query_index", "query_token"] + [f"{j}:{t}" for j, t in enumerate(texts)]
    assert len(rows) == 1 + result.weights.shape[0] * result.n
    for row in rows[1:]:
        h, i = int(row[0]), int(row[1])
        assert row[2] == texts[i]
        np.testing.assert_allclose([float(v) for v in row[3:]], result.weights[h, i], rtol=1e-7, atol=1e-8)


CHECKS = {".npz": check_npz, ".json": check_json, ".csv": check_csv}


@pytest.mark.parametrize("suffix", list(CHECKS))
def test_save_trace_round_trip(tmp_path, suffix):
    result = compute(AttentionConfig(**CONFIG, embeddings=TABLE))
    path = save_trace(result, tmp_path / f"trace{suffix}")
    CHECKS[suffix](path, result)
    assert os.listdir(tmp_path) == [path.name]


def test_unknown_suffix_is_an_engine_error(tmp_path):
    result = compute(AttentionConfig(text="a b", d_model=4, heads=1))
    for name in ("trace.txt", "trace"):
        with pytest.raises(EngineError, match="npz"):
            save_trace(result, tmp_path / name)
    assert os.listdir(tmp_path) == []


def test_failed_write_leaves_no_partial_file(tmp_path, monkeypatch):
    from engine.files import export

    def broken(result, stream):
        stream.write(b"half a file")
        raise RuntimeError("disk on fire")

    monkeypatch.setitem(export._WRITERS, ".json", broken)
    result = compute(AttentionConfig(text="a b", d_model=4, heads=1))
    target = tmp_path / "trace.json"
    target.write_text("old")
    with pytest.raises(RuntimeError):
        save_trace(result, target)
    assert os.listdir(tmp_path) == ["trace.json"] and target.read_text() == "old"
    with pytest.raises(EngineError, match="cannot write"):
        save_trace(result, tmp_path / "missing" / "trace.npz")


@pytest.mark.slow
@pytest.mark.parametrize("suffix", list(CHECKS))
def test_cli_export_contents_match_compute(tmp_path, suffix):
    (tmp_path / "table.json").write_text(json.dumps(TABLE), encoding="utf-8")
    out = tmp_path / f"trace{suffix}"
    done = run("export", *ARGS, "--embeddings", str(tmp_path / "table.json"), "--out", str(out))
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
    CHECKS[suffix](out, compute(AttentionConfig(**CONFIG, embeddings=TABLE)))


@pytest.mark.slow
def test_cli_defaults_and_chinese_auto_tokenizer(tmp_path):
    out = tmp_path / "trace.csv"
    done = run("export", "--text", "小明喜欢苹果", "--no-scale", "--weights", "identity", "--out", str(out))
    assert (done.returncode, done.stderr) == (0, "")
    check_csv(out, compute(AttentionConfig(text="小明喜欢苹果", scale=False, weights="identity")))


def make_files(tmp: Path):
    (tmp / "malformed.json").write_text('{"a": [1, 2', encoding="utf-8")
    (tmp / "wrong_length.json").write_text('{"a": [1, 2, 3]}', encoding="utf-8")
    (tmp / "nan.json").write_text('{"a": [NaN, 1]}', encoding="utf-8")
    (tmp / "infinity.json").write_text('{"a": [1, -Infinity]}', encoding="utf-8")
    (tmp / "huge.json").write_text('{"a": [1e999, 1]}', encoding="utf-8")
    (tmp / "list.json").write_text('[[1, 2]]', encoding="utf-8")
    (tmp / "a_file").write_text("x")
    (tmp / "a_dir.npz").mkdir()


def bad_cases(tmp):
    """Name → arguments of ``export`` that must fail (``tmp`` None: only the names)."""
    tmp = Path(tmp or "unused")
    out = str(tmp / "out.npz")
    base = ["--text", "a b", "--tokenizer", "whitespace", "--d-model", "2", "--heads", "1"]
    table = lambda name: base + ["--embeddings", str(tmp / name), "--out", out]  # noqa: E731
    return {
        "empty text": ["--text", "", "--out", out],
        "blank text": ["--text", " \t\n ", "--out", out],
        "only control characters": ["--text", "\u200b\x01", "--out", out],
        "d_model not divisible": ["--text", "a", "--d-model", "6", "--heads", "4", "--out", out],
        "zero d_model": ["--text", "a", "--d-model", "0", "--out", out],
        "negative d_model": ["--text", "a", "--d-model", "-8", "--out", out],
        "zero heads": ["--text", "a", "--heads", "0", "--out", out],
        "negative heads": ["--text", "a", "--heads", "-2", "--out", out],
        "zero temperature": ["--text", "a", "--temperature", "0", "--out", out],
        "negative temperature": ["--text", "a", "--temperature", "-1", "--out", out],
        "NaN temperature": ["--text", "a", "--temperature", "nan", "--out", out],
        "infinite temperature": ["--text", "a", "--temperature", "inf", "--out", out],
        "not a number": ["--text", "a", "--d-model", "many", "--out", out],
        "negative seed": ["--text", "a", "--seed", "-1", "--out", out],
        "odd d_k with rope": ["--text", "a", "--d-model", "6", "--heads", "2", "--positional", "rope", "--out", out],
        "unknown tokenizer": ["--text", "a", "--tokenizer", "spacy", "--out", out],
        "malformed table": table("malformed.json"),
        "wrong vector length": table("wrong_length.json"),
        "NaN in table": table("nan.json"),
        "Infinity in table": table("infinity.json"),
        "overflowing number in table": table("huge.json"),
        "table not an object": table("list.json"),
        "missing table": table("nowhere.json"),
        "unknown option": ["--text", "a", "--bogus", "--out", out],
        "missing --out": ["--text", "a"],
        "unknown suffix": ["--text", "a", "--out", str(tmp / "out.txt")],
        "no suffix": ["--text", "a", "--out", str(tmp / "out")],
        "folder does not exist": ["--text", "a", "--out", str(tmp / "nowhere" / "out.npz")],
        "parent is a file": ["--text", "a", "--out", str(tmp / "a_file" / "out.csv")],
        "output is a folder": ["--text", "a", "--out", str(tmp / "a_dir.npz")],
        "head out of range": ["--text", "a", "--heads", "4", "--head", "4", "--out", out],
        "head not a number": ["--text", "a", "--head", "first", "--out", out],
        "zero width": ["--text", "a", "--width", "0", "--out", out],
    }


CASE_NAMES = list(bad_cases(None))
# Every case runs in-process (test_more_bad_input_in_process: the same checks, no fresh interpreter);
# one case of each kind of failure also runs as a real process (slow), for main.py's exit code: the
# text, a setting, the embeddings table, the option parser, the output path.
SUBPROCESS_CASES = ["empty text", "zero temperature", "malformed table", "unknown option", "parent is a file"]


def assert_one_error_line(done, code=2):
    assert done.returncode == code, (done.returncode, done.stderr)
    lines = done.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), done.stderr
    assert "Traceback" not in done.stderr


@pytest.fixture(scope="module")
def bad_runs(tmp_path_factory):
    """Every bad case run once, a few at a time, each in its own folder."""
    folders = {name: tmp_path_factory.mktemp("bad") for name in SUBPROCESS_CASES}
    for folder in folders.values():
        make_files(folder)

    def one(name):
        folder = folders[name]
        before = sorted(os.listdir(folder))
        done = run("export", *bad_cases(folder)[name])
        return done, before, sorted(os.listdir(folder))

    with ThreadPoolExecutor(4) as pool:
        return dict(zip(SUBPROCESS_CASES, pool.map(one, SUBPROCESS_CASES)))


@pytest.mark.slow
@pytest.mark.parametrize("name", SUBPROCESS_CASES)
def test_bad_input_exits_2_with_one_error_line_and_no_file(bad_runs, name):
    done, before, after = bad_runs[name]
    assert_one_error_line(done)
    assert after == before  # no output, no temporary file
    assert done.stdout == ""


@pytest.mark.parametrize("name", CASE_NAMES)  # the subprocess cases too: those are `slow`, this is the edit-test loop's
def test_more_bad_input_in_process(tmp_path, name, capsys):
    make_files(tmp_path)
    before = sorted(os.listdir(tmp_path))
    assert cli.main(["main.py", "export", *bad_cases(tmp_path)[name]]) == 2
    captured = capsys.readouterr()
    lines = captured.err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and captured.out == ""
    assert sorted(os.listdir(tmp_path)) == before


@pytest.mark.slow
def test_failed_export_keeps_an_existing_file(tmp_path):
    out = tmp_path / "trace.json"
    out.write_text("old")
    assert_one_error_line(run("export", "--text", "a", "--heads", "3", "--d-model", "4", "--out", str(out)))
    assert out.read_text() == "old" and os.listdir(tmp_path) == ["trace.json"]


@pytest.mark.slow
@pytest.mark.skipif(hasattr(os, "geteuid") and os.geteuid() == 0, reason="root writes into read-only folders")
def test_read_only_folder(tmp_path):
    folder = tmp_path / "locked"
    folder.mkdir()
    folder.chmod(0o555)
    try:
        assert_one_error_line(run("export", "--text", "a", "--out", str(folder / "out.npz")))
        assert os.listdir(folder) == []
    finally:
        folder.chmod(0o755)


def test_read_only_folder_in_process(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(cli.os, "access", lambda path, mode: False)  # what a non-root user would see
    assert cli.main(["main.py", "export", "--text", "a", "--out", str(tmp_path / "out.npz")]) == 2
    assert capsys.readouterr().err == f"error: cannot write {str(tmp_path / 'out.npz')!r}: the folder {str(tmp_path)!r} is read-only\n"
    assert os.listdir(tmp_path) == []


def test_unexpected_exception_is_one_line_exit_2(tmp_path, monkeypatch, capsys):
    import engine

    def explode(config):
        raise RuntimeError("boom\nsecond line")

    monkeypatch.setattr(engine, "compute", explode)
    assert cli.main(["main.py", "export", "--text", "a", "--out", str(tmp_path / "out.json")]) == 2
    assert capsys.readouterr().err == "error: unexpected RuntimeError: boom second line\n"
    assert os.listdir(tmp_path) == []


@pytest.mark.slow
def test_unknown_command_and_help():
    assert_one_error_line(run("frobnicate"))
    done = run("--help")
    assert done.returncode == 0 and "export" in done.stdout
    assert done.stdout.startswith("usage: ./run [--session FILE] [--text TEXT]\n       ./run export --text TEXT")


def test_no_display_is_one_clear_line(monkeypatch, capsys):
    """Linux without DISPLAY/WAYLAND_DISPLAY: one line and exit 2, not Qt's "xcb-cursor0" abort."""
    monkeypatch.setattr(cli.sys, "platform", "linux")
    for name in ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM"):
        monkeypatch.delenv(name, raising=False)
    assert cli.main(["main.py"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: no display") and err.count("\n") == 1
    monkeypatch.setenv("QT_QPA_PLATFORM", "offscreen")
    assert not cli.missing_display()
    monkeypatch.delenv("QT_QPA_PLATFORM")
    monkeypatch.setenv("WAYLAND_DISPLAY", "wayland-0")
    assert not cli.missing_display()


def test_export_without_pyqtgraph_says_what_to_install(tmp_path, monkeypatch, capsys):
    import builtins

    real_import = builtins.__import__

    def no_pyqtgraph(name, *args, **kwargs):
        if name == "figures.render" or name.startswith("pyqtgraph"):
            raise ModuleNotFoundError("No module named 'pyqtgraph'", name="pyqtgraph")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_pyqtgraph)
    assert cli.main(["main.py", "export", "--text", "a", "--out", str(tmp_path / "a.png")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "pyqtgraph" in err and "./run export" in err and "requirements.txt" in err
    assert os.listdir(tmp_path) == []


@pytest.mark.slow
def test_real_png_and_svg_export(tmp_path):
    from PySide6.QtGui import QImage

    out = tmp_path / "figure.png"
    done = run("export", "--text", "小明 喜欢 苹果", "--d-model", "4", "--heads", "2", "--width", "300", "--out", str(out))
    assert (done.returncode, done.stderr) == (0, "")
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and os.listdir(tmp_path) == ["figure.png"]
    image = QImage(str(out))
    assert image.width() == 300 and image.height() > 100
    svg = tmp_path / "figure.svg"
    done = run("export", "--text", "小明 喜欢 苹果", "--head", "1", "--stage", "scaled", "--out", str(svg))
    assert (done.returncode, done.stderr) == (0, "")
    text = svg.read_text(encoding="utf-8")
    assert text.lstrip().startswith("<?xml") and "<svg" in text and "小明" in text and "head 1" in text


def test_image_export_calls_export_figure(tmp_path, monkeypatch):
    calls = []

    def export_figure(result, path, head="all", stage="weights", width=800, words=None):
        calls.append((result.n, head, stage, width, words))
        Path(path).write_bytes(b"<svg/>")

    monkeypatch.setitem(sys.modules, "figures.render", types.SimpleNamespace(export_figure=export_figure))
    out = tmp_path / "figure.svg"
    code = cli.main(["main.py", "export", "--text", "a b c", "--heads", "2", "--head", "1", "--stage", "scaled",
                     "--width", "640", "--out", str(out)])
    assert code == 0 and calls == [(3, 1, "scaled", 640, None)]
    assert out.read_bytes() == b"<svg/>" and os.listdir(tmp_path) == ["figure.svg"]


def test_no_arguments_start_the_window(monkeypatch, capsys):
    """main.py hands the window's start to the command line (which never imports the app); without
    it the window's arguments are refused in one line."""
    import main as entry

    seen = []
    monkeypatch.setitem(sys.modules, "app.shell.startup", types.SimpleNamespace(run=lambda argv: seen.append(argv) or 7))
    assert cli.main(["main.py"], window=entry.start_window) == 7
    assert cli.main(["main.py", "--session", "my.json"], window=entry.start_window) == 7
    assert seen == [[], ["--session", "my.json"]]  # app.shell.startup.run takes the arguments after the program
    assert cli.main(["main.py"]) == 2
    assert capsys.readouterr().err.count("\n") == 1


@pytest.mark.slow
def test_help_names_the_patch_command_and_patch_help_offers_only_what_it_takes():
    """`./run --help` said nothing of `./run patch`; `patch --help` offered toy (then refused it) and did
    not say that a GGUF file or a model folder is taken."""
    from engine.models import MODELS

    done = run("--help")
    assert done.returncode == 0
    assert "./run patch --model MODEL --clean TEXT --corrupt TEXT --out FILE" in done.stdout
    assert "`./run patch --help`" in done.stdout
    done = run("patch", "--help")
    assert done.returncode == 0
    pretrained = [name for name, entry in MODELS.items() if not entry.configurable]
    assert "--model {" + ",".join(pretrained) + "}|FILE.gguf|FOLDER" in done.stdout
    toy = [name for name, entry in MODELS.items() if entry.configurable]
    assert toy and not any(name in done.stdout.split("--model", 1)[1].split("\n")[0] for name in toy)
    assert "Hugging Face model folder" in " ".join(done.stdout.split())
