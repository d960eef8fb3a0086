"""Tiny random GGUF files (llama and qwen2) against a float64 reference written here.

The files are written with gguf's own GGUFWriter the way llama.cpp's converter writes them: for
``llama`` the rows of W_Q and W_K are permuted into llama.cpp's RoPE-pair order, for ``qwen2``
they stay in the Hugging Face layout and Q, K, V carry biases. The reference below runs the
Hugging Face formulation (un-permuted weights, rotate_half RoPE, explicit repeat of key/value
heads) in float64 with plain loops over heads and positions: nothing shared with engine/llama.py.
transformers was not used for these: the test must run without torch, and a reference in the
test keeps the tiny files' exact weights in one place.
"""
from __future__ import annotations

import math

import numpy as np
import pytest

gguf = pytest.importorskip("gguf")
pytest.importorskip("tokenizers")

from engine.attention import attend, causal_mask  # noqa: E402
from engine.errors import EngineError  # noqa: E402
from engine.smollm2 import load_gguf  # noqa: E402

D, HEADS, KV_HEADS, D_FF, LAYERS = 32, 4, 2, 48, 2
HEAD_DIM = D // HEADS
THETA, EPS = 10000.0, 1e-5
MERGES = ["Ġ t", "h e", "Ġt he", "Ġ c", "a t", "Ġc at"]


def _byte_tokens() -> list[str]:
    from engine.bpe import byte_alphabet

    by_byte = {byte: ch for ch, byte in byte_alphabet().items()}
    return [by_byte[b] for b in range(256)]


def _vocab() -> tuple[list[str], list[int]]:
    tokens = _byte_tokens() + ["Ġt", "he", "Ġthe", "Ġc", "at", "Ġcat", "<|end|>"]
    types = [1] * (len(tokens) - 1) + [3]
    return tokens, types


def _permute(weights: np.ndarray, n_head: int) -> np.ndarray:
    """llama.cpp convert_hf_to_gguf.py's LlamaModel.permute."""
    return (weights.reshape(n_head, 2, weights.shape[0] // n_head // 2, *weights.shape[1:])
            .swapaxes(1, 2).reshape(weights.shape))


def _hf_weights(seed: int, vocab: int, biases: bool) -> dict:
    rng = np.random.default_rng(seed)
    f = lambda *shape, s=0.3: (rng.standard_normal(shape) * s).astype(np.float32)  # noqa: E731
    w = {"embed": f(vocab, D, s=1.0), "norm": 1.0 + f(D, s=0.1), "layers": []}
    for _ in range(LAYERS):
        layer = {"q": f(HEADS * HEAD_DIM, D), "k": f(KV_HEADS * HEAD_DIM, D), "v": f(KV_HEADS * HEAD_DIM, D),
                 "o": f(D, HEADS * HEAD_DIM), "gate": f(D_FF, D), "up": f(D_FF, D), "down": f(D, D_FF),
                 "attn_norm": 1.0 + f(D, s=0.1), "ffn_norm": 1.0 + f(D, s=0.1)}
        if biases:
            layer.update(qb=f(HEADS * HEAD_DIM), kb=f(KV_HEADS * HEAD_DIM), vb=f(KV_HEADS * HEAD_DIM))
        w["layers"].append(layer)
    return w


def write_tiny_gguf(path, architecture: str, seed: int = 0, *, tokenizer_model: str = "gpt2") -> dict:
    tokens, types = _vocab()
    w = _hf_weights(seed, len(tokens), biases=architecture == "qwen2")
    writer = gguf.GGUFWriter(str(path), architecture)
    writer.add_block_count(LAYERS)
    writer.add_context_length(64)
    writer.add_embedding_length(D)
    writer.add_feed_forward_length(D_FF)
    writer.add_head_count(HEADS)
    writer.add_head_count_kv(KV_HEADS)
    writer.add_rope_freq_base(THETA)
    writer.add_layer_norm_rms_eps(EPS)
    writer.add_tokenizer_model(tokenizer_model)
    writer.add_tokenizer_pre("default")
    writer.add_token_list(tokens)
    writer.add_token_types(types)
    writer.add_token_merges(MERGES)
    writer.add_eos_token_id(len(tokens) - 1)
    writer.add_add_bos_token(False)
    writer.add_tensor("token_embd.weight", w["embed"])
    writer.add_tensor("output_norm.weight", w["norm"])
    for i, layer in enumerate(w["layers"]):
        p = f"blk.{i}."
        q, k = layer["q"], layer["k"]
        if architecture == "llama":  # as llama.cpp's converter writes them
            q, k = _permute(q, HEADS), _permute(k, KV_HEADS)
        for name, value in (("attn_q", q), ("attn_k", k), ("attn_v", layer["v"]), ("attn_output", layer["o"]),
                            ("ffn_gate", layer["gate"]), ("ffn_up", layer["up"]), ("ffn_down", layer["down"]),
                            ("attn_norm", layer["attn_norm"]), ("ffn_norm", layer["ffn_norm"])):
            writer.add_tensor(p + name + ".weight", np.ascontiguousarray(value))
        if "qb" in layer:
            for name, key in (("attn_q", "qb"), ("attn_k", "kb"), ("attn_v", "vb")):
                writer.add_tensor(p + name + ".bias", layer[key])
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return w


def reference_forward(w: dict, ids: list[int]):
    """float64, Hugging Face LlamaModel formulation, loops over heads and query rows."""
    n = len(ids)
    h = w["embed"].astype(np.float64)[ids]  # (n, D)
    hidden, attentions = [h.copy()], []

    def norm(x, g):
        return x / np.sqrt((x * x).mean(-1, keepdims=True) + EPS) * g

    inv = THETA ** (-np.arange(0, HEAD_DIM, 2) / HEAD_DIM)
    angles = np.arange(n)[:, None] * inv[None, :]
    cos = np.concatenate([np.cos(angles)] * 2, -1)  # (n, HEAD_DIM) as transformers' emb = cat(freqs, freqs)
    sin = np.concatenate([np.sin(angles)] * 2, -1)

    def rotate_half(x):
        return np.concatenate([-x[..., HEAD_DIM // 2:], x[..., : HEAD_DIM // 2]], -1)

    for layer in w["layers"]:
        x = norm(h, layer["attn_norm"])
        q = x @ layer["q"].T.astype(np.float64) + layer.get("qb", 0.0)
        k = x @ layer["k"].T.astype(np.float64) + layer.get("kb", 0.0)
        v = x @ layer["v"].T.astype(np.float64) + layer.get("vb", 0.0)
        per_layer = np.zeros((HEADS, n, n))
        concat = np.zeros((n, HEADS * HEAD_DIM))
        for head in range(HEADS):
            kv = head // (HEADS // KV_HEADS)
            qh = q[:, head * HEAD_DIM:(head + 1) * HEAD_DIM]
            kh = k[:, kv * HEAD_DIM:(kv + 1) * HEAD_DIM]
            vh = v[:, kv * HEAD_DIM:(kv + 1) * HEAD_DIM]
            qh = qh * cos + rotate_half(qh) * sin
            kh = kh * cos + rotate_half(kh) * sin
            for i in range(n):
                scores = np.array([qh[i] @ kh[j] / math.sqrt(HEAD_DIM) for j in range(i + 1)])
                e = np.exp(scores - scores.max())
                per_layer[head, i, : i + 1] = e / e.sum()
                concat[i, head * HEAD_DIM:(head + 1) * HEAD_DIM] = per_layer[head, i, : i + 1] @ vh[: i + 1]
        h = h + concat @ layer["o"].T
        x = norm(h, layer["ffn_norm"])
        gate, up = x @ layer["gate"].T, x @ layer["up"].T
        h = h + (gate / (1 + np.exp(-gate)) * up) @ layer["down"].T
        hidden.append(h.copy())
        attentions.append(per_layer)
    hidden[-1] = norm(h, w["norm"])
    logits = hidden[-1][-1] @ w["embed"].T.astype(np.float64)
    return np.array(attentions), np.array(hidden), logits


@pytest.mark.parametrize("architecture", ["llama", "qwen2"])
def test_tiny_gguf_matches_float64_reference(tmp_path, architecture):
    path = tmp_path / f"tiny-{architecture}.gguf"
    w = write_tiny_gguf(path, architecture, seed=3)
    model = load_gguf(path)
    assert model.config.architecture == architecture
    assert model.config.rope_style == ("adjacent" if architecture == "llama" else "half")
    text = " the cat sat on the mat"
    trace = model.run(text, use_cache=False)
    assert trace.token_texts[:2] == [" the", " cat"]  # the merges apply
    attentions, hidden, logits = reference_forward(w, trace.input_ids.tolist())
    np.testing.assert_allclose(trace.attentions, attentions, atol=1e-5)
    np.testing.assert_allclose(trace.hidden_states, hidden, atol=2e-5 * np.abs(hidden).max())
    np.testing.assert_allclose(trace.next_token_logits, logits, atol=2e-5 * np.abs(logits).max())
    # the KV cache: one more word computes only its positions, and gives the same arrays
    longer = model.run(text + " the", use_cache=True, previous=trace)
    assert longer.reused_positions == trace.n
    full = model.run(text + " the", use_cache=False)
    for name in ("attentions", "hidden_states", "q", "k", "v", "head_outputs", "next_token_logits"):
        np.testing.assert_allclose(getattr(longer, name), getattr(full, name), atol=1e-5, err_msg=name)


def test_refuses_other_architecture_naming_it(tmp_path):
    path = tmp_path / "gpt2.gguf"
    write_tiny_gguf(path, "gpt2")
    with pytest.raises(EngineError, match="'gpt2'") as error:
        load_gguf(path)
    assert error.value.values["architecture"] == "gpt2"


def test_refuses_sentencepiece_tokenizer_and_bad_files(tmp_path):
    path = tmp_path / "sp.gguf"
    write_tiny_gguf(path, "llama", tokenizer_model="llama")
    with pytest.raises(EngineError, match="'llama'"):
        load_gguf(path)
    junk = tmp_path / "junk.gguf"
    junk.write_bytes(b"not a gguf file at all" * 10)
    with pytest.raises(EngineError, match="not a readable GGUF"):
        load_gguf(junk)
    with pytest.raises(EngineError, match="no model file"):
        load_gguf(tmp_path / "missing.gguf")
    good = tmp_path / "good.gguf"
    write_tiny_gguf(good, "llama")
    with pytest.raises(EngineError, match="damaged"):
        load_gguf(good, expected_sha256="0" * 64)


def test_refuses_weights_over_the_limit(tmp_path):
    from engine.gguf_file import read_gguf

    path = tmp_path / "tiny.gguf"
    write_tiny_gguf(path, "llama")
    with pytest.raises(EngineError, match="more than the"):
        read_gguf(path, max_weight_bytes=1000)


def test_attend_grouped_query_and_cached_rows_match_a_loop():
    rng = np.random.default_rng(1)
    q = rng.standard_normal((6, 3, 4)).astype(np.float32)  # 6 query heads, the last 3 positions of 5
    k = rng.standard_normal((2, 5, 4)).astype(np.float32)  # 2 key/value heads
    v = rng.standard_normal((2, 5, 4)).astype(np.float32)
    mask = causal_mask(3, 5)
    assert mask.tolist() == [[j > i + 2 for j in range(5)] for i in range(3)]
    stages = attend(q, k, v, divisor=2.0, mask=mask)
    for head in range(6):
        for i in range(3):
            kv = head // 3
            visible = i + 2 + 1
            scores = np.array([float(q[head, i] @ k[kv, j]) / 2.0 for j in range(visible)])
            weights = np.exp(scores - scores.max())
            weights /= weights.sum()
            np.testing.assert_allclose(stages["weights"][head, i, :visible], weights, atol=1e-6)
            assert np.all(stages["weights"][head, i, visible:] == 0)
            np.testing.assert_allclose(stages["head_outputs"][head, i], weights @ v[kv, :visible], atol=1e-5)


def test_cache_from_another_model_is_never_reused(tmp_path):
    write_tiny_gguf(tmp_path / "a.gguf", "llama", seed=1)
    write_tiny_gguf(tmp_path / "b.gguf", "qwen2", seed=2)
    a, b = load_gguf(tmp_path / "a.gguf"), load_gguf(tmp_path / "b.gguf")
    other = a.run(" the cat", use_cache=False)
    trace = b.run(" the cat sat", previous=other)
    assert trace.reused_positions == 0
    np.testing.assert_array_equal(trace.attentions, b.run(" the cat sat", use_cache=False).attentions)
