"""Reading a Hugging Face folder's safetensors weights when the file is hostile: cut while it loads
(a download or a converter rewriting it), cut before, or holding NaN and infinities.

A memory-mapped read dies with SIGBUS when a page past the file's new end is touched, so the cut
files are read in a child process: a regression shows as the child's signal, not as pytest dying.
"""
from __future__ import annotations

import json
import os
import shutil
import struct
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from tests import ROOT
from cli import commands as cli
from engine.core.errors import EngineError
from engine.models import safetensors_file
from engine.models.families.loading import load_folder

FIXTURES = ROOT / "tests" / "fixtures" / "families"


def copy_family(tmp_path, family: str) -> Path:
    folder = tmp_path / family
    shutil.copytree(FIXTURES / family, folder)
    return folder


def cut_points(path: Path) -> dict[str, int]:
    """Where a half-written file may end: right after its header, inside the data, one byte short."""
    size = path.stat().st_size
    with open(path, "rb") as stream:
        data_start = 8 + struct.unpack("<Q", stream.read(8))[0]
    return {"after the header": data_start, "a third in": data_start + (size - data_start) // 3,
            "one byte short": size - 1}


def run_child(code: str, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code), *args], capture_output=True, text=True,
                          timeout=120, cwd=str(ROOT), env=dict(os.environ, PYTHONUTF8="1"))


@pytest.mark.slow
@pytest.mark.parametrize("family", ["bert", "llama", "qwen2"])  # float32, float16, bfloat16 on disk
def test_a_file_cut_while_its_tensors_are_read_is_refused_not_fatal(tmp_path, family):
    """The file is cut after its header was checked and the first tensor read: the next read must come
    back short and be refused (a memory map killed the process with signal 7)."""
    folder = copy_family(tmp_path, family)
    weights = folder / "model.safetensors"
    original = weights.read_bytes()
    for label, size in cut_points(weights).items():
        weights.write_bytes(original)
        done = run_child("""
            import os, sys
            from engine.core.errors import EngineError
            from engine.models.safetensors_file import read_header, read_tensors
            path, size = sys.argv[1], int(sys.argv[2])
            header = read_header(path)
            def cut(fraction, message):
                if os.path.getsize(path) != size:
                    os.truncate(path, size)
            try:
                read_tensors(header, progress=cut)
            except EngineError as error:
                print("refused:", error)
            else:
                print("read")
            """, str(weights), str(size))
        assert done.returncode == 0, (label, done.returncode, done.stderr[-500:])
        assert done.stdout.startswith("refused:") and "changed or was cut" in done.stdout, (label, done.stdout)


@pytest.mark.slow
def test_a_folder_cut_while_another_thread_loads_it(tmp_path):
    """One thread loads the folder again and again while another cuts and restores its weights at each
    cut point: every load gives a model or an EngineError, the process never dies."""
    folder = copy_family(tmp_path, "bert")
    weights = folder / "model.safetensors"
    sizes = ",".join(str(size) for size in cut_points(weights).values())
    done = run_child("""
        import sys, threading, time
        from pathlib import Path
        from engine.core.errors import EngineError
        from engine.models.families.loading import load_folder
        folder, sizes = Path(sys.argv[1]), [int(s) for s in sys.argv[2].split(",")]
        weights = folder / "model.safetensors"
        original = weights.read_bytes()
        outcomes, stop = {"loaded": 0, "refused": 0}, threading.Event()
        def load():
            while not stop.is_set():
                try:
                    load_folder(folder)
                    outcomes["loaded"] += 1
                except EngineError:
                    outcomes["refused"] += 1
        loader = threading.Thread(target=load)
        loader.start()
        for _ in range(6):
            for size in sizes:
                with open(weights, "r+b") as stream:  # in place, as a converter rewriting it would
                    stream.truncate(size)
                time.sleep(0.01)
                with open(weights, "r+b") as stream:
                    stream.write(original)
                time.sleep(0.01)
        stop.set()
        loader.join()
        print(outcomes["loaded"], outcomes["refused"])
        """, str(folder), sizes)
    assert done.returncode == 0, (done.returncode, done.stderr[-500:])
    loaded, refused = map(int, done.stdout.split())
    assert loaded + refused > 0


@pytest.mark.parametrize("label", ["after the header", "a third in", "one byte short"])
def test_export_of_a_cut_folder_is_one_line_and_writes_nothing(tmp_path, label, capsys):
    folder = copy_family(tmp_path, "bert")
    weights = folder / "model.safetensors"
    os.truncate(weights, cut_points(weights)[label])
    out = tmp_path / "out.npz"
    assert cli.main(["main.py", "export", "--model", str(folder), "--text", "a cat", "--out", str(out)]) == 2
    [line] = capsys.readouterr().err.strip().splitlines()
    assert line.startswith("error:") and "model.safetensors" in line
    assert not out.exists()


# ---------------------------------------------------------------- values that are not numbers

def poison(weights: Path, tensor: str, index: int, value: float) -> None:
    """Write ``value`` over element ``index`` (flat) of ``tensor``, in the tensor's own dtype."""
    entry = safetensors_file.read_header(weights).tensors[tensor]
    stored = np.array([value], np.float32)
    raw = {"F32": stored.tobytes(), "F16": stored.astype("<f2").tobytes(),
           "BF16": (stored.view(np.uint32) >> 16).astype("<u2").tobytes()}[entry.dtype]
    with open(weights, "r+b") as stream:
        stream.seek(entry.begin + index * len(raw))
        stream.write(raw)


@pytest.mark.parametrize("family,value", [("bert", float("nan")), ("llama", float("inf")), ("qwen2", float("nan")),
                                          ("bert", float("-inf"))])
def test_weights_that_are_not_numbers_are_refused_naming_the_tensor(tmp_path, family, value, capsys):
    """An HF folder with a NaN weight exported exit 0 with every attention NaN; GGUF refused it."""
    folder = copy_family(tmp_path, family)
    weights = folder / "model.safetensors"
    header = safetensors_file.read_header(weights)
    tensor = max(header.tensors.values(), key=lambda e: e.numbers)  # the largest: not the first one read
    shape = tensor.shape
    index = tensor.numbers - 2
    poison(weights, tensor.name, index, value)
    with pytest.raises(EngineError) as refused:
        safetensors_file.read_tensors(safetensors_file.read_header(weights))
    message = str(refused.value)
    assert tensor.name in message and str(weights) in message
    assert str([int(i) for i in np.unravel_index(index, shape)]) in message  # the index of the bad value
    out = tmp_path / "out.npz"
    assert cli.main(["main.py", "export", "--model", str(folder), "--text", "a cat", "--out", str(out)]) == 2
    [line] = capsys.readouterr().err.strip().splitlines()
    assert tensor.name in line and "not finite" in line
    assert not out.exists()


def test_finite_weights_read_exactly(tmp_path):
    """The reads are the stored numbers: float32 equal bit for bit, float16 and bfloat16 upcast exactly
    (checked against NumPy's own float16 and a float32 whose low half is zero)."""
    numbers = np.array([[1.5, -2.25, 3e-3, 65504.0], [0.0, -0.0, 1e-7, 7.0]], np.float32)
    bf16 = (numbers.view(np.uint32) >> 16).astype("<u2")
    f16 = numbers.astype("<f2")
    data = numbers.tobytes() + f16.tobytes() + bf16.tobytes()
    a, b = numbers.nbytes, numbers.nbytes + f16.nbytes
    header = {"f32": {"dtype": "F32", "shape": [2, 4], "data_offsets": [0, a]},
              "f16": {"dtype": "F16", "shape": [2, 4], "data_offsets": [a, b]},
              "bf16": {"dtype": "BF16", "shape": [2, 4], "data_offsets": [b, len(data)]}}
    raw = json.dumps(header).encode()
    path = tmp_path / "m.safetensors"
    path.write_bytes(struct.pack("<Q", len(raw)) + raw + data)
    read = safetensors_file.read_tensors(safetensors_file.read_header(path))
    assert read["f32"].tobytes() == numbers.tobytes()
    assert np.array_equal(read["f16"], f16.astype(np.float32))
    assert read["bf16"].tobytes() == (bf16.astype(np.uint32) << 16).astype("<u4").tobytes()
    assert all(value.dtype == np.float32 and value.flags.c_contiguous for value in read.values())


def test_a_file_rewritten_after_its_header_was_read_is_refused(tmp_path):
    """Same size, new contents (a converter writing in place): the modification time tells."""
    folder = copy_family(tmp_path, "bert")
    weights = folder / "model.safetensors"
    header = safetensors_file.read_header(weights)
    info = weights.stat()
    os.utime(weights, ns=(info.st_atime_ns, info.st_mtime_ns + 1_000_000_000))
    with pytest.raises(EngineError, match="changed or was cut"):
        safetensors_file.read_tensors(header)
    assert load_folder(folder).facts.layers == 2  # read again from the start: the file as it is now


def test_a_file_replaced_after_its_header_was_read_is_refused(tmp_path):
    """Another file of the same size and time renamed over it (a download finishing): its offsets may differ."""
    folder = copy_family(tmp_path, "bert")
    weights = folder / "model.safetensors"
    header = safetensors_file.read_header(weights)
    other = tmp_path / "other.safetensors"
    shutil.copy2(weights, other)
    info = weights.stat()
    os.utime(other, ns=(info.st_atime_ns, info.st_mtime_ns))
    os.replace(other, weights)
    with pytest.raises(EngineError, match="changed or was cut"):
        safetensors_file.read_tensors(header)


@pytest.mark.slow
def test_a_fifo_put_in_its_place_after_the_header_was_read_does_not_block(tmp_path):
    folder = copy_family(tmp_path, "bert")
    weights = folder / "model.safetensors"
    done = run_child("""
        import os, sys
        from engine.core.errors import EngineError
        from engine.models.safetensors_file import read_header, read_tensors
        header = read_header(sys.argv[1])
        os.unlink(sys.argv[1])
        os.mkfifo(sys.argv[1])
        try:
            read_tensors(header)
        except EngineError as error:
            print("refused:", error)
        """, str(weights))
    assert done.returncode == 0 and done.stdout.startswith("refused:"), (done.stdout, done.stderr[-500:])
