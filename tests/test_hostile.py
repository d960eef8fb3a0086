"""Hostile input (issue 10): command lines, embeddings tables, sessions, saved settings strings,
signals on a real export, full disks. Every case must end in a result or in one clear error —
exit 2 and one ``error:`` line on the command line, EngineError/SessionError in the library —
never a traceback, a hang, an unbounded read, a lost file or a temporary file left behind."""
import errno
import json
import os
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from app import cli
from app.session import SessionError, load_session, parse_session, save_session
from engine import AttentionConfig, EngineError, compute
from engine.toy.config import DEFAULT_MEMORY_BUDGET

ROOT = Path(__file__).resolve().parent.parent
MAIN = str(ROOT / "main.py")
SMALL = ["--text", "小明 喜欢 苹果", "--d-model", "4", "--heads", "2"]


def run(*args, **kwargs):
    env = dict(os.environ, PYTHONUTF8="1", QT_QPA_PLATFORM="offscreen")
    kwargs.setdefault("capture_output", "stdout" not in kwargs)
    return subprocess.run([sys.executable, MAIN, *args], text=True, timeout=120, env=env, **kwargs)


def one_error_line(text: str) -> str:
    lines = text.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and "Traceback" not in text, text
    return lines[0]


def cli_fails(capsys, *args) -> str:
    """Run the CLI in-process; it must exit 2 with one error line and print nothing on stdout."""
    code = cli.main(["main.py", "export", *map(str, args)])
    captured = capsys.readouterr()
    assert code == 2, (code, captured.err)
    assert captured.out == ""
    return one_error_line(captured.err)


# ------------------------------------------------------------------ 1. the data reaches the target
@pytest.mark.parametrize("name", ["T.NPZ", "t.Npz", "x.JSON", "x.Json", "y.CSV", "z.npz"])
def test_any_case_suffix_writes_the_data(tmp_path, name, capsys):
    out = tmp_path / name
    assert cli.main(["main.py", "export", *SMALL, "--out", str(out)]) == 0
    assert os.listdir(tmp_path) == [name]  # no hidden temporary file holding the data
    suffix = out.suffix.lower()
    if suffix == ".npz":
        with open(out, "rb") as stream, np.load(stream) as data:
            assert data["weights"].shape == (2, 3, 3)
    elif suffix == ".json":
        assert len(json.loads(out.read_text(encoding="utf-8"))["weights"]) == 2
    else:
        assert out.read_text(encoding="utf-8").count("\n") == 1 + 2 * 3


@pytest.mark.parametrize("name", ["x.Png", "X.SVG"])
def test_any_case_image_suffix(tmp_path, name, capsys):
    out = tmp_path / name
    assert cli.main(["main.py", "export", *SMALL, "--width", "200", "--out", str(out)]) == 0
    data = out.read_bytes()
    assert data.startswith(b"\x89PNG") if name.lower().endswith("png") else b"<svg" in data
    assert os.listdir(tmp_path) == [name]


def test_a_255_byte_name_works(tmp_path, capsys):
    name = "a" * 251 + ".npz"  # 255 bytes: the longest name the file system allows
    assert cli.main(["main.py", "export", *SMALL, "--out", str(tmp_path / name)]) == 0
    assert os.listdir(tmp_path) == [name] and (tmp_path / name).stat().st_size > 0


@pytest.mark.parametrize("suffix", [".npz", ".json", ".csv", ".png"])
def test_replacing_keeps_the_mode_and_writes_through_a_symlink(tmp_path, suffix, capsys):
    target = tmp_path / f"real{suffix}"
    target.write_bytes(b"old")
    target.chmod(0o600)
    link = tmp_path / f"link{suffix}"
    link.symlink_to(target.name)
    assert cli.main(["main.py", "export", *SMALL, "--width", "100", "--out", str(link)]) == 0
    assert link.is_symlink() and os.readlink(link) == target.name
    assert target.read_bytes() != b"old" and target.stat().st_size > 100
    assert stat.S_IMODE(target.stat().st_mode) == 0o600
    assert sorted(os.listdir(tmp_path)) == sorted([target.name, link.name])


def test_new_files_follow_the_umask_for_every_writer(tmp_path, capsys):
    old = os.umask(0o027)
    try:
        assert cli.main(["main.py", "export", *SMALL, "--out", str(tmp_path / "a.npz")]) == 0
        save_session(tmp_path / "s.json", AttentionConfig())  # the window's sessions
        from engine.files.export import save_trace  # the window's Export data

        save_trace(compute(AttentionConfig(text="a b", d_model=4, heads=1)), tmp_path / "w.csv")
    finally:
        os.umask(old)
    for name in ("a.npz", "s.json", "w.csv"):
        assert stat.S_IMODE((tmp_path / name).stat().st_mode) == 0o640, name


def _enospc(*args, **kwargs):
    raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))


@pytest.mark.parametrize("suffix", [".npz", ".json", ".csv", ".png", ".svg"])
def test_full_disk_is_one_line_naming_the_target(tmp_path, monkeypatch, suffix, capsys):
    from engine.files import safe_io

    monkeypatch.setattr(safe_io.os, "fsync", _enospc)  # the last step before the rename
    out = tmp_path / f"out{suffix}"
    line = cli_fails(capsys, *SMALL, "--width", "100", "--out", out)
    assert line == f"error: cannot write {str(out)!r}: No space left on device"
    assert os.listdir(tmp_path) == []


@pytest.fixture
def tiny_disk(tmp_path):
    """A 48 KiB tmpfs (root only): a real full disk."""
    folder = tmp_path / "tiny"
    folder.mkdir()
    if os.geteuid() != 0:
        pytest.skip("mounting a tmpfs needs root")
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=48k", "tmpfs", str(folder)], capture_output=True)
    if done.returncode:
        pytest.skip(f"cannot mount a tmpfs: {done.stderr.decode(errors='replace').strip()}")
    try:
        yield folder
    finally:
        subprocess.run(["umount", str(folder)], check=False)


@pytest.mark.parametrize("suffix", [".npz", ".png", ".json"])
def test_real_full_disk(tiny_disk, suffix):
    out = tiny_disk / f"out{suffix}"
    done = run("export", "--text", "a b c d e f g h " * 8, "--tokenizer", "whitespace", "--width", "4000",
               "--out", str(out))
    assert done.returncode == 2 and done.stdout == ""
    assert one_error_line(done.stderr) == f"error: cannot write {str(out)!r}: No space left on device"
    assert os.listdir(tiny_disk) == []


def test_closed_stdout_after_writing_is_still_success(tmp_path):
    out = tmp_path / "trace.npz"
    read_end, write_end = os.pipe()
    os.close(read_end)  # like `export … | true`: nobody reads the 'wrote' line
    try:
        done = run("export", *SMALL, "--out", str(out), stdout=write_end, stderr=subprocess.PIPE)
    finally:
        os.close(write_end)
    assert (done.returncode, done.stderr) == (0, "")
    with np.load(out) as data:
        assert data["weights"].shape == (2, 3, 3)


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP, signal.SIGINT])
def test_signal_mid_export_leaves_nothing(tmp_path, signum):
    """A long .json export on a real process, signalled while its temporary file exists."""
    out = tmp_path / "big.json"
    env = dict(os.environ, PYTHONUTF8="1")
    process = subprocess.Popen([sys.executable, MAIN, "export", "--text", "w " * 400, "--heads", "8",
                                "--out", str(out)], stderr=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env)
    try:
        deadline = time.monotonic() + 100
        while not os.listdir(tmp_path) and process.poll() is None and time.monotonic() < deadline:
            time.sleep(0.005)
        assert os.listdir(tmp_path) and process.poll() is None, "the export never started writing"
        process.send_signal(signum)
        _, err = process.communicate(timeout=100)
    finally:
        process.kill() if process.poll() is None else None
    assert process.returncode == 128 + signum, (process.returncode, err)
    assert one_error_line(err).startswith("error: interrupted")
    assert os.listdir(tmp_path) == []


# ------------------------------------------------------------------ hostile command lines
HOSTILE_ARGS = {  # name → (arguments after "export", the output's name); each must exit 0 or 2, never else
    "d_model of 5000 digits": (["--text", "a", "--d-model", "9" * 5000], "o.npz"),
    "seed 2**32": (["--text", "a", "--seed", str(2**32)], "o.npz"),
    "seed -1": (["--text", "a", "--seed", "-1"], "o.npz"),
    "seed of 5000 digits": (["--text", "a", "--seed", "9" * 5000], "o.npz"),
    "temperature nan": (["--text", "a", "--temperature", "nan"], "o.npz"),
    "temperature inf": (["--text", "a", "--temperature", "inf"], "o.npz"),
    "temperature 1e999": (["--text", "a", "--temperature", "1e999"], "o.npz"),
    "temperature -0": (["--text", "a", "--temperature", "-0"], "o.npz"),
    "temperature of 5000 digits": (["--text", "a", "--temperature", "9" * 5000], "o.npz"),
    "heads hex": (["--text", "a", "--heads", "0x10"], "o.npz"),
    "width 10**30": (["--text", "a", "--width", str(10**30)], "o.png"),
    "width -5": (["--text", "a", "--width", "-5"], "o.svg"),
    "head -1": (["--text", "a", "--head", "-1"], "o.png"),
    "head 10**30": (["--text", "a", "--head", str(10**30)], "o.png"),
    "lone surrogate": (["--text", "a\udc80b"], "o.npz"),
    "NUL in text": (["--text", "a\x00b"], "o.json"),
    "2 MB of text": (["--text", "w " * 1_000_000, "--tokenizer", "whitespace"], "o.npz"),
    "empty out": (["--text", "a", "--out", ""], None),
    "out named .npz": (["--text", "a"], ".npz"),
    "out is a FIFO": (["--text", "a"], "fifo.npz"),
    "out through a dangling link into a missing folder": (["--text", "a"], "dangling.npz"),
    "abbreviated option": (["--text", "a", "--d", "4"], "o.npz"),
    "option twice": (["--text", "a", "--text", "b"], "o.npz"),
    "no text": ([], "o.npz"),
    "layer for the toy": (["--text", "a", "--layer", "1"], "o.npz"),
    "embeddings is the output": (["--text", "a", "--embeddings"], "o.json"),
}


@pytest.mark.parametrize("name", list(HOSTILE_ARGS))
def test_hostile_command_line(tmp_path, name, capsys):
    args, out_name = HOSTILE_ARGS[name]
    os.mkfifo(tmp_path / "fifo.npz")
    (tmp_path / "dangling.npz").symlink_to(tmp_path / "missing" / "x.npz")
    before = sorted(os.listdir(tmp_path))
    args = list(args)
    if args and args[-1] == "--embeddings":
        args.append(str(tmp_path / out_name))
    if out_name is not None:
        args += ["--out", str(tmp_path / out_name)]
    code = cli.main(["main.py", "export", *args])
    captured = capsys.readouterr()
    if code == 0:
        assert captured.err == "" and captured.out.startswith("wrote ")
        assert sorted(os.listdir(tmp_path)) == sorted(before + [out_name])
    else:
        assert code == 2 and captured.out == "", (code, captured.err)
        one_error_line(captured.err)
        assert sorted(os.listdir(tmp_path)) == before  # nothing written, no temporary left
        assert stat.S_ISFIFO(os.lstat(tmp_path / "fifo.npz").st_mode)


# ------------------------------------------------------------------ 6. small truths on the command line
def test_text_double_dash(tmp_path, capsys):
    out = tmp_path / "t.json"
    assert cli.main(["main.py", "export", "--text=--", "--out", str(out)]) == 0
    assert json.loads(out.read_text(encoding="utf-8"))["config"]["text"] == "--"


@pytest.mark.parametrize("name", ["out.txt", "out", "out.npy", "out.PNGX"])
def test_unknown_suffix_lists_every_suffix(tmp_path, name, capsys):
    line = cli_fails(capsys, "--text", "a", "--out", tmp_path / name)
    assert all(suffix in line for suffix in (".npz", ".json", ".csv", ".png", ".svg")), line


@pytest.mark.parametrize("package", ["pyqtgraph", "PySide6"])
def test_missing_image_package_says_what_to_install(tmp_path, monkeypatch, package, capsys):
    import app.render  # noqa: F401 - already loaded, as in a long-lived process

    monkeypatch.setitem(sys.modules, package, None)  # import now raises ModuleNotFoundError
    monkeypatch.setitem(sys.modules, f"{package}.QtGui", None)
    line = cli_fails(capsys, "--text", "a", "--out", tmp_path / "x.png")
    assert f"pip install {package}" in line
    assert os.listdir(tmp_path) == []


def test_memory_error_is_one_line_that_says_what_to_do(tmp_path, monkeypatch, capsys):
    import engine

    def no_memory(config):
        raise MemoryError()

    monkeypatch.setattr(engine, "compute", no_memory)
    line = cli_fails(capsys, "--text", "a", "--out", tmp_path / "x.npz")
    assert "memory" in line and "shorten the text" in line


# ------------------------------------------------------------------ 4. hostile tables
def _deep(levels: int) -> str:
    return '{"a": ' + "[" * levels + "1" + "]" * levels + "}"


TABLES = {
    "nested 100000 levels": lambda folder: _deep(100_000),
    "nested object 100000": lambda folder: '{"a":' * 100_000 + "1" + "}" * 100_000,
    "integer of 5000 digits": lambda folder: '{"小明": [' + "7" * 5000 + "]}",
    "negative integer of 5000 digits": lambda folder: '{"小明": [-' + "7" * 5000 + "]}",
    "float beyond range": lambda folder: '{"小明": [1e999]}',
    "null table": lambda folder: "null",
    "null vector": lambda folder: '{"小明": null}',
    "null in a vector": lambda folder: '{"小明": [null]}',
    "empty table": lambda folder: "{}",
    "a list": lambda folder: "[[1, 2]]",
    "a number": lambda folder: "4",
    "a string vector": lambda folder: '{"小明": "1 0"}',
    "bool in a vector": lambda folder: '{"小明": [true]}',
    "NaN": lambda folder: '{"小明": [NaN]}',
    "Infinity": lambda folder: '{"小明": [-Infinity]}',
    "empty file": lambda folder: "",
    "not UTF-8": lambda folder: b"\xff\xfe{",
    "truncated": lambda folder: '{"小明": [1,',
    "NUL bytes": lambda folder: "\x00" * 100,
}


@pytest.mark.parametrize("name", list(TABLES))
def test_hostile_table(tmp_path, name, capsys):
    content = TABLES[name](tmp_path)
    table = tmp_path / "table.json"
    table.write_bytes(content if isinstance(content, bytes) else content.encode("utf-8"))
    line = cli_fails(capsys, "--text", "小明", "--d-model", "1", "--heads", "1", "--embeddings", table,
                     "--out", tmp_path / "out.npz")
    assert "table" in line
    assert sorted(os.listdir(tmp_path)) == ["table.json"]


def test_oversized_table_is_refused_before_reading(tmp_path, capsys):
    from engine.files.safe_io import MAX_DOCUMENT_BYTES

    table = tmp_path / "huge.json"
    with open(table, "wb") as stream:  # sparse: costs no disk
        stream.truncate(MAX_DOCUMENT_BYTES + 1)
    line = cli_fails(capsys, "--text", "a", "--embeddings", table, "--out", tmp_path / "out.npz")
    assert "too large" in line


@pytest.mark.parametrize("kind", ["fifo", "/dev/zero", "folder"])
def test_non_regular_table_is_refused_without_blocking(tmp_path, kind):
    """A real process with a timeout: today's main blocks on the FIFO and reads /dev/zero forever."""
    if kind == "fifo":
        path = tmp_path / "table.json"
        os.mkfifo(path)
    elif kind == "folder":
        path = tmp_path / "folder.json"
        path.mkdir()
    else:
        path = Path("/dev/zero")
    try:
        done = run("export", "--text", "a", "--embeddings", str(path), "--out", str(tmp_path / "o.npz"), )
    except subprocess.TimeoutExpired:
        pytest.fail(f"reading a {kind} as a table hangs")
    assert done.returncode == 2 and "table" in one_error_line(done.stderr)
    assert not (tmp_path / "o.npz").exists()


def test_window_table_loader_is_the_engine_one():
    from app.panels import input_panel
    from engine.files.documents import load_embeddings_table

    assert input_panel.load_embeddings_table is load_embeddings_table


# ------------------------------------------------------------------ 2, 3. sessions and saved settings
def session(config: dict, view: dict | None = None) -> str:
    return json.dumps({"format": "attention-explorer-session", "version": 1, "config": config,
                       "view": view or {}})


BAD_SETTINGS = {
    "seed 2**32": {"seed": 2**32},
    "seed -1": {"seed": -1},
    "seed 10**30": {"seed": 10**30},
    "seed 1.0": {"seed": 1.0},
    "seed true": {"seed": True},
    "seed '1'": {"seed": "1"},
    "d_model '8'": {"d_model": "8"},
    "d_model 8.0": {"d_model": 8.0},
    "d_model true": {"d_model": True},
    "heads 1.5": {"heads": 1.5},
    "temperature '1'": {"temperature": "1"},
    "temperature true": {"temperature": True},
    "temperature 0": {"temperature": 0},
    "temperature -1": {"temperature": -1},
    "temperature 1e-9": {"temperature": 1e-9},
    "temperature null": {"temperature": None},
    "scale 1": {"scale": 1},
    "scale 'yes'": {"scale": "yes"},
    "text 5": {"text": 5},
    "text null": {"text": None},
    "tokenizer 3": {"tokenizer": 3},
    "mask list": {"mask": ["causal"]},
    "embeddings null vector": {"embeddings": {"a": None}, "d_model": 1, "heads": 1},
    "embeddings list": {"embeddings": [[1]]},
    "embeddings empty": {"embeddings": {}},
    "embeddings bool": {"embeddings": {"a": [True]}, "d_model": 1, "heads": 1},
    "unknown key": {"colour": "red"},
}
BAD_DOCUMENTS = {  # session texts that are not even well-formed settings
    "nested 100000": "[" * 100_000 + "]" * 100_000,
    "nested config": session({}).replace('"config": {}', '"config": ' + '{"a":' * 100_000 + "1" + "}" * 100_000),
    "integer of 5000 digits": session({}).replace('"config": {}', '"config": {"seed": ' + "9" * 5000 + "}"),
    "NaN temperature": session({}).replace('"config": {}', '"config": {"temperature": NaN}'),
    "view head huge": session({}, {"head": 2**40}),
    "view focus huge": session({}, {"focus": 2**40}),
    "view head true": session({}, {"head": True}),
    "view stage 7": session({}, {"stage": 7}),
    "not an object": "[]",
    "empty": "",
}


@pytest.mark.parametrize("name", list(BAD_SETTINGS))
def test_hostile_session_settings_are_refused(name):
    with pytest.raises(SessionError):
        parse_session(session(BAD_SETTINGS[name]))


@pytest.mark.parametrize("name", list(BAD_DOCUMENTS))
def test_hostile_session_documents_are_refused(name):
    with pytest.raises(SessionError):
        parse_session(BAD_DOCUMENTS[name])


@pytest.mark.parametrize("name", list(BAD_SETTINGS) + list(BAD_DOCUMENTS))
def test_hostile_saved_settings_strings_are_refused(name):
    """The window's saved last configuration is a JSON string: the same rules, one EngineError."""
    from engine.files.documents import parse_settings

    text = json.dumps(BAD_SETTINGS[name]) if name in BAD_SETTINGS else BAD_DOCUMENTS[name]
    if name in BAD_DOCUMENTS and name.startswith("view"):
        text = json.dumps(json.loads(text)["view"] | {"d_model": 8})  # a view is not settings
    with pytest.raises(EngineError):
        parse_settings(text)


GOOD_SETTINGS = {
    "seed 2**32 - 1": {"seed": 2**32 - 1},
    "seed 2**31": {"seed": 2**31},
    "temperature 5000": {"temperature": 5000},
    "temperature 1.23456": {"temperature": 1.23456},
    "temperature 0.0004": {"temperature": 0.0004},
    "temperature 1e-6": {"temperature": 1e-6},
    "integer temperature": {"temperature": 2},
    "d_model 8192": {"d_model": 8192, "heads": 512},
    "table": {"embeddings": {"a": [1, 0.5]}, "d_model": 2, "heads": 1},
}


@pytest.mark.parametrize("name", list(GOOD_SETTINGS))
def test_every_value_the_engine_accepts_round_trips_exactly(tmp_path, name):
    from engine.files.documents import parse_settings

    config = AttentionConfig(**GOOD_SETTINGS[name])
    save_session(tmp_path / "s.json", config)
    loaded, _ = load_session(tmp_path / "s.json")
    assert loaded == config and loaded.temperature == config.temperature
    assert parse_settings(json.dumps(config.to_dict())) == config


@pytest.mark.parametrize("budget", [1, 10**15, "x", None])
def test_no_file_sets_the_memory_budget(tmp_path, budget):
    from engine.files.documents import parse_settings

    loaded, _ = parse_session(session({"d_model": 8, "memory_budget": budget}))
    assert loaded.memory_budget == DEFAULT_MEMORY_BUDGET and loaded.d_model == 8
    assert parse_settings({"memory_budget": budget}).memory_budget == DEFAULT_MEMORY_BUDGET
    assert AttentionConfig.from_dict({"memory_budget": budget}).memory_budget == DEFAULT_MEMORY_BUDGET
    assert "memory_budget" not in AttentionConfig(memory_budget=10**6).to_dict()


@pytest.mark.parametrize("kind", ["fifo", "/dev/zero", "folder", "missing", "huge"])
def test_hostile_session_files(tmp_path, kind):
    from engine.files.safe_io import MAX_DOCUMENT_BYTES

    path = tmp_path / "s.json"
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "folder":
        path.mkdir()
    elif kind == "/dev/zero":
        path = Path("/dev/zero")
    elif kind == "huge":
        with open(path, "wb") as stream:
            stream.truncate(MAX_DOCUMENT_BYTES + 1)
    with pytest.raises(SessionError):
        load_session(path)


# ------------------------------------------------------------------ 5. memory bounded, the estimate true
def test_token_vector_memo_caps_bytes_not_numbers(monkeypatch):
    """At d_model 1 a remembered vector costs ~300 B for 4 B of data: the cap must count that."""
    import tracemalloc

    from engine.toy import embeddings

    embeddings.static_embeddings(["warm", "up"], 1, 0)  # imports made on first use are not the memo
    embeddings.clear_memo()
    monkeypatch.setattr(embeddings, "MEMO_BYTES", 1 << 20)
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        for start in range(0, 40_000, 2_000):
            embeddings.static_embeddings([f"token{i}" for i in range(start, start + 2_000)], 1, 0)
        held = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
        embeddings.clear_memo()
    assert held <= 1 << 20, held


def test_json_export_streams(tmp_path):
    """The .json writer holds a row at a time, not every number as a Python float."""
    import tracemalloc

    from engine.files.export import save_trace

    result = compute(AttentionConfig(text=" ".join(f"w{i}" for i in range(300)), tokenizer="whitespace"))
    tracemalloc.start()
    try:
        save_trace(result, tmp_path / "t.json")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    size = (tmp_path / "t.json").stat().st_size
    assert size > 20_000_000 and peak < size / 20, (peak, size)
    assert np.array_equal(np.array(json.loads((tmp_path / "t.json").read_text())["weights"], np.float32),
                          result.weights)


PEAK_SCRIPT = """
import json, resource, sys
from engine import AttentionConfig, compute
from engine.core.memory import estimate_trace_bytes
n, d, h = {n}, {d}, {h}
config = AttentionConfig(text=" ".join("w%d" % i for i in range(n)), tokenizer="whitespace", d_model=d, heads=h,
                         memory_budget=1 << 40)
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
compute(config)
after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
print(json.dumps([after - before, estimate_trace_bytes(n, d, h)]))
"""


@pytest.mark.parametrize("n, d, h", [(1, 4096, 1), (600, 2048, 1), (1500, 64, 16)])
def test_estimate_covers_the_measured_peak(n, d, h):
    """Peak resident memory of a real process (the weights' temporaries included) ≤ the estimate."""
    done = subprocess.run([sys.executable, "-c", PEAK_SCRIPT.format(n=n, d=d, h=h)], capture_output=True, text=True,
                          timeout=300, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    measured, estimate = json.loads(done.stdout)
    assert measured <= estimate, (measured, estimate)


def test_running_out_of_memory_says_what_and_what_to_do(monkeypatch):
    import importlib

    from engine.core.memory import OutOfMemory

    compute_module = importlib.import_module("engine.toy.compute")

    def no_memory(*args, **kwargs):
        raise MemoryError()

    monkeypatch.setattr(compute_module, "attend", no_memory)
    with pytest.raises(MemoryError) as caught:
        compute_module.compute(AttentionConfig(text="a b", d_model=8, heads=2))
    assert isinstance(caught.value, OutOfMemory) and isinstance(caught.value, EngineError)
    message = str(caught.value)
    assert "d_model 8" in message and "2 heads" in message and "shorten the text" in message
