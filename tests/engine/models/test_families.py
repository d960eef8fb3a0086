"""Hugging Face folders of every family and GGUF files of those llama.cpp writes, against transformers.

The fixtures (tests/fixtures/families/) are tiny random models made and run by transformers in
scripts/make_family_fixtures.py (CI has no torch): ``export --model FOLDER`` must give the same
input ids, attentions, hidden states and next-token logits. Then the Bad input list of the issue:
each refusal is one ``error:`` line, exit code 2, nothing written.
"""
from __future__ import annotations

import json
import math
import os
import shutil
import struct
from pathlib import Path

import numpy as np
import pytest

from tests import FIXTURES, ROOT
from cli import commands as cli
from engine.core import memory
from engine.core.errors import EngineError
from engine.models import MODELS, hf_folder, safetensors_file
from engine.models.families.loading import load_folder

FIXTURES = FIXTURES / "families"
FAMILIES = ("bert", "xlm-roberta", "gpt2", "llama", "qwen2", "qwen3", "mistral", "llama-old", "phi3", "gemma2",
            "gemma3", "olmo2")
GGUF_FAMILIES = ("gpt2", "llama", "qwen2", "qwen3", "llama-old", "phi3", "olmo2", "gemma2", "gemma3")


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
    """Gemma's GGUF cannot state query_pre_attn_scalar or layer kinds other than llama.cpp's: its reference is
    transformers run on the same weights with the values the file implies (scripts/make_family_fixtures.py)."""
    implied = FIXTURES / f"{family}-gguf_reference.npz"
    ref = np.load(implied) if implied.is_file() else reference(family)
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
    # every config key that changes the computation: a value the block cannot compute is named
    "rope-parameters-yes": ("llama", lambda f: edit_config(f, rope_parameters="yes"), ["rope_parameters", "'yes'"]),
    "rope-parameters-type": ("mistral", lambda f: edit_config(f, rope_parameters={"rope_type": "dynamic",
                                                                                 "rope_theta": 1e4}),
                             ["rope_parameters.rope_type", "dynamic"]),
    "model-type-list": ("llama", lambda f: edit_config(f, model_type=["llama"]), ["model_type", "['llama']"]),
    "unknown-activation": ("phi3", lambda f: edit_config(f, hidden_act="relu2"), ["hidden_act", "relu2", "silu"]),
    "gemma-activation": ("gemma2", lambda f: edit_config(f, hidden_activation="gelu"),
                         ["hidden_activation", "'gelu'", "gelu_pytorch_tanh"]),
    "window-on-llama": ("llama", lambda f: edit_config(f, sliding_window=8), ["sliding_window", "8", "llama"]),
    "window-0": ("mistral", lambda f: edit_config(f, sliding_window=0), ["sliding_window", "= 0"]),
    "window-past-positions": ("mistral", lambda f: edit_config(f, sliding_window=65), ["sliding_window", "65", "64"]),
    "window-types": ("gemma2", lambda f: edit_config(f, layer_types=["sliding_attention"]), ["layer_types"]),
    "bidirectional": ("gemma3", lambda f: edit_config(f, use_bidirectional_attention=True),
                      ["use_bidirectional_attention"]),
    "softcap-0": ("gemma2", lambda f: edit_config(f, attn_logit_softcapping=0), ["attn_logit_softcapping", "= 0"]),
    "softcap-nan": ("gemma2", lambda f: edit_config(f, final_logit_softcapping=float("nan")),
                    ["config.json", "NaN"]),  # the JSON reader refuses NaN anywhere: the key check below
    "softcap-on-llama": ("olmo2", lambda f: edit_config(f, final_logit_softcapping=30.0),
                         ["final_logit_softcapping", "30.0", "olmo2"]),
    "query-scale-0": ("gemma3", lambda f: edit_config(f, query_pre_attn_scalar=0), ["query_pre_attn_scalar"]),
    "partial-rotary": ("phi3", lambda f: edit_config(f, rope_parameters={"rope_type": "default", "rope_theta": 1e4,
                                                                        "partial_rotary_factor": 0.5}),
                       ["partial_rotary_factor", "0.5"]),
    "longrope": ("phi3", lambda f: edit_config(f, rope_scaling={"type": "longrope"}), ["rope_scaling", "longrope"]),
    "mlp-bias": ("llama", lambda f: edit_config(f, mlp_bias=True), ["mlp_bias"]),
    "fused-not-splitting": ("phi3", lambda f: edit_config(f, num_key_value_heads=4),
                            ["qkv_proj", "(64, 32)", "(96, 32)"]),
    "another-family's-weights": ("llama", lambda f: edit_config(f, model_type="phi3"),
                                 ["qkv_proj", "phi3"]),
    "gemma-config-olmo-weights": ("olmo2", lambda f: edit_config(f, model_type="gemma2"),
                                  ["input_layernorm", "gemma2"]),
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


@pytest.mark.slow
def test_pickle_only_folder_exits_2_with_one_line_as_a_process(tmp_path):
    import subprocess
    import sys

    folder = copy_family(tmp_path)
    _pickle_only(folder)
    done = subprocess.run([sys.executable, str(ROOT / "main.py"), "export", "--model",
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
    assert 4 * 500_000_000 <= memory.DEFAULT_WEIGHTS_BUDGET


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
    family_name = {"xlm-roberta": "roberta", "llama-old": "llama"}.get(family, family)
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


DECODERS = ("gpt2", "llama", "qwen2", "qwen3", "mistral", "llama-old", "phi3", "gemma2", "gemma3", "olmo2")


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


# ---------------------------------------------------------------- the block features of the newer families


CONFIG_REFUSALS = ("rope-parameters-yes", "model-type-list", "unknown-activation", "window-on-llama", "window-0",
                   "window-past-positions", "softcap-0", "fused-not-splitting",
                   "another-family's-weights")


@pytest.mark.parametrize("name", CONFIG_REFUSALS)
def test_config_refusals_read_no_weight(tmp_path, name, monkeypatch):
    family, breaker, words = BAD[name]
    folder = copy_family(tmp_path, family)
    breaker(folder)

    def forbidden(*args, **kwargs):
        raise AssertionError("a tensor was read")

    monkeypatch.setattr(hf_folder, "read_tensors", forbidden)
    with pytest.raises(EngineError) as error:
        load_folder(folder)
    assert all(word in str(error.value) for word in words), str(error.value)


@pytest.mark.parametrize("key", ["attn_logit_softcapping", "final_logit_softcapping", "query_pre_attn_scalar",
                                 "rope_theta", "rms_norm_eps"])
@pytest.mark.parametrize("value", [float("nan"), float("inf"), -1.0])
def test_a_number_the_block_cannot_use_is_named_by_its_key(key, value):
    """Past the JSON reader (a config handed over in memory): NaN, infinity and negatives named."""
    from dataclasses import replace

    from engine.models.families import family

    folder = "llama-old" if key == "rope_theta" else "gemma2"  # the older form's top-level θ
    info = hf_folder.inspect_folder(FIXTURES / folder)
    with pytest.raises(EngineError) as error:
        family(info.family).config(replace(info, config=dict(info.config, **{key: value})))
    assert key in str(error.value) and str(value) in str(error.value), str(error.value)


def test_feature_fixtures_switch_their_features_on():
    """Each newer family's fixture has its feature where it changes the numbers (a window shorter than
    the text, caps below the scores' and logits' range, grouped heads in a fused QKV), and the older
    config.json form (rope_theta at the top, no num_key_value_heads)."""
    n = len(reference("mistral")["input_ids"])
    assert load_folder(FIXTURES / "mistral").config.layer_windows == (5, 5) and n > 5
    gemma2 = load_folder(FIXTURES / "gemma2").config
    assert (gemma2.layer_windows, gemma2.attn_softcap, gemma2.final_softcap, gemma2.query_scale) == ((4, 0), 2.0, 3.0,
                                                                                                      24.0)
    assert np.abs(reference("gemma2")["next_token_logits"]).max() > 0.5 * 3.0  # the cap bends the logits
    phi3 = json.loads((FIXTURES / "phi3" / "config.json").read_text())
    assert phi3["num_key_value_heads"] < phi3["num_attention_heads"]
    gemma3 = load_folder(FIXTURES / "gemma3").config
    assert (gemma3.rope_theta, gemma3.local_rope_theta, gemma3.qk_norm) == (1e6, 1e4, True)
    old = json.loads((FIXTURES / "llama-old" / "config.json").read_text())
    assert "rope_theta" in old and "num_key_value_heads" not in old and "rope_parameters" not in old
    assert load_folder(FIXTURES / "llama-old").config.rope_theta == 20000.0


@pytest.mark.parametrize("family, switch_off", [
    ("mistral", dict(layer_windows=())), ("gemma2", dict(attn_softcap=0.0)), ("gemma2", dict(layer_windows=())),
    ("gemma2", dict(query_scale=0.0)), ("gemma3", dict(local_rope_theta=0.0)), ("olmo2", dict(qk_norm_whole=False)),
    ("llama", dict(rope_scaling=())),
])
def test_each_feature_changes_the_result_beyond_the_tolerance(family, switch_off):
    """Without the feature the attentions or logits leave transformers' by far more than 1e-4: the
    fixtures would catch a block that ignored it."""
    from dataclasses import replace

    from engine.models.decoder import Decoder

    model = load_folder(FIXTURES / family)
    ref = reference(family)
    config = replace(model.config, **switch_off)
    if "qk_norm_whole" in switch_off:  # per head needs weights of d_k: the first head's share
        weights = replace(model.weights, layers=tuple(replace(w, q_norm=w.q_norm[:config.head_dim],
                                                              k_norm=w.k_norm[:config.head_dim])
                                                      for w in model.weights.layers))
    elif "local_rope_theta" in switch_off:
        weights = replace(model.weights, local_inverse_frequency=None)
    elif "rope_scaling" in switch_off:  # Llama 3's frequencies unscaled
        from engine.core.positional import inverse_frequencies

        weights = replace(model.weights, inverse_frequency=inverse_frequencies(config.head_dim, config.rope_theta))
    else:
        weights = model.weights
    plain = Decoder(config, weights, model.tokenizer, model.path).run_ids(ref["input_ids"])
    moved = max(np.abs(plain.attentions - ref["attentions"]).max(),
                np.abs(plain.next_token_logits - ref["next_token_logits"]).max())
    assert moved > 1e-2, moved


@pytest.mark.parametrize("family", ["mistral", "phi3", "gemma2", "gemma3", "olmo2"])
def test_reference_block_in_float64_matches_the_forward(family):
    """engine.models.llama.reference_block (plain float64 loops: the window and the cap element by
    element) gives each layer's output from its input as the fused forward does."""
    from engine.models.llama import reference_block

    model = load_folder(FIXTURES / family)
    trace = model.run(str(reference(family)["text"]))
    for layer in range(model.config.num_layers - 1):  # the last row is after the final norm
        expected = reference_block(trace.hidden_states[layer], model.weights.layers[layer], model.config,
                                   model.weights.frequencies(model.config, layer), layer)
        np.testing.assert_allclose(trace.hidden_states[layer + 1], expected, rtol=0,
                                   atol=1e-4 * np.abs(expected).max())


def test_window_mask_and_soft_cap_against_loops():
    from engine.models.block_features import attend_features, soft_cap, window_mask

    for n_q, n_k, window in ((6, 6, 0), (6, 6, 3), (2, 7, 3), (5, 5, 1)):
        mask = window_mask(n_q, n_k, window)
        for i in range(n_q):
            position = n_k - n_q + i
            for j in range(n_k):
                assert mask[i, j] == (j > position or (window > 0 and j <= position - window))
    values = np.array([-100.0, -1.0, 0.0, 0.5, 40.0], np.float32)
    np.testing.assert_allclose(soft_cap(values.copy(), 2.0), [2 * math.tanh(v / 2) for v in values], atol=1e-6)
    rng = np.random.default_rng(3)
    q, k, v = rng.normal(size=(4, 5, 8)), rng.normal(size=(2, 5, 8)), rng.normal(size=(2, 5, 8))
    got = attend_features(q.astype(np.float32), k.astype(np.float32), v.astype(np.float32), divisor=3.0, window=2,
                          softcap=1.5)
    for head in range(4):
        for i in range(5):
            scores = [1.5 * math.tanh(float(q[head, i] @ k[head // 2, j]) / 3.0 / 1.5) for j in range(5)]
            seen = [j for j in range(5) if i - 2 < j <= i]
            total = sum(math.exp(scores[j]) for j in seen)
            row = [math.exp(scores[j]) / total if j in seen else 0.0 for j in range(5)]
            np.testing.assert_allclose(got["weights"][head, i], row, atol=1e-6)
            np.testing.assert_allclose(got["head_outputs"][head, i], np.array(row) @ v[head // 2], atol=1e-5)


def test_layer_scores_show_the_window_and_the_cap():
    """The trace's recomputed scores (what the window draws) are −∞ outside the window and capped."""
    model = load_folder(FIXTURES / "gemma2")
    trace = model.run(str(reference("gemma2")["text"]))
    _, scaled = trace.layer_scores(0)  # layer 0: windowed (4) and capped (2.0)
    n = trace.n
    for i in range(n):
        for j in range(n):
            assert np.isneginf(scaled[:, i, j]).all() == (j > i or j <= i - 4)
    assert np.abs(scaled[np.isfinite(scaled)]).max() < 2.0
    _, full = trace.layer_scores(1)  # layer 1: global
    assert np.isfinite(full[:, n - 1]).all()


def test_the_registry_lists_every_family_module():
    from engine.models import families

    modules = sorted(p.stem for p in Path(families.__file__).parent.glob("*.py")
                     if p.stem not in families.SHARED and p.stem != "__init__")
    assert sorted(families.registry()) == modules
    assert families.by_model_type()["xlm-roberta"] == "roberta" and families.by_model_type()["gemma3_text"] == "gemma3"
    assert "phi3" in families.gguf_architectures() and "mistral" not in families.gguf_architectures()
    assert families.folder_families().split(", ") == list(families.registry())


@pytest.mark.slow
def test_no_family_branch_outside_the_family_modules():
    import re
    import subprocess

    root = ROOT
    found = subprocess.run(["grep", "-rn", "family ==", "engine", "app", "cli"], cwd=root, capture_output=True,
                           text=True).stdout.splitlines()
    assert [line for line in found if not line.startswith("engine/models/families/")
            and not re.match(r".*\.pyc", line)] == []


def test_supported_family_lists_come_from_the_registry():
    from engine.models.families import folder_families, gguf_architectures
    from app.shell.menus import COMMANDS, supported_families

    tips = {command.id: supported_families(command.tip) for command in COMMANDS}
    assert folder_families() in tips["file.open_folder"] and "gemma3" in tips["file.open_folder"]
    assert gguf_architectures() in tips["file.open_model"]
    import argparse

    from cli.options import add_window_options

    parser = argparse.ArgumentParser()
    add_window_options(parser)
    words = " ".join(parser.format_help().split())  # argparse wraps the help
    assert folder_families() in words


def test_the_default_budget_follows_the_machine(monkeypatch):
    monkeypatch.delenv(hf_folder.WEIGHTS_BUDGET_ENV, raising=False)
    monkeypatch.setattr(memory, "available_memory", lambda: 32 * 1024**3)
    assert memory.weights_budget() == 16 * 1024**3  # a 3 B model (12 GB as float32) opens on a 32 GB laptop
    monkeypatch.setattr(memory, "available_memory", lambda: 2 * 1024**3)
    assert memory.weights_budget() == memory.DEFAULT_WEIGHTS_BUDGET
    monkeypatch.setenv(hf_folder.WEIGHTS_BUDGET_ENV, "1.5")
    assert memory.weights_budget() == int(1.5 * 1024**3)
    assert memory.available_memory() == 2 * 1024**3  # patched; the real one reads /proc/meminfo:


def test_available_memory_reads_the_system():
    available = memory.available_memory()
    assert 0 < available < 1 << 50


# ---------------------------------------------------------------- GGUF files of the newer families


def rewrite_gguf(source: Path, target: Path, changes: dict) -> Path:
    """A copy of a GGUF file with some metadata keys changed (the tensors as they are)."""
    import gguf

    reader = gguf.GGUFReader(str(source))
    writer = gguf.GGUFWriter(str(target), str(reader.fields["general.architecture"].contents()))
    for key, field in reader.fields.items():
        if key.startswith("GGUF.") or key == "general.architecture":
            continue
        value = changes.pop(key)[0] if key in changes else field.contents()
        writer.add_key_value(key, value, field.types[0], field.types[1] if len(field.types) > 1 else None)
    for key, (value, kind) in changes.items():
        writer.add_key_value(key, value, kind)
    for tensor in reader.tensors:
        writer.add_tensor(tensor.name, np.array(tensor.data), raw_dtype=tensor.tensor_type)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return target


def test_gpt2_gguf_with_grouped_heads_says_what_is_wrong(tmp_path, capsys):
    import gguf

    path = rewrite_gguf(FIXTURES / "gpt2.gguf", tmp_path / "g.gguf",
                        {"gpt2.attention.head_count_kv": (2, gguf.GGUFValueType.UINT32)})
    assert cli.main(["main.py", "export", "--model", str(path), "--text", "a", "--out", str(tmp_path / "o.npz")]) == 2
    line = capsys.readouterr().err.strip()
    assert "head_count_kv is 2" in line and "head_count is 4" in line and "divide" not in line, line


def test_phi3_gguf_whose_fused_rows_do_not_split_is_refused_before_reading(tmp_path, capsys):
    import gguf

    path = rewrite_gguf(FIXTURES / "phi3.gguf", tmp_path / "p.gguf",
                        {"phi3.attention.head_count_kv": (4, gguf.GGUFValueType.UINT32)})
    assert cli.main(["main.py", "export", "--model", str(path), "--text", "a", "--out", str(tmp_path / "o.npz")]) == 2
    line = capsys.readouterr().err.strip()
    assert "attn_qkv" in line and "64" in line and "96" in line, line


def test_gguf_block_features_read_from_the_metadata(tmp_path):
    import gguf

    from engine.models.decoder import load_gguf

    gemma2 = load_gguf(FIXTURES / "gemma2.gguf").config
    assert (gemma2.layer_windows, gemma2.attn_softcap, gemma2.final_softcap, gemma2.embed_scale) == ((4, 0), 2.0, 3.0,
                                                                                                     True)
    gemma3 = load_gguf(FIXTURES / "gemma3.gguf").config
    assert (gemma3.layer_windows, gemma3.local_rope_theta, gemma3.qk_norm) == ((4, 4), 10000.0, True)
    every_other = rewrite_gguf(FIXTURES / "gemma3.gguf", tmp_path / "g3.gguf", {
        "gemma3.attention.sliding_window_pattern": (2, gguf.GGUFValueType.UINT32)})
    assert load_gguf(every_other).config.layer_windows == (4, 0)
    windowed = rewrite_gguf(FIXTURES / "phi3.gguf", tmp_path / "p.gguf",
                            {"phi3.attention.sliding_window": (5, gguf.GGUFValueType.UINT32)})
    assert load_gguf(windowed).config.layer_windows == (5, 5)
    stretched = rewrite_gguf(FIXTURES / "gemma3.gguf", tmp_path / "g3s.gguf", {
        "gemma3.rope.scaling.type": ("linear", gguf.GGUFValueType.STRING),
        "gemma3.rope.scaling.factor": (8.0, gguf.GGUFValueType.FLOAT32)})
    weights = load_gguf(stretched).weights  # the global layers' frequencies / 8, the local ones as they were
    plain = load_gguf(FIXTURES / "gemma3.gguf").weights
    np.testing.assert_allclose(weights.inverse_frequency, plain.inverse_frequency / 8)
    np.testing.assert_array_equal(weights.local_inverse_frequency, plain.local_inverse_frequency)
    yarn = rewrite_gguf(FIXTURES / "llama.gguf", tmp_path / "y.gguf", {
        "llama.rope.scaling.type": ("yarn", gguf.GGUFValueType.STRING)})
    with pytest.raises(EngineError, match="RoPE scaling 'yarn'"):
        load_gguf(yarn)
    assert load_gguf(FIXTURES / "phi3.gguf").config.layer_windows == ()


def test_the_window_view_hatches_the_sliding_window_like_the_causal_mask():
    """The layer view the heatmap draws: its mask (and −∞ scaled cells, which the heatmap hatches) covers
    the keys beyond the window on a windowed layer, only the future on a global one."""
    from engine.models.block_features import window_mask

    model = load_folder(FIXTURES / "gemma2")
    trace = model.run(str(reference("gemma2")["text"]))
    local, glob = model.layer_view(trace, 0), model.layer_view(trace, 1)
    assert np.array_equal(local.mask, window_mask(trace.n, trace.n, 4)) and local.mask[-1, 0]
    assert np.array_equal(np.isneginf(local.scaled[0]), local.mask)
    assert np.array_equal(glob.mask, np.triu(np.ones((trace.n, trace.n), bool), 1))


def test_local_models_list_gives_the_config_refusal_as_the_reason(tmp_path):
    """A folder whose config.json the block cannot compute is listed with that reason, not as openable."""
    from engine.models.local_models import describe

    folder = copy_family(tmp_path, "mistral")
    assert describe(folder, "folder", "added").problem == ""
    edit_config(folder, sliding_window=0)
    listed = describe(folder, "folder", "added")
    assert "sliding_window" in listed.problem and listed.family == "mistral", listed


def test_a_gguf_file_larger_than_4_gib_opens_when_the_budget_allows(tmp_path, monkeypatch):
    """The file-size cap follows the weights budget (a 3 B model's F16 GGUF is 6 GB): with a budget of 8 GiB
    a 5 GiB file is read (here refused for what it holds, not for its size)."""
    from engine.models.gguf_file import open_reader

    path = tmp_path / "big.gguf"
    with open(path, "wb") as file:
        file.truncate(5 * 1024**3)  # sparse: no disk used
    monkeypatch.setenv(hf_folder.WEIGHTS_BUDGET_ENV, "4")
    with pytest.raises(EngineError, match="larger than any model"):
        open_reader(path)
    monkeypatch.setenv(hf_folder.WEIGHTS_BUDGET_ENV, "8")
    with pytest.raises(EngineError, match="not a GGUF model file"):
        open_reader(path)


# config.json of released models (the keys that shape the computation, as published), each accepted
RELEASED = {
    "meta-llama/Llama-3.2-1B": {
        "model_type": "llama", "hidden_size": 2048, "intermediate_size": 8192, "num_hidden_layers": 16,
        "num_attention_heads": 32, "num_key_value_heads": 8, "head_dim": 64, "max_position_embeddings": 131072,
        "rms_norm_eps": 1e-05, "vocab_size": 128256, "hidden_act": "silu", "attention_bias": False, "mlp_bias": False,
        "pretraining_tp": 1, "rope_theta": 500000.0, "tie_word_embeddings": True,
        "rope_scaling": {"factor": 32.0, "high_freq_factor": 4.0, "low_freq_factor": 1.0,
                         "original_max_position_embeddings": 8192, "rope_type": "llama3"}},
    "mistralai/Mistral-7B-v0.1": {
        "model_type": "mistral", "hidden_size": 4096, "intermediate_size": 14336, "num_hidden_layers": 32,
        "num_attention_heads": 32, "num_key_value_heads": 8, "max_position_embeddings": 32768, "rms_norm_eps": 1e-05,
        "rope_theta": 10000.0, "sliding_window": 4096, "vocab_size": 32000, "hidden_act": "silu",
        "tie_word_embeddings": False},
    "Qwen/Qwen2.5-0.5B": {
        "model_type": "qwen2", "hidden_size": 896, "intermediate_size": 4864, "num_hidden_layers": 24,
        "num_attention_heads": 14, "num_key_value_heads": 2, "max_position_embeddings": 32768,
        "max_window_layers": 24, "rms_norm_eps": 1e-06, "rope_theta": 1000000.0, "sliding_window": 32768,
        "use_sliding_window": False, "tie_word_embeddings": True, "vocab_size": 151936, "hidden_act": "silu"},
    "microsoft/Phi-3-mini-4k-instruct": {
        "model_type": "phi3", "hidden_size": 3072, "intermediate_size": 8192, "num_hidden_layers": 32,
        "num_attention_heads": 32, "num_key_value_heads": 32, "max_position_embeddings": 4096,
        "original_max_position_embeddings": 4096, "rms_norm_eps": 1e-05, "rope_scaling": None, "rope_theta": 10000.0,
        "sliding_window": 2047, "vocab_size": 32064, "hidden_act": "silu", "tie_word_embeddings": False},
    "google/gemma-2-2b": {
        "model_type": "gemma2", "hidden_size": 2304, "intermediate_size": 9216, "num_hidden_layers": 26,
        "num_attention_heads": 8, "num_key_value_heads": 4, "head_dim": 256, "max_position_embeddings": 8192,
        "hidden_act": "gelu_pytorch_tanh", "hidden_activation": "gelu_pytorch_tanh", "query_pre_attn_scalar": 256,
        "sliding_window": 4096, "final_logit_softcapping": 30.0, "attn_logit_softcapping": 50.0,
        "rms_norm_eps": 1e-06, "rope_theta": 10000.0, "attention_bias": False, "vocab_size": 256000,
        "cache_implementation": "hybrid"},
    "google/gemma-3-1b-pt": {
        "model_type": "gemma3_text", "hidden_size": 1152, "intermediate_size": 6912, "num_hidden_layers": 26,
        "num_attention_heads": 4, "num_key_value_heads": 1, "head_dim": 256, "max_position_embeddings": 32768,
        "hidden_activation": "gelu_pytorch_tanh", "query_pre_attn_scalar": 256, "sliding_window": 512,
        "sliding_window_pattern": 6, "rope_local_base_freq": 10000, "rope_theta": 1000000, "rope_scaling": None,
        "final_logit_softcapping": None, "attn_logit_softcapping": None, "rms_norm_eps": 1e-06, "vocab_size": 262144},
    "allenai/OLMo-2-0425-1B": {
        "model_type": "olmo2", "hidden_size": 2048, "intermediate_size": 8192, "num_hidden_layers": 16,
        "num_attention_heads": 16, "num_key_value_heads": 16, "max_position_embeddings": 4096,
        "rms_norm_eps": 1e-06, "rope_theta": 500000, "rope_scaling": None, "attention_bias": False,
        "hidden_act": "silu", "vocab_size": 100352, "tie_word_embeddings": False},
}


@pytest.mark.parametrize("name", list(RELEASED))
def test_released_configs_are_read_not_refused(tmp_path, name):
    """The refusals must not catch what released models publish: each config maps onto the block."""
    from engine.models.families import family as family_module

    config = RELEASED[name]
    family = hf_folder.family_of(config, tmp_path)
    module = family_module(family)
    info = hf_folder.FolderInfo(path=tmp_path, family=family, kind=module.KIND, model_type=config["model_type"],
                                config=config, headers=(), float32_bytes=0, **module.sizes(config, tmp_path))
    block = module.config(info)
    expected = {"meta-llama/Llama-3.2-1B": lambda b: b.rope_scaling[0] == "llama3" and b.num_kv_heads == 8,
                "mistralai/Mistral-7B-v0.1": lambda b: b.layer_windows == (4096,) * 32,
                "Qwen/Qwen2.5-0.5B": lambda b: b.layer_windows == () and b.head_dim == 64,
                "microsoft/Phi-3-mini-4k-instruct": lambda b: b.layer_windows == (2047,) * 32,
                "google/gemma-2-2b": lambda b: (b.layer_windows[:2], b.attn_softcap, b.query_scale) == ((4096, 0), 50.0,
                                                                                                        256.0),
                "google/gemma-3-1b-pt": lambda b: (b.layer_windows[:6], b.local_rope_theta) == ((512,) * 5 + (0,),
                                                                                                10000.0),
                "allenai/OLMo-2-0425-1B": lambda b: not b.pre_norms and b.qk_norm_whole}
    assert expected[name](block), block
