"""Every hook point holds the same array whatever file the weights came from: a GGUF file (llama.cpp's
layout, W_Q and W_K rows permuted for ``llama``) and a Hugging Face folder of the same weights.

Fast: the tiny models of tests/fixtures/families (scripts/make_family_fixtures.py wrote each decoder
as a folder with transformers and as a GGUF the way llama.cpp's converter lays it out: the same
weights, the same vocabulary). Slow: SmolLM2's own GGUF against a folder this test writes from the
file's dequantized tensors as they lie in the file (the engine's reader without its row reordering;
ggml's own Python dequantizer takes 16 s for them), under transformers' names, W_Q and W_K rows put
back in transformers' order here (the inverse of convert_hf_to_gguf.py's ``LlamaModel.permute``,
written out below), so that the folder is what a Hugging Face download of these weights holds.
"""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from tests import FIXTURES
from engine.models import load_model, register_path

FAMILIES = FIXTURES / "families"
TOL = 1e-5


def assert_same_cache(from_gguf: dict, from_folder: dict) -> None:
    """The same hook names, and each array within TOL of the folder's (relative to its largest magnitude)."""
    assert set(from_gguf) == set(from_folder)
    for name, expected in from_folder.items():
        actual = from_gguf[name]
        assert actual.shape == expected.shape, name
        expected = expected.astype(np.float64)
        scale = max(1.0, float(np.abs(expected).max()))
        error = float(np.abs(actual.astype(np.float64) - expected).max())
        assert error <= TOL * scale, f"{name}: off by {error:.3g} (allowed {TOL * scale:.3g})"


def run_both(from_file, folder: Path, text: str):
    """(gguf cache, folder cache) of every hook point for ``text``, on the same token ids."""
    from_folder = load_model(register_path(folder))
    tokenized = from_file.tokenize(text)
    assert np.array_equal(from_folder.tokenize(text).input_ids, tokenized.input_ids)
    _, file_cache = from_file.run_with_cache(tokenized, use_cache=False)
    _, folder_cache = from_folder.run_with_cache(tokenized, use_cache=False)
    return file_cache, folder_cache


@pytest.mark.parametrize("family", ["llama", "qwen2", "qwen3", "gpt2"])
def test_tiny_gguf_and_folder_give_the_same_hook_values(family):
    for package in ("gguf", "safetensors", "tokenizers"):
        pytest.importorskip(package)
    text = str(np.load(FAMILIES / f"{family}_reference.npz")["text"])
    file_cache, folder_cache = run_both(load_model(register_path(FAMILIES / f"{family}.gguf")), FAMILIES / family, text)
    assert_same_cache(file_cache, folder_cache)


def undo_llama_cpp_permutation(rows: np.ndarray, heads: int) -> np.ndarray:
    """transformers' row order of a W_Q / W_K that llama.cpp's converter permuted: its
    ``permute`` is reshape(heads, 2, d_head/2, in).swapaxes(1, 2); this is the inverse."""
    d_head = rows.shape[0] // heads
    return rows.reshape(heads, d_head // 2, 2, -1).swapaxes(1, 2).reshape(rows.shape)


def test_the_inverse_permutation_inverts_llama_cpp_s():
    weights = np.arange(2 * 8 * 3, dtype=np.float32).reshape(16, 3)
    permuted = weights.reshape(2, 2, 4, 3).swapaxes(1, 2).reshape(16, 3)  # convert_hf_to_gguf.py's permute
    assert not np.array_equal(permuted, weights)
    np.testing.assert_array_equal(undo_llama_cpp_permutation(permuted, 2), weights)


def test_the_reader_s_reordering_is_that_inverse_for_w_q_w_k_and_their_biases_only():
    from engine.core.errors import EngineError
    from engine.models.gguf_file import transformers_rope_rows

    rng = np.random.default_rng(0)
    q, k, q_bias = rng.standard_normal((3 * 8, 5)), rng.standard_normal((1 * 8, 5)), rng.standard_normal(3 * 8)
    permute = lambda w, heads: w.reshape(heads, 2, w.shape[0] // heads // 2, *w.shape[1:]).swapaxes(1, 2).reshape(w.shape)  # noqa: E731
    for name, hf, heads in (("blk.0.attn_q.weight", q, 3), ("blk.0.attn_k.weight", k, 1), ("blk.2.attn_q.bias", q_bias, 3)):
        np.testing.assert_array_equal(transformers_rope_rows(name, permute(hf, heads), heads=3, kv_heads=1), hf)
    v = rng.standard_normal((8, 5))
    assert transformers_rope_rows("blk.0.attn_v.weight", v, heads=3, kv_heads=1) is v
    with pytest.raises(EngineError, match="not 3 heads of an even size"):
        transformers_rope_rows("blk.0.attn_q.weight", rng.standard_normal((9, 5)), heads=3, kv_heads=1)


def write_smollm2_folder(gguf_path: Path, folder: Path, tokenizer_json: str) -> None:
    """SmolLM2's GGUF as a Hugging Face folder: config.json, model.safetensors (float32, transformers'
    names and row order), tokenizer.json."""
    from safetensors.numpy import save_file

    from engine.models.gguf_file import GGUFTensors, open_reader

    reader = open_reader(gguf_path)

    def field(key: str):
        return reader.fields[key].contents()

    layers, heads = int(field("llama.block_count")), int(field("llama.attention.head_count"))
    kv_heads = int(field("llama.attention.head_count_kv"))
    names = {"token_embd.weight": "model.embed_tokens.weight", "output_norm.weight": "model.norm.weight"}
    parts = {"attn_q": "self_attn.q_proj", "attn_k": "self_attn.k_proj", "attn_v": "self_attn.v_proj",
             "attn_output": "self_attn.o_proj", "ffn_gate": "mlp.gate_proj", "ffn_up": "mlp.up_proj",
             "ffn_down": "mlp.down_proj", "attn_norm": "input_layernorm", "ffn_norm": "post_attention_layernorm"}
    for i in range(layers):
        for short, long in parts.items():
            names[f"blk.{i}.{short}.weight"] = f"model.layers.{i}.{long}.weight"
    tensors = {}
    for name, values in GGUFTensors(reader).items():  # (out, in) float32, in the file's row order
        if ".attn_q." in name or ".attn_k." in name:
            values = undo_llama_cpp_permutation(values, heads if ".attn_q." in name else kv_heads)
        tensors[names[name]] = np.ascontiguousarray(values)
    reader.close()
    d = int(field("llama.embedding_length"))
    config = {"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": d,
              "intermediate_size": int(field("llama.feed_forward_length")), "num_hidden_layers": layers,
              "num_attention_heads": heads, "num_key_value_heads": kv_heads, "head_dim": d // heads,
              "rms_norm_eps": float(field("llama.attention.layer_norm_rms_epsilon")),
              "rope_theta": float(field("llama.rope.freq_base")), "vocab_size": tensors["model.embed_tokens.weight"].shape[0],
              "max_position_embeddings": int(field("llama.context_length")), "tie_word_embeddings": True,
              "hidden_act": "silu", "torch_dtype": "float32"}
    folder.mkdir()
    save_file(tensors, str(folder / "model.safetensors"))
    (folder / "config.json").write_text(json.dumps(config), encoding="utf-8")
    (folder / "tokenizer.json").write_text(tokenizer_json, encoding="utf-8")


@pytest.mark.slow
def test_smollm2_gguf_and_its_weights_as_a_folder_give_the_same_hook_values(tmp_path, smollm2_model):
    pytest.importorskip("safetensors")
    folder = tmp_path / "smollm2"
    write_smollm2_folder(Path(smollm2_model.path), folder, smollm2_model.tokenizer.to_json())
    file_cache, folder_cache = run_both(smollm2_model, folder, "The capital of France is")
    assert_same_cache(file_cache, folder_cache)
