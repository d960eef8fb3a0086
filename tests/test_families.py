"""Issue 22: Hugging Face folders of six families and GGUF files of four, against transformers.

The fixtures (tests/fixtures/families/) are tiny random models made and run by transformers in
scripts/make_family_fixtures.py (CI has no torch): ``export --model FOLDER`` must give the same
input ids, attentions, hidden states and next-token logits. Then the Bad input list of the issue:
each refusal is one ``error:`` line, exit code 2, nothing written.
"""
from __future__ import annotations

import json
import os
import shutil
import struct
from pathlib import Path

import numpy as np
import pytest

from cli import commands as cli
from engine.core.errors import EngineError
from engine.models import MODELS, hf_folder, safetensors_file
from engine.models.families import load_folder
from shared_helpers import _registry_as_it_was  # noqa: F401 (autouse: the registry as it was after each test)

FIXTURES = Path(__file__).parent / "fixtures" / "families"
FAMILIES = ("bert", "xlm-roberta", "gpt2", "llama", "qwen2", "qwen3")
GGUF_FAMILIES = ("gpt2", "llama", "qwen2", "qwen3")


def reference(family: str):
    return np.load(FIXTURES / f"{family}_reference.npz")


def export(tmp_path, model: str, text: str) -> dict:
    out = tmp_path / "out.npz"
    assert cli.main(["main.py", "export", "--model", model, "--text", text, "--out", str(out)]) == 0
    with np.load(out) as data:
        return {name: data[name] for name in data.files}


def assert_matches(arrays: dict, ref) -> None:
    assert arrays["input_ids"].tolist() == ref["input_ids"].tolist()  # exactly as tokenizer.json encodes
    np.testing.assert_allclose(arrays["attentions"], ref["attentions"], rtol=0, atol=1e-4)
    hidden = ref["hidden_states"]
    largest = np.abs(hidden).max(axis=(1, 2))  # each layer's largest value
    error = np.abs(arrays["hidden_states"] - hidden).max(axis=(1, 2))
    assert (error <= 1e-4 * largest).all(), (error, largest)
    if "next_token_logits" in ref.files:
        logits = ref["next_token_logits"]
        np.testing.assert_allclose(arrays["next_token_logits"], logits, rtol=0, atol=1e-4 * np.abs(logits).max())


@pytest.mark.parametrize("family", FAMILIES)
def test_folder_export_equals_transformers(tmp_path, family):
    ref = reference(family)
    assert_matches(export(tmp_path, str(FIXTURES / family), str(ref["text"])), ref)


@pytest.mark.parametrize("family", GGUF_FAMILIES)
def test_gguf_export_equals_transformers(tmp_path, family):
    ref = reference(family)
    assert_matches(export(tmp_path, str(FIXTURES / f"{family}.gguf"), str(ref["text"])), ref)


def test_fixtures_are_not_trivial():
    """The references must be able to catch a wrong transpose or a dropped bias: weights spread,
    attention neither uniform nor one-hot, and the float formats the loader must upcast present."""
    for family in FAMILIES:
        attentions = reference(family)["attentions"]
        peak = attentions.max(axis=-1).mean()
        assert 0.2 < peak < 0.9, (family, peak)
    dtypes = {entry.dtype for family in ("llama", "qwen2") for entry in
              safetensors_file.read_header(FIXTURES / family / "model.safetensors").tensors.values()}
    assert dtypes == {"F16", "BF16"}
    assert (FIXTURES / "gpt2" / "model.safetensors.index.json").is_file()


def test_bfloat16_and_float16_upcast_exactly(tmp_path):
    """BF16 is read by hand (NumPy has no bfloat16): values whose low 16 bits are zero survive exactly."""
    values = np.array([[1.5, -2.25, 3.0e-3, 65504.0], [0.0, -0.0, 1e30, -7.0]], np.float32)
    bf16 = (values.view(np.uint32) >> 16).astype("<u2")  # exact for these: their low halves are 0 or dropped
    expected_bf16 = (bf16.astype(np.uint32) << 16).view(np.float32)
    data = bf16.tobytes()
    f16 = np.array([[1.5, -2.25, 3.0e-3, 65504.0], [0.0, -0.0, 6e-8, -7.0]], np.float16)
    header = {"a": {"dtype": "BF16", "shape": [2, 4], "data_offsets": [0, len(data)]},
              "b": {"dtype": "F16", "shape": [2, 4], "data_offsets": [len(data), len(data) + f16.nbytes]}}
    path = write_raw(tmp_path / "x.safetensors", header, data + f16.tobytes())
    tensors = safetensors_file.read_tensors(safetensors_file.read_header(path))
    assert tensors["a"].dtype == np.float32 and tensors["b"].dtype == np.float32
    assert np.array_equal(tensors["a"], expected_bf16)
    assert np.array_equal(tensors["b"], f16.astype(np.float32))


def test_folder_model_facts_and_session_name():
    from engine.models import FOLDER_PREFIX, model_info, register_folder

    name = register_folder(FIXTURES / "qwen3")
    assert name == FOLDER_PREFIX + str((FIXTURES / "qwen3").resolve())
    entry = model_info(name)
    assert entry.kind == "decoder" and entry.path == str((FIXTURES / "qwen3").resolve())
    assert model_info(register_folder(FIXTURES / "bert")).kind == "encoder"
    info = hf_folder.inspect_folder(FIXTURES / "qwen3")
    assert (info.family, info.layers, info.heads, info.kv_heads, info.head_dim) == ("qwen3", 2, 4, 2, 16)
    model = load_folder(FIXTURES / "qwen3")
    assert model.config.qk_norm and model.weights.layers[0].q_norm.shape == (16,)


# ---------------------------------------------------------------- bad input


def copy_family(tmp_path, family: str = "llama") -> Path:
    folder = tmp_path / family
    shutil.copytree(FIXTURES / family, folder)
    return folder


def write_raw(path: Path, header: dict, data: bytes, length: int | None = None) -> Path:
    raw = json.dumps(header).encode()
    path.write_bytes(struct.pack("<Q", len(raw) if length is None else length) + raw + data)
    return path


def edit_config(folder: Path, **changes) -> None:
    config = json.loads((folder / "config.json").read_text())
    config.update(changes)
    (folder / "config.json").write_text(json.dumps(config))


def rewrite_weights(folder: Path, change) -> None:
    """Rewrite model.safetensors (llama, float16) through ``change(header_dict, data) → (header, data)``."""
    path = folder / "model.safetensors"
    raw = path.read_bytes()
    length = struct.unpack("<Q", raw[:8])[0]
    header = json.loads(raw[8: 8 + length])
    header, data = change(header, raw[8 + length:])
    write_raw(path, header, data)


def _past_end(header, data):
    header["lm_head.weight"]["data_offsets"][1] += 10**6
    return header, data


def _overlap(header, data):
    a, b = header["model.norm.weight"], header["model.embed_tokens.weight"]
    a["data_offsets"] = [b["data_offsets"][0], b["data_offsets"][0] + (a["data_offsets"][1] - a["data_offsets"][0])]
    return header, data


def _wrong_length(header, data):
    header["model.norm.weight"]["shape"] = [33]
    return header, data


def _wrong_shape(header, data):  # a consistent header whose tensor has the shape of another model
    entry = header["model.layers.0.mlp.up_proj.weight"]
    entry["shape"] = list(reversed(entry["shape"]))
    return header, data


def _wrong_dtype(header, data):
    entry = header["model.layers.0.mlp.up_proj.weight"]
    entry["dtype"] = "I16"
    return header, data


def _huge_header(folder):
    path = folder / "model.safetensors"
    raw = path.read_bytes()
    path.write_bytes(struct.pack("<Q", 2**62) + raw[8:])


def _pickle_only(folder):
    (folder / "model.safetensors").unlink()
    (folder / "pytorch_model.bin").write_bytes(b"\x80\x04not really a pickle")


def _missing_shard(folder):
    (folder / "model-00002-of-00002.safetensors").unlink()


BAD = {
    # name: (family, how to break it, words the one error line must contain)
    "no-config": ("llama", lambda f: (f / "config.json").unlink(), ["config.json"]),
    "no-weights": ("llama", lambda f: (f / "model.safetensors").unlink(), ["model.safetensors"]),
    "no-tokenizer": ("llama", lambda f: (f / "tokenizer.json").unlink(), ["tokenizer.json"]),
    "missing-shard": ("gpt2", _missing_shard, ["model-00002-of-00002.safetensors"]),
    "pickle-only": ("llama", _pickle_only, ["pytorch_model.bin", "pickle", "runs", "safe_serialization=True"]),
    "layers-1e9": ("llama", lambda f: edit_config(f, num_hidden_layers=10**9), ["num_hidden_layers", "1000000000"]),
    "vocab-0": ("llama", lambda f: edit_config(f, vocab_size=0), ["vocab_size", "0"]),
    "heads-not-dividing": ("bert", lambda f: edit_config(f, num_attention_heads=5), ["5 heads", "width 32"]),
    "kv-not-dividing": ("llama", lambda f: edit_config(f, num_key_value_heads=3), ["3 key/value"]),
    "unknown-architecture": ("llama", lambda f: edit_config(f, model_type="mamba", architectures=["MambaForCausalLM"]),
                             ["MambaForCausalLM", "mamba", "bert", "gpt2", "qwen3", "roberta"]),
    "config-not-json": ("llama", lambda f: (f / "config.json").write_text("{nope"), ["config.json", "JSON"]),
    "offsets-past-end": ("llama", lambda f: rewrite_weights(f, _past_end), ["lm_head.weight", "outside"]),
    "overlapping": ("llama", lambda f: rewrite_weights(f, _overlap), ["overlap"]),
    "length-not-shape": ("llama", lambda f: rewrite_weights(f, _wrong_length), ["model.norm.weight", "needs"]),
    "header-2^62": ("llama", _huge_header, ["4611686018427387904", "model.safetensors"]),
    "wrong-shape": ("llama", lambda f: rewrite_weights(f, _wrong_shape), ["up_proj", "(32, 64)", "(64, 32)"]),
    "wrong-dtype": ("llama", lambda f: rewrite_weights(f, _wrong_dtype), ["up_proj", "I16"]),
    "tokenizer-broken": ("llama", lambda f: (f / "tokenizer.json").write_text('{"model": 3}'), ["tokenizer.json"]),
    "tokenizer-other-vocab": ("bert", lambda f: shutil.copy(FIXTURES / "gpt2" / "tokenizer.json", f / "tokenizer.json"),
                              ["tokenizer.json", "another model", "120"]),
    "hidden-act": ("bert", lambda f: edit_config(f, hidden_act="relu"), ["hidden_act", "relu"]),
    "rope-scaling": ("llama", lambda f: edit_config(f, rope_scaling={"rope_type": "yarn", "factor": 4.0}), ["yarn"]),
}


@pytest.mark.parametrize("name", list(BAD))
def test_bad_folder_is_one_error_line(tmp_path, name, capsys):
    family, breaker, words = BAD[name]
    folder = copy_family(tmp_path, family)
    breaker(folder)
    before = sorted(p.name for p in tmp_path.rglob("*"))
    out = tmp_path / "out.npz"
    assert cli.main(["main.py", "export", "--model", str(folder), "--text", "the cat", "--out", str(out)]) == 2
    captured = capsys.readouterr()
    lines = captured.err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), captured.err
    for word in words:
        assert word in lines[0], (word, lines[0])
    assert sorted(p.name for p in tmp_path.rglob("*")) == before  # nothing written


def test_pickle_only_folder_exits_2_with_one_line_as_a_process(tmp_path):
    import subprocess
    import sys

    folder = copy_family(tmp_path)
    _pickle_only(folder)
    done = subprocess.run([sys.executable, str(Path(__file__).parents[1] / "main.py"), "export", "--model",
                           str(folder), "--text", "a", "--out", str(tmp_path / "o.npz")], capture_output=True,
                          text=True, timeout=120, env=dict(os.environ, PYTHONUTF8="1"))
    assert done.returncode == 2 and len(done.stderr.splitlines()) == 1 and "pickle" in done.stderr


def test_weights_over_the_budget_are_refused_before_reading(tmp_path, monkeypatch):
    """The float32 size comes from the headers; no tensor is read when it is over the budget."""
    folder = copy_family(tmp_path, "qwen2")  # bfloat16 on disk: float32 doubles it
    info = hf_folder.inspect_folder(folder)
    stored = (folder / "model.safetensors").stat().st_size
    numbers = sum(entry.numbers for entry in info.headers[0].tensors.values())
    assert info.float32_bytes == 4 * numbers and info.float32_bytes > 1.9 * (stored - 10_000)

    def forbidden(*args, **kwargs):
        raise AssertionError("a tensor was read")

    monkeypatch.setattr(safetensors_file, "read_tensors", forbidden)
    monkeypatch.setattr(hf_folder, "read_tensors", forbidden)
    with pytest.raises(EngineError) as error:
        load_folder(folder, budget=info.float32_bytes - 1)
    assert hf_folder.WEIGHTS_BUDGET_ENV in str(error.value) and str(folder) in str(error.value)
    monkeypatch.setenv(hf_folder.WEIGHTS_BUDGET_ENV, str((info.float32_bytes - 1) / 1024**3))
    with pytest.raises(EngineError):
        load_folder(folder)


def test_half_a_billion_parameters_fit_the_default_budget():
    assert 4 * 500_000_000 <= hf_folder.DEFAULT_WEIGHTS_BUDGET


@pytest.mark.parametrize("length", [7, 2**62, 2**64 - 1])
def test_lying_header_lengths(tmp_path, length):
    path = tmp_path / "m.safetensors"
    path.write_bytes(struct.pack("<Q", length) + b"{}")
    with pytest.raises(EngineError, match="m.safetensors"):
        safetensors_file.read_header(path)


def test_short_file(tmp_path):
    (tmp_path / "m.safetensors").write_bytes(b"\x01\x02")
    with pytest.raises(EngineError, match="shorter than its 8-byte header"):
        safetensors_file.read_header(tmp_path / "m.safetensors")


@pytest.mark.parametrize("family", FAMILIES)
def test_family_models_offer_the_hook_api(family):
    """The hook points of every family agree with its trace (hooks_api.md); GPT-2 adds hook_pos_embed
    (learned positions) and has no rotary points."""
    model = load_folder(FIXTURES / family)
    text = str(reference(family)["text"])
    trace, cache = model.run_with_cache(text)
    assert set(cache) == set(model.hook_names())
    facts = model.facts  # the model contract: declared from the folder's own files
    family_name = "roberta" if family == "xlm-roberta" else family
    assert (facts.family, facts.layers, facts.heads) == (family_name, 2, 4) and facts.name == family
    assert trace.attentions.shape[:2] == (facts.layers, facts.heads)
    assert (trace.next_token_logits is not None) == facts.capabilities.next_token_logits == (family in DECODERS)
    assert facts.special_tokens and "tokenizer.json" in facts.tokenizer_note
    assert not facts.special_tokens & {"[UNK]", "<unk>"}  # the unknown piece stands for text
    layers = trace.attentions.shape[0]
    for layer in range(layers):
        np.testing.assert_allclose(cache[f"blocks.{layer}.attn.hook_pattern"], trace.attentions[layer], atol=1e-6)
    np.testing.assert_allclose(cache["blocks.0.hook_resid_pre"], trace.hidden_states[0], atol=1e-6)
    if family == "gpt2":
        assert "hook_pos_embed" in cache and not any("hook_rot_q" in name for name in cache)
        np.testing.assert_allclose(cache["hook_embed"] + cache["hook_pos_embed"], cache["blocks.0.hook_resid_pre"],
                                   atol=1e-6)
    if family in ("llama", "qwen2", "qwen3"):
        assert f"blocks.{layers - 1}.attn.hook_rot_q" in cache
    if family in DECODERS:
        np.testing.assert_allclose(cache["ln_final.hook_out"], trace.hidden_states[-1], atol=1e-6)
        # doubling one head's output changes the logits (the hook reaches the family's forward)
        doubled = model.run_with_hooks(text, fwd_hooks=[("blocks.0.attn.hook_z", lambda z, name: z * 2)])
        assert not np.allclose(doubled.next_token_logits, trace.next_token_logits)


DECODERS = ("gpt2", "llama", "qwen2", "qwen3")


@pytest.mark.parametrize("name", ["model.safetensors", "tokenizer.json", "config.json"])
def test_a_fifo_or_device_in_place_of_a_file_never_hangs(tmp_path, name, capsys):
    folder = copy_family(tmp_path, "qwen3")
    (folder / name).unlink()
    os.mkfifo(folder / name)  # reading it would wait forever for a writer
    assert cli.main(["main.py", "export", "--model", str(folder), "--text", "a", "--out", str(tmp_path / "o.npz")]) == 2
    assert name in capsys.readouterr().err
    (folder / name).unlink()
    os.symlink("/dev/zero", folder / name)  # never ends
    assert cli.main(["main.py", "export", "--model", str(folder), "--text", "a", "--out", str(tmp_path / "o.npz")]) == 2
    assert name in capsys.readouterr().err


def test_the_weights_budget_applies_to_gguf_files_too(monkeypatch):
    from engine.models.smollm2 import load_gguf

    monkeypatch.setenv(hf_folder.WEIGHTS_BUDGET_ENV, str(1000 / 1024**3))
    with pytest.raises(EngineError) as error:
        load_gguf(FIXTURES / "qwen3.gguf")
    assert hf_folder.WEIGHTS_BUDGET_ENV in str(error.value) and "qwen3.gguf" in str(error.value)
