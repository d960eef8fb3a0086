"""Hostile input: command lines, embeddings tables, sessions, saved settings strings,
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

from tests import ROOT
from cli import commands as cli
from app.session import SessionError, load_session, parse_session, save_session
from engine import AttentionConfig, EngineError, compute
from engine.core.memory import DEFAULT_MEMORY_BUDGET

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
    from engine.core import safe_io

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


@pytest.mark.slow
@pytest.mark.parametrize("suffix", [".npz", ".png", ".json"])
def test_real_full_disk(tiny_disk, suffix):
    out = tiny_disk / f"out{suffix}"
    done = run("export", "--text", "a b c d e f g h " * 8, "--tokenizer", "whitespace", "--width", "4000",
               "--out", str(out))
    assert done.returncode == 2 and done.stdout == ""
    assert one_error_line(done.stderr) == f"error: cannot write {str(out)!r}: No space left on device"
    assert os.listdir(tiny_disk) == []


@pytest.mark.slow
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


# The child runs the real `main.py export`, with the temporary file's first write() wrapped: the
# data is written, then a marker file appears and the child waits in signal.pause(). The test sends
# the signal once the marker exists, so the signal always lands mid-write (never before the file or
# after the rename), whatever the load: no sleeps, no deadlines (the timed version failed
# under load when the signal arrived in the instant between mkstemp and the cleanup's try).
_PAUSED_EXPORT = """
import os, runpy, signal, sys
marker = sys.argv.pop(1)
signal.signal(signal.SIGINT, signal.default_int_handler)  # as in a terminal, even when the suite runs in the background
real_fdopen = os.fdopen

class Paused:
    def __init__(self, stream):
        self._stream, self._paused = stream, False
    def write(self, data):
        written = self._stream.write(data)
        if not self._paused:
            self._paused = True
            self._stream.flush()
            open(marker, "w").close()
            while True:
                signal.pause()  # the handler raises (KeyboardInterrupt / Interrupted) out of here
        return written
    def __getattr__(self, name):
        return getattr(self._stream, name)
    def __enter__(self):
        return self
    def __exit__(self, *exc):
        return self._stream.__exit__(*exc)

def fdopen(fd, *args, **kwargs):
    stream = real_fdopen(fd, *args, **kwargs)
    return Paused(stream) if os.path.basename(os.readlink(f"/proc/self/fd/{fd}")).startswith(".ae-") else stream

os.fdopen = fdopen
del sys.argv[0]  # "-c": main.py sees its own name first, as when run directly
runpy.run_path(sys.argv[0], run_name="__main__")
"""


@pytest.mark.slow
@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP, signal.SIGINT])
@pytest.mark.parametrize("suffix", [".json", ".npz"])
def test_signal_mid_export_leaves_nothing(tmp_path, signum, suffix):
    """A real export process, signalled while it writes its temporary file: exit 128 + signal, one
    error line, no file left (neither the output nor the temporary)."""
    folder, marker = tmp_path / "out", tmp_path / "writing"
    folder.mkdir()
    out = folder / f"big{suffix}"
    env = dict(os.environ, PYTHONUTF8="1")
    process = subprocess.Popen([sys.executable, "-c", _PAUSED_EXPORT, str(marker), MAIN, "export", "--text", "w " * 40,
                                "--heads", "2", "--out", str(out)], stderr=subprocess.PIPE, stdout=subprocess.PIPE,
                               text=True, env=env)
    try:
        while not marker.exists():
            assert process.poll() is None, f"the export ended before writing: {process.communicate()}"
            time.sleep(0.005)  # polling for the marker, not a deadline: the child waits for the signal
        assert [p.name.startswith(".ae-") for p in folder.iterdir()] == [True], "the temporary file exists"
        process.send_signal(signum)
        _, err = process.communicate(timeout=100)
    finally:
        process.kill() if process.poll() is None else None
    assert process.returncode == 128 + signum, (process.returncode, err)
    assert one_error_line(err).startswith(f"error: interrupted by {signal.Signals(signum).name}")
    assert os.listdir(folder) == []


# A signal in the instant after mkstemp made the temporary file, before the writer's cleanup is
# armed: the child signals itself right there (deterministic). It used to leave `.ae-….tmp` behind.
_SIGNAL_AFTER_MKSTEMP = """
import os, runpy, signal, sys, tempfile
signum = int(sys.argv.pop(1))
signal.signal(signal.SIGINT, signal.default_int_handler)
real_mkstemp = tempfile.mkstemp

def mkstemp(*args, **kwargs):
    made = real_mkstemp(*args, **kwargs)
    os.kill(os.getpid(), signum)  # delivered at the next bytecode: still inside mkstemp
    return made

tempfile.mkstemp = mkstemp
del sys.argv[0]
runpy.run_path(sys.argv[0], run_name="__main__")
"""


@pytest.mark.slow
@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_signal_right_after_the_temporary_file_is_made_leaves_nothing(tmp_path, signum):
    out = tmp_path / "o.npz"
    done = subprocess.run([sys.executable, "-c", _SIGNAL_AFTER_MKSTEMP, str(int(signum)), MAIN, "export", *SMALL,
                           "--out", str(out)], text=True, capture_output=True, timeout=120,
                          env=dict(os.environ, PYTHONUTF8="1"))
    assert done.returncode == 128 + signum, (done.returncode, done.stderr)
    assert os.listdir(tmp_path) == [], "a temporary file was left behind"


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


@pytest.mark.slow
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
    import figures.render  # noqa: F401 - already loaded, as in a long-lived process

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
    from engine.core.safe_io import MAX_DOCUMENT_BYTES

    table = tmp_path / "huge.json"
    with open(table, "wb") as stream:  # sparse: costs no disk
        stream.truncate(MAX_DOCUMENT_BYTES + 1)
    line = cli_fails(capsys, "--text", "a", "--embeddings", table, "--out", tmp_path / "out.npz")
    assert "too large" in line


@pytest.mark.slow
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
    from engine.core.safe_io import MAX_DOCUMENT_BYTES

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
@pytest.mark.slow
def test_token_vector_memo_caps_bytes_not_numbers(monkeypatch):
    """At d_model 1 a remembered vector costs ~300 B for 4 B of data: the cap must count that."""
    import tracemalloc

    from engine.toy import embeddings

    embeddings.static_embeddings(["warm", "up"], 1, 0)  # imports made on first use are not the memo
    embeddings.clear_memo()
    # a 512 kB cap and 20,000 vectors (~5 MB if kept): a cap counting 4-byte numbers keeps them all;
    # 1 MB and 40,000 made the same check twice over (27 s of wall time under load). At 256 kB the
    # memo dict's own growth (not in the cap) came out 2 kB over: the cap must stay large beside it
    monkeypatch.setattr(embeddings, "MEMO_BYTES", 1 << 19)
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        for start in range(0, 20_000, 1_000):
            embeddings.static_embeddings([f"token{i}" for i in range(start, start + 1_000)], 1, 0)
        held = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
        embeddings.clear_memo()
    assert held <= 1 << 19, held


@pytest.mark.slow
def test_json_export_streams(tmp_path):
    """The .json writer holds a row at a time, not every number as a Python float."""
    import tracemalloc

    from engine.files.export import save_trace

    # 150 tokens: an 8 MB file against a ~170 kB peak (48×); 300 wrote 29 MB under tracemalloc for
    # the same check (~100 s of wall time under load); a writer holding every number fails either way
    result = compute(AttentionConfig(text=" ".join(f"w{i}" for i in range(150)), tokenizer="whitespace"))
    tracemalloc.start()
    try:
        save_trace(result, tmp_path / "t.json")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    size = (tmp_path / "t.json").stat().st_size
    assert size > 5_000_000 and peak < size / 20, (peak, size)
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


@pytest.mark.slow
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


# ------------------------------------------------------------------ output paths that are not plain files
def test_dangling_symlink_out_names_the_missing_target(tmp_path, capsys):
    link = tmp_path / "out.npz"
    link.symlink_to(tmp_path / "gone" / "t.npz")
    line = cli_fails(capsys, *SMALL, "--out", link)
    assert str(tmp_path / "gone") in line and "symbolic link" in line, line
    assert os.listdir(tmp_path) == ["out.npz"]
    with pytest.raises(EngineError, match="symbolic link"):  # the window's writer says the same
        from engine.core.safe_io import write_bytes_atomic

        write_bytes_atomic(link, b"x")


def test_stale_temporary_files_of_a_killed_export_are_removed_on_the_next_write(tmp_path, capsys):
    """SIGKILL leaves the .ae-*.tmp behind (up to 500 MB); the next write to that folder removes
    the ones no live writer holds, and only files of the app's own pattern."""
    stale = tmp_path / ".ae-abcd1234.tmp"
    stale.write_bytes(b"x" * 1000)
    old = time.time() - 3600
    os.utime(stale, (old, old))
    others = [tmp_path / ".ae-abcd1234.tmp.keep", tmp_path / "ae-abcd1234.tmp", tmp_path / ".ae-ABCD1234.tmp"]
    for other in others:
        other.write_bytes(b"mine")
        os.utime(other, (old, old))
    assert cli.main(["main.py", "export", *SMALL, "--out", str(tmp_path / "t.npz")]) == 0
    assert sorted(os.listdir(tmp_path)) == sorted(["t.npz", *(o.name for o in others)])


@pytest.mark.slow
@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs a second process holding the lock")
def test_a_temporary_file_a_live_writer_holds_is_kept(tmp_path):
    """A second export writing into the same folder right now keeps its temporary file."""
    import fcntl

    from engine.core.safe_io import remove_stale_temporaries

    held = tmp_path / ".ae-zzzz9999.tmp"
    held.write_bytes(b"partial")
    old = time.time() - 3600
    os.utime(held, (old, old))
    writer = subprocess.Popen([sys.executable, "-c", "import fcntl, os, sys, time\n"
                               "fd = os.open(sys.argv[1], os.O_RDWR); fcntl.flock(fd, fcntl.LOCK_EX)\n"
                               "print('held', flush=True); time.sleep(30)", str(held)],
                              stdout=subprocess.PIPE, text=True)
    try:
        assert writer.stdout.readline().strip() == "held"
        assert remove_stale_temporaries(tmp_path) == [] and held.exists()
    finally:
        writer.kill()
        writer.wait()
    assert remove_stale_temporaries(tmp_path) == [held.name] and not held.exists()
    del fcntl


@pytest.mark.slow
@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
def test_stdout_on_dev_full_still_exits_0_after_writing(tmp_path):
    out = tmp_path / "t.npz"
    with open("/dev/full", "w") as full:
        done = run("export", *SMALL, "--out", str(out), stdout=full, stderr=subprocess.PIPE)
    assert done.returncode == 0, done.stderr
    assert out.stat().st_size > 0 and "Traceback" not in done.stderr


@pytest.mark.slow
def test_bad_input_with_stderr_closed_exits_2(tmp_path):
    env = dict(os.environ, PYTHONUTF8="1")
    done = subprocess.run([sys.executable, MAIN, "export", "--text", "a", "--heads", "3", "--d-model", "4",
                           "--out", str(tmp_path / "t.npz")], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                          stderr=subprocess.DEVNULL, env=env, timeout=120, pass_fds=(),
                          preexec_fn=lambda: os.close(2))
    assert done.returncode == 2
    assert os.listdir(tmp_path) == []


@pytest.mark.parametrize("value", ["².1", "1.²", "١.٢", "0.1,x", "1.-1"])
def test_ablate_with_non_ascii_digits_is_a_usage_error(tmp_path, value, capsys):
    line = cli_fails(capsys, *SMALL, "--ablate", value, "--out", tmp_path / "t.npz")
    assert "--ablate takes layer.head pairs" in line and "unexpected" not in line, line
    assert os.listdir(tmp_path) == []


@pytest.mark.parametrize("text", ["\x01\x02", " \t ", "\u200b\u2028"])
def test_text_without_visible_characters_is_refused_for_every_model(tmp_path, text, capsys):
    """The toy engine refused "\\x01\\x02"; MiniLM wrote a trace of [CLS] [SEP] with exit 0."""
    toy = cli_fails(capsys, "--text", text, "--out", tmp_path / "t.npz")
    minilm = cli_fails(capsys, "--model", "minilm", "--text", text, "--out", tmp_path / "m.npz")
    assert all("no tokens" in line or "is empty" in line for line in (toy, minilm)), (toy, minilm)
    assert os.listdir(tmp_path) == []


def test_a_json_export_too_big_to_write_in_time_is_refused_with_the_estimate(tmp_path, capsys):
    """3,400 tokens took 621 s to write as .json: refused before writing, with the size and .npz's."""
    text = " ".join(f"w{i}" for i in range(3400))
    started = time.perf_counter()
    line = cli_fails(capsys, "--text", text, "--tokenizer", "whitespace", "--d-model", "8", "--heads", "4",
                     "--out", tmp_path / "t.json")
    assert "numbers" in line and "GiB" in line and ".npz" in line, line
    assert os.listdir(tmp_path) == [] and time.perf_counter() - started < 120


@pytest.mark.slow
@pytest.mark.parametrize("text", ["one\r\ntwo", "one\u2029two", "one\rtwo\u2028three"])
def test_a_sessions_line_breaks_survive_an_unrelated_edit(window, tmp_path, text):
    """The text box gives every line break back as \\n: a session's \\r\\n or U+2029 used to
    become \\n after changing the heads; the saved session must hold the text exactly."""
    path = tmp_path / "s.json"
    save_session(path, AttentionConfig(text=text, d_model=8, heads=2), {})
    assert window.open_session(str(path))
    assert window.wait_until_idle(30)
    assert window.controller.config.text == text
    window.panels["input"].heads.setValue(4)  # an unrelated edit
    assert window.wait_until_idle(30)
    assert window.controller.config.heads == 4 and window.controller.config.text == text
    window.panels["input"].text.setPlainText("one two")  # the user's own edit wins
    assert window.wait_until_idle(30)
    assert window.controller.config.text == "one two"


@pytest.mark.slow
@pytest.mark.parametrize("writer", ["atomic_write", "temporary_beside"])
def test_a_write_cut_short_by_the_programs_exit_leaves_no_temporary_file(tmp_path, writer):
    """Closing the window during a step-through export left a 0-byte .ae-XXXXXXXX.tmp (3 of 9 runs): the
    export lane's thread is stopped by the interpreter's exit and runs no ``finally``. The live temporary
    files are removed at exit; the existing target is untouched."""
    target = tmp_path / "steps.gif"
    target.write_bytes(b"the old export")
    probe = f"""import threading, time
from engine.core.safe_io import atomic_write, temporary_beside

started = threading.Event()

def export():
    if {writer!r} == "atomic_write":
        with atomic_write({str(target)!r}) as stream:
            stream.write(b"half")
            started.set()
            time.sleep(60)
    else:
        with temporary_beside({str(target)!r}):
            started.set()
            time.sleep(60)

threading.Thread(target=export, daemon=True).start()  # as the worker's threads
assert started.wait(10)
"""  # the main thread ends here, as the window's event loop does when it closes
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert done.returncode == 0, done.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["steps.gif"]
    assert target.read_bytes() == b"the old export"
