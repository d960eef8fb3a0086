"""Tiny random GGUF files (llama and qwen2) and a float64 reference forward pass for them.

Shared by tests/engine/models/test_gguf_tiny.py and scripts/make_smollm2_reference.py --tiny (which stores
transformers' outputs for the same files): no pytest, no engine imports beyond the byte alphabet.
The files are written with gguf's GGUFWriter the way llama.cpp's converter writes them: for
``llama`` the rows of W_Q and W_K are permuted into llama.cpp's RoPE-pair order, for ``qwen2``
they stay in the Hugging Face layout and Q, K, V carry biases. :func:`reference_forward` runs the
Hugging Face formulation (un-permuted weights, rotate_half RoPE, explicit repeat of key/value
heads) in float64 with plain loops over heads and positions: nothing shared with engine/models/llama.py.
"""
from __future__ import annotations

import math

import gguf
import numpy as np

TEXT = " the cat sat on the mat"
D, HEADS, KV_HEADS, D_FF, LAYERS = 32, 4, 2, 48, 2
HEAD_DIM = D // HEADS
THETA, EPS = 10000.0, 1e-5
MERGES = ["Ġ t", "h e", "Ġt he", "Ġ c", "a t", "Ġc at"]


def _byte_tokens() -> list[str]:
    from engine.text.bpe import byte_alphabet

    by_byte = {byte: ch for ch, byte in byte_alphabet().items()}
    return [by_byte[b] for b in range(256)]


DIGIT_MERGES = ["1 2", "12 3"]  # merges that join digits: only a pre-tokenizer that splits digits keeps them apart


def _vocab(digit_merges: bool = False) -> tuple[list[str], list[int]]:
    tokens = _byte_tokens() + ["Ġt", "he", "Ġthe", "Ġc", "at", "Ġcat"] + (["12", "123"] if digit_merges else []) + ["<|end|>"]
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


def write_tiny_gguf(path, architecture: str, seed: int = 0, *, tokenizer_model: str = "gpt2",
                    untied: bool = False, pre: str = "default", digit_merges: bool = False) -> dict:
    """``untied``: the file carries its own ``output.weight`` (an output head that is not the
    embedding table, as most GGUF models but SmolLM2 have); the reference then predicts through it.
    ``pre``: tokenizer.ggml.pre; ``digit_merges``: the vocabulary also merges "1 2" and "12 3"."""
    tokens, types = _vocab(digit_merges)
    w = _hf_weights(seed, len(tokens), biases=architecture == "qwen2")
    if untied:
        w["output"] = (np.random.default_rng(seed + 1000).standard_normal((len(tokens), D))).astype(np.float32)
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
    writer.add_tokenizer_pre(pre)
    writer.add_token_list(tokens)
    writer.add_token_types(types)
    writer.add_token_merges(MERGES + (DIGIT_MERGES if digit_merges else []))
    writer.add_eos_token_id(len(tokens) - 1)
    writer.add_add_bos_token(False)
    writer.add_tensor("token_embd.weight", w["embed"])
    writer.add_tensor("output_norm.weight", w["norm"])
    if untied:
        writer.add_tensor("output.weight", w["output"])  # (vocab, D) like token_embd.weight
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
    logits = hidden[-1][-1] @ w.get("output", w["embed"]).T.astype(np.float64)  # the untied head when the file has one
    return np.array(attentions), np.array(hidden), logits
