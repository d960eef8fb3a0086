"""Hook points (engine/core/hooks.py) in the three forwards: the toy's compute, the BERT encoder and the
llama-family decoder. Each hooked number is checked against a float64 loop written here (nothing
shared with the engine's forwards).

Tiny models keep it fast: a random 2-layer BERT built here, the tiny llama / qwen2 GGUF files of
tests/tiny_gguf.py, and the toy engine.
"""
from __future__ import annotations

import math

import numpy as np
import pytest

from engine import AttentionConfig
from engine.models.bert import BertConfig, hook_names as bert_hook_names, prepare_weights
from engine.analysis.encoder_ablation import ablated_hidden_states
from engine.models.encoder import Encoder
from engine.core.errors import EngineError
from engine.core.hooks import hook_run
from engine.models.contract import Tokenized
from engine.models.toy import ToyModel
from engine.text.tokenize import Token

# ---------------------------------------------------------------- a tiny random BERT

BERT = BertConfig(vocab_size=40, hidden_size=16, num_layers=2, num_heads=4, intermediate_size=24, max_positions=32,
                  type_vocab_size=2, layer_norm_eps=1e-12)


def _bert_tensors(seed: int = 0) -> dict:
    rng = np.random.default_rng(seed)
    f = lambda *shape, s=0.4: (rng.standard_normal(shape) * s).astype(np.float32)  # noqa: E731
    d, d_ff = BERT.hidden_size, BERT.intermediate_size
    t = {"embeddings.word_embeddings.weight": f(BERT.vocab_size, d, s=1.0),
         "embeddings.position_embeddings.weight": f(BERT.max_positions, d),
         "embeddings.token_type_embeddings.weight": f(2, d),
         "embeddings.LayerNorm.weight": 1 + f(d, s=0.1), "embeddings.LayerNorm.bias": f(d, s=0.1)}
    for i in range(BERT.num_layers):
        p = f"encoder.layer.{i}."
        for name in ("query", "key", "value"):
            t[f"{p}attention.self.{name}.weight"] = f(d, d)
            t[f"{p}attention.self.{name}.bias"] = f(d, s=0.1)
        t.update({p + "attention.output.dense.weight": f(d, d), p + "attention.output.dense.bias": f(d, s=0.1),
                  p + "attention.output.LayerNorm.weight": 1 + f(d, s=0.1),
                  p + "attention.output.LayerNorm.bias": f(d, s=0.1),
                  p + "intermediate.dense.weight": f(d_ff, d), p + "intermediate.dense.bias": f(d_ff, s=0.1),
                  p + "output.dense.weight": f(d, d_ff), p + "output.dense.bias": f(d, s=0.1),
                  p + "output.LayerNorm.weight": 1 + f(d, s=0.1), p + "output.LayerNorm.bias": f(d, s=0.1)})
    return t


class TinyBert(Encoder):
    """The random BERT above, its "tokenizer" one id per character (a → 1, b → 2, …)."""

    def __init__(self) -> None:
        self.config = BERT
        self.tensors = _bert_tensors()
        self.weights = prepare_weights(self.tensors, BERT)

    def tokenize(self, text: str) -> Tokenized:
        ids = np.array([0] + [1 + (ord(ch) % 38) for ch in text] + [39], np.int64)
        tokens = (Token("[CLS]", 0, 0), *(Token(ch, i, i + 1) for i, ch in enumerate(text)),
                  Token("[SEP]", len(text), len(text)))
        return Tokenized(text, tokens, ids, np.zeros(len(ids), np.int64))


def _ln(x, g, b, eps=1e-12):
    mu = x.mean(-1, keepdims=True)
    var = ((x - mu) ** 2).mean(-1, keepdims=True)
    return (x - mu) / np.sqrt(var + eps) * g + b


def _gelu(x):
    return x * 0.5 * (1 + np.vectorize(math.erf)(x / math.sqrt(2)))


def bert_reference(t: dict, ids, z_edit=None, attn_out_edit=None):
    """float64 BERT (transformers' BertModel), loops over heads and rows; ``z_edit(layer, z)``
    edits z (n, heads, d_head) before W_O, ``attn_out_edit(layer, a)`` the attention output."""
    g = lambda name: t[name].astype(np.float64)  # noqa: E731
    n, d, heads = len(ids), BERT.hidden_size, BERT.num_heads
    d_k = d // heads
    h = g("embeddings.word_embeddings.weight")[ids] + g("embeddings.token_type_embeddings.weight")[0] \
        + g("embeddings.position_embeddings.weight")[:n]
    h = _ln(h, g("embeddings.LayerNorm.weight"), g("embeddings.LayerNorm.bias"))
    hidden, patterns = [h], []
    for l in range(BERT.num_layers):
        p = f"encoder.layer.{l}."
        q, k, v = (h @ g(f"{p}attention.self.{x}.weight").T + g(f"{p}attention.self.{x}.bias")
                   for x in ("query", "key", "value"))
        z = np.zeros((n, heads, d_k))
        pattern = np.zeros((heads, n, n))
        for head in range(heads):
            cols = slice(head * d_k, (head + 1) * d_k)
            for i in range(n):
                s = np.array([q[i, cols] @ k[j, cols] for j in range(n)]) / math.sqrt(d_k)
                e = np.exp(s - s.max())
                pattern[head, i] = e / e.sum()
                z[i, head] = pattern[head, i] @ v[:, cols]
        if z_edit is not None:
            z_edit(l, z)
        a = z.reshape(n, d) @ g(p + "attention.output.dense.weight").T + g(p + "attention.output.dense.bias")
        if attn_out_edit is not None:
            a = attn_out_edit(l, a)
        mid = _ln(h + a, g(p + "attention.output.LayerNorm.weight"), g(p + "attention.output.LayerNorm.bias"))
        mlp = _gelu(mid @ g(p + "intermediate.dense.weight").T + g(p + "intermediate.dense.bias")) \
            @ g(p + "output.dense.weight").T + g(p + "output.dense.bias")
        h = _ln(mid + mlp, g(p + "output.LayerNorm.weight"), g(p + "output.LayerNorm.bias"))
        hidden.append(h)
        patterns.append(pattern)
    return np.array(hidden), np.array(patterns)


@pytest.fixture(scope="module")
def bert():
    return TinyBert()


TEXT = "the cat sat"

ENCODER_SHAPES = {
    "hook_resid_pre": "nd", "attn.hook_q": "nhk", "attn.hook_k": "nhk", "attn.hook_v": "nhk",
    "attn.hook_attn_scores": "hnn", "attn.hook_pattern": "hnn", "attn.hook_z": "nhk", "hook_attn_out": "nd",
    "hook_resid_mid": "nd", "ln1.hook_scale": "n1", "ln1.hook_normalized": "nd", "ln1.hook_out": "nd",
    "hook_mlp_out": "nd", "hook_resid_post": "nd", "ln2.hook_scale": "n1", "ln2.hook_normalized": "nd",
    "ln2.hook_out": "nd", "hook_normalized_resid_post": "nd",
}


def _shape(code: str, n: int, d: int, heads: int, d_k: int, kv: int | None = None) -> tuple:
    sizes = {"n": n, "d": d, "h": heads, "k": d_k, "v": kv if kv is not None else heads, "1": 1}
    return tuple(sizes[c] for c in code)


def normalized64(x: np.ndarray, kind: str, eps: float) -> tuple[np.ndarray, np.ndarray]:
    """(x / rms(x), rms(x)) in float64, rms over the last axis with ε inside the root; LayerNorm
    ("layer") centres x first: TransformerLens's hook_normalized and hook_scale."""
    x = np.asarray(x, dtype=np.float64)
    if kind == "layer":
        x = x - x.mean(-1, keepdims=True)
    scale = np.sqrt((x * x).mean(-1, keepdims=True) + eps)
    return x / scale, scale


def assert_norm_points(cache: dict, point: str, before: np.ndarray, kind: str, eps: float, weight, bias) -> None:
    """``{point}.hook_scale`` / ``hook_normalized`` / ``hook_out`` against the float64 norm of ``before``."""
    normalized, scale = normalized64(before, kind, eps)
    np.testing.assert_allclose(cache[f"{point}.hook_scale"], scale, rtol=1e-5)
    np.testing.assert_allclose(cache[f"{point}.hook_normalized"], normalized, rtol=1e-5, atol=1e-5)
    out = normalized * np.asarray(weight, np.float64) + (0.0 if bias is None else np.asarray(bias, np.float64))
    np.testing.assert_allclose(cache[f"{point}.hook_out"], out, rtol=1e-5, atol=1e-5 * np.abs(out).max())


def test_encoder_hook_names_shapes_and_values(bert):
    names = bert.hook_names()
    assert names == bert_hook_names(BERT)
    assert len(names) == 3 + BERT.num_layers * len(ENCODER_SHAPES)
    trace, cache = bert.run_with_cache(TEXT)
    assert set(cache) == set(names)
    n, d, heads, d_k = trace.n, BERT.hidden_size, BERT.num_heads, BERT.d_k
    for name, array in cache.items():
        assert not array.flags.writeable, name
        local = name.split(".", 2)[2] if name.startswith("blocks.") else None
        expected = (n, d) if local is None else _shape(ENCODER_SHAPES[local], n, d, heads, d_k)
        assert array.shape == expected, name
    reference_hidden, reference_patterns = bert_reference(bert.tensors, trace.input_ids)
    for l in range(BERT.num_layers):
        np.testing.assert_allclose(cache[f"blocks.{l}.attn.hook_pattern"], reference_patterns[l], atol=2e-6)
        np.testing.assert_array_equal(cache[f"blocks.{l}.attn.hook_pattern"], trace.attentions[l])
        np.testing.assert_array_equal(cache[f"blocks.{l}.attn.hook_z"], trace.layers[l].head_outputs.transpose(1, 0, 2))
        np.testing.assert_array_equal(cache[f"blocks.{l}.hook_resid_pre"], trace.hidden_states[l])
        np.testing.assert_array_equal(cache[f"blocks.{l}.hook_normalized_resid_post"], trace.hidden_states[l + 1])
        np.testing.assert_array_equal(cache[f"blocks.{l}.ln1.hook_out"], trace.layers[l].attention_norm)
        np.testing.assert_array_equal(cache[f"blocks.{l}.ln2.hook_out"], trace.hidden_states[l + 1])
        # TransformerLens's BertBlock: resid_mid before LN1, resid_post = LN1(resid_mid) + mlp_out before LN2
        np.testing.assert_allclose(cache[f"blocks.{l}.hook_resid_mid"],
                                   cache[f"blocks.{l}.hook_resid_pre"] + cache[f"blocks.{l}.hook_attn_out"], atol=1e-6)
        np.testing.assert_allclose(cache[f"blocks.{l}.hook_resid_post"],
                                   cache[f"blocks.{l}.ln1.hook_out"] + cache[f"blocks.{l}.hook_mlp_out"],
                                   atol=1e-6)
        # the norms' inside, TransformerLens's LayerNorm: (x − μ) / √(var + ε) before γ, β
        p = f"encoder.layer.{l}."
        assert_norm_points(cache, f"blocks.{l}.ln1", cache[f"blocks.{l}.hook_resid_mid"], "layer", BERT.layer_norm_eps,
                           bert.tensors[p + "attention.output.LayerNorm.weight"],
                           bert.tensors[p + "attention.output.LayerNorm.bias"])
        assert_norm_points(cache, f"blocks.{l}.ln2", cache[f"blocks.{l}.hook_resid_post"], "layer", BERT.layer_norm_eps,
                           bert.tensors[p + "output.LayerNorm.weight"], bert.tensors[p + "output.LayerNorm.bias"])
    np.testing.assert_allclose(trace.hidden_states, reference_hidden, atol=2e-5)
    # the cache's names can be chosen; the trace is the same as a plain run's
    plain = bert.run(TEXT)
    trace2, cache2 = bert.run_with_cache(TEXT, names=["blocks.1.attn.hook_pattern"])
    assert list(cache2) == ["blocks.1.attn.hook_pattern"]
    np.testing.assert_array_equal(trace2.hidden_states, plain.hidden_states)


def test_encoder_doubling_attn_out_as_a_float64_loop_predicts(bert):
    def double(a, name):
        return a * np.float32(2.0)

    trace = bert.run_with_hooks(TEXT, fwd_hooks=[("blocks.0.hook_attn_out", double)])
    predicted, _ = bert_reference(bert.tensors, trace.input_ids,
                                  attn_out_edit=lambda l, a: 2 * a if l == 0 else a)
    np.testing.assert_allclose(trace.hidden_states, predicted, atol=2e-5)
    assert np.abs(trace.hidden_states[-1] - bert.run(TEXT).hidden_states[-1]).max() > 1e-2  # it changed


def test_encoder_ablation_through_hook_z_equals_the_old_ablated_paths(bert):
    ablate = frozenset({(0, 1), (1, 3)})
    plain = bert.run(TEXT)
    ablated = bert.run(TEXT, ablate=ablate)
    assert ablated.ablate == ablate
    assert np.all(ablated.layers[0].head_outputs[1] == 0) and np.all(ablated.layers[1].head_outputs[3] == 0)
    # engine.analysis.encoder_ablation resumes at the first ablated layer (start_at_layer): the same numbers
    np.testing.assert_allclose(ablated.hidden_states, ablated_hidden_states(bert.weights, BERT, plain, ablate),
                               atol=1e-6)

    def zero(l, z):
        z[:, [h for layer, h in ablate if layer == l]] = 0.0

    predicted, _ = bert_reference(bert.tensors, plain.input_ids, z_edit=zero)
    np.testing.assert_allclose(ablated.hidden_states, predicted, atol=2e-5)
    # the same as a user's hook zeroing those heads of hook_z
    hooks = [(f"blocks.{l}.attn.hook_z", lambda z, name, h=h: z.__setitem__((slice(None), h), 0.0))
             for l, h in ablate]
    np.testing.assert_array_equal(bert.run_with_hooks(TEXT, fwd_hooks=hooks).hidden_states, ablated.hidden_states)


def test_encoder_start_and_stop_at_a_layer(bert):
    full, cache = bert.run_with_cache(TEXT)
    resumed = bert.run_with_hooks(TEXT, start_at_layer=1, resid=cache["blocks.1.hook_resid_pre"])
    np.testing.assert_allclose(resumed.hidden_states[1:], full.hidden_states[1:], atol=1e-6)
    assert np.isnan(resumed.hidden_states[0]).all() and np.isnan(resumed.attentions[0]).all()
    stopped = bert.run_with_hooks(TEXT, stop_at_layer=1)
    np.testing.assert_array_equal(stopped.hidden_states[:2], full.hidden_states[:2])
    assert np.isnan(stopped.hidden_states[2]).all()
    with pytest.raises(EngineError, match="needs the residual"):
        bert.run_with_hooks(TEXT, start_at_layer=1)
    with pytest.raises(EngineError, match=r"resid has shape \(2, 16\), expected \(13, 16\)"):
        bert.run_with_hooks(TEXT, start_at_layer=1, resid=np.zeros((2, 16), np.float32))
    with pytest.raises(EngineError, match="start_at_layer must be a layer 0 … 1"):
        bert.run_with_hooks(TEXT, start_at_layer=5, resid=cache["blocks.1.hook_resid_pre"])


def test_pattern_and_scores_hooks_recompute_what_follows(bert):
    """Replacing hook_pattern changes z as weights · v; replacing the scores changes the pattern."""
    _, cache = bert.run_with_cache(TEXT)
    n = cache["blocks.0.attn.hook_pattern"].shape[-1]
    uniform = np.full((BERT.num_heads, n, n), 1.0 / n, np.float32)
    trace = bert.run_with_hooks(TEXT, fwd_hooks=[("blocks.0.attn.hook_pattern", lambda a, name: uniform)])
    v = cache["blocks.0.attn.hook_v"].astype(np.float64)  # (n, heads, d_k)
    expected_z = np.einsum("hij,jhk->hik", uniform.astype(np.float64), v)  # (heads, n, d_k)
    np.testing.assert_allclose(trace.layers[0].head_outputs, expected_z, atol=1e-6)
    np.testing.assert_array_equal(trace.attentions[0], uniform)
    zeros = bert.run_with_hooks(TEXT, fwd_hooks=[("blocks.0.attn.hook_attn_scores", lambda a, name: np.zeros_like(a))])
    np.testing.assert_allclose(zeros.attentions[0], uniform, atol=1e-7)


# ---------------------------------------------------------------- bad input


def test_unknown_name_names_the_closest(bert):
    with pytest.raises(EngineError, match=r"no hook point 'blocks\.0\.attn\.hook_zz'.*blocks\.0\.attn\.hook_z"):
        bert.run_with_hooks(TEXT, fwd_hooks=[("blocks.0.attn.hook_zz", lambda a, name: None)])
    with pytest.raises(EngineError, match="closest: blocks.1.hook_resid_post"):
        bert.run_with_cache(TEXT, names=["blocks.1.hook_resid_pots"])


def test_a_hook_of_another_shape_or_dtype_is_named(bert):
    with pytest.raises(EngineError, match=r"blocks\.0\.hook_attn_out returned shape \(13, 15\) float32, "
                                          r"expected \(13, 16\) float32"):
        bert.run_with_hooks(TEXT, fwd_hooks=[("blocks.0.hook_attn_out", lambda a, name: a[:, :-1])])
    with pytest.raises(EngineError, match=r"returned shape \(13, 16\) float64, expected \(13, 16\) float32"):
        bert.run_with_hooks(TEXT, fwd_hooks=[("blocks.0.hook_attn_out", lambda a, name: a.astype(np.float64))])


def test_a_hook_that_raises_fails_the_run_and_the_model_lives_on(bert):
    def broken(a, name):
        raise ZeroDivisionError("inside the hook")

    with pytest.raises(ZeroDivisionError, match="inside the hook"):
        bert.run_with_hooks(TEXT, fwd_hooks=[("blocks.1.hook_mlp_out", broken)])
    np.testing.assert_array_equal(bert.run(TEXT).hidden_states, bert.run(TEXT).hidden_states)


def test_nobody_listening_builds_no_hook_run():
    assert hook_run(("a", "b")) is None
    run = hook_run(bert_hook_names(BERT), [("blocks.1.attn.hook_z", lambda a, n: None)])
    assert run.at(0) == frozenset() and run.at(1) == {"attn.hook_z"}


def test_bad_ablation_values_are_refused(bert):
    for bad in ({(2, 0)}, {(0, 4)}, {(-1, 0)}, {(0.5, 1)}, {("a", "b")}, {(1,)}):
        with pytest.raises(EngineError, match="cannot switch off"):
            bert.run(TEXT, ablate=bad)


# ---------------------------------------------------------------- the toy engine


def toy_reference(result, v_scale: float = 1.0, head: int | None = None) -> np.ndarray:
    """float64 loop of the toy's attention (no RoPE, no mask) from its x and W matrices;
    head ``head``'s values scaled by ``v_scale``."""
    x = result.x.astype(np.float64)
    w = {name: getattr(result, name).astype(np.float64) for name in ("w_q", "w_k", "w_v", "w_o")}
    heads = result.config.heads
    d_k = x.shape[1] // heads
    q, k, v = x @ w["w_q"], x @ w["w_k"], x @ w["w_v"]
    concat = np.zeros_like(x)
    for h in range(heads):
        cols = slice(h * d_k, (h + 1) * d_k)
        scale = v_scale if head in (None, h) else 1.0
        for i in range(len(x)):
            s = np.array([q[i, cols] @ k[j, cols] for j in range(len(x))]) / math.sqrt(d_k)
            e = np.exp(s - s.max())
            concat[i, cols] = (e / e.sum()) @ (scale * v[:, cols])
    return concat @ w["w_o"]


def test_toy_hooks_names_cache_and_a_doubled_value():
    model = ToyModel(AttentionConfig(d_model=8, heads=2))
    names = model.hook_names()
    assert names == ("hook_embed", "hook_pos_embed", "blocks.0.hook_resid_pre", "blocks.0.attn.hook_q",
                     "blocks.0.attn.hook_k", "blocks.0.attn.hook_v", "blocks.0.attn.hook_attn_scores",
                     "blocks.0.attn.hook_pattern", "blocks.0.attn.hook_z", "blocks.0.hook_attn_out")
    trace, cache = model.run_with_cache("the cat sat on the mat")
    n = trace.n
    assert cache["blocks.0.attn.hook_q"].shape == (n, 2, 4)
    np.testing.assert_array_equal(cache["blocks.0.attn.hook_pattern"], trace.weights)
    np.testing.assert_array_equal(cache["blocks.0.hook_attn_out"], trace.output)
    np.testing.assert_array_equal(cache["blocks.0.hook_resid_pre"], trace.x)
    np.testing.assert_allclose(trace.output, toy_reference(trace), atol=1e-5)

    def double_head_1(v, name):
        out = v.copy()
        out[:, 1] *= 2
        return out

    doubled = model.run_with_hooks("the cat sat on the mat", fwd_hooks=[("blocks.0.attn.hook_v", double_head_1)])
    np.testing.assert_allclose(doubled.output, toy_reference(trace, 2.0, head=1), atol=1e-5)
    assert np.abs(doubled.output - trace.output).max() > 1e-3
    ablated = model.run("the cat sat on the mat", ablate={(0, 1)})
    np.testing.assert_allclose(ablated.output, toy_reference(trace, 0.0, head=1), atol=1e-5)
    with pytest.raises(EngineError, match="cannot switch off layer 1 head 0"):
        model.run("the cat", ablate={(1, 0)})


def test_toy_rope_offers_the_rotated_points():
    model = ToyModel(AttentionConfig(d_model=8, heads=2, positional="rope", mask="causal"))
    assert "blocks.0.attn.hook_rot_q" in model.hook_names() and "hook_pos_embed" not in model.hook_names()
    trace, cache = model.run_with_cache("a b c d")
    np.testing.assert_array_equal(cache["blocks.0.attn.hook_q"], trace.q_unrotated.transpose(1, 0, 2))
    np.testing.assert_array_equal(cache["blocks.0.attn.hook_rot_q"], trace.q.transpose(1, 0, 2))
    # masked entries: float32's minimum in the hook (TransformerLens's), −∞ in the trace
    assert cache["blocks.0.attn.hook_attn_scores"][0, 0, 1] == np.finfo(np.float32).min
    assert trace.scaled[0, 0, 1] == -np.inf


# ---------------------------------------------------------------- the decoder (tiny GGUF files)

gguf = pytest.importorskip("gguf")
from tests.tiny_gguf import D, EPS, HEAD_DIM, HEADS, KV_HEADS, LAYERS, THETA, write_tiny_gguf  # noqa: E402


def decoder_reference(w: dict, ids, z_edit=None, mlp_edit=None):
    """float64, Hugging Face's formulation (tests/tiny_gguf.reference_forward, with edits):
    ``z_edit(layer, z (n, heads, d_head))`` before W_O, ``mlp_edit(layer, mlp_out)``. Returns
    (hidden (layers + 1, n, d), last logits, per-layer z)."""
    n = len(ids)
    h = w["embed"].astype(np.float64)[ids]
    norm = lambda x, g: x / np.sqrt((x * x).mean(-1, keepdims=True) + EPS) * g  # noqa: E731
    inv = THETA ** (-np.arange(0, HEAD_DIM, 2) / HEAD_DIM)
    angles = np.arange(n)[:, None] * inv[None, :]
    cos = np.concatenate([np.cos(angles)] * 2, -1)
    sin = np.concatenate([np.sin(angles)] * 2, -1)
    rotate_half = lambda x: np.concatenate([-x[..., HEAD_DIM // 2:], x[..., : HEAD_DIM // 2]], -1)  # noqa: E731
    hidden, zs = [h.copy()], []
    for l, layer in enumerate(w["layers"]):
        x = norm(h, layer["attn_norm"])
        q = x @ layer["q"].T.astype(np.float64) + layer.get("qb", 0.0)
        k = x @ layer["k"].T.astype(np.float64) + layer.get("kb", 0.0)
        v = x @ layer["v"].T.astype(np.float64) + layer.get("vb", 0.0)
        z = np.zeros((n, HEADS, HEAD_DIM))
        for head in range(HEADS):
            kv = head // (HEADS // KV_HEADS)
            qh = q[:, head * HEAD_DIM:(head + 1) * HEAD_DIM]
            kh = k[:, kv * HEAD_DIM:(kv + 1) * HEAD_DIM]
            qh, kh = qh * cos + rotate_half(qh) * sin, kh * cos + rotate_half(kh) * sin
            vh = v[:, kv * HEAD_DIM:(kv + 1) * HEAD_DIM]
            for i in range(n):
                s = np.array([qh[i] @ kh[j] / math.sqrt(HEAD_DIM) for j in range(i + 1)])
                e = np.exp(s - s.max())
                z[i, head] = (e / e.sum()) @ vh[: i + 1]
        if z_edit is not None:
            z_edit(l, z)
        zs.append(z.copy())
        h = h + z.reshape(n, -1) @ layer["o"].T
        x = norm(h, layer["ffn_norm"])
        gate, up = x @ layer["gate"].T, x @ layer["up"].T
        mlp = (gate / (1 + np.exp(-gate)) * up) @ layer["down"].T
        if mlp_edit is not None:
            mlp = mlp_edit(l, mlp)
        h = h + mlp
        hidden.append(h.copy())
    hidden[-1] = norm(h, w["norm"])
    return np.array(hidden), hidden[-1][-1] @ w["embed"].T.astype(np.float64), zs


@pytest.fixture(scope="module", params=["llama", "qwen2"])
def tiny(request, tmp_path_factory):
    from engine.models.smollm2 import load_gguf

    path = tmp_path_factory.mktemp("tiny") / f"tiny-{request.param}.gguf"
    w = write_tiny_gguf(path, request.param, seed=3)
    return request.param, load_gguf(path), w


DECODER_TEXT = " the cat sat on the mat"


def test_decoder_hook_names_shapes_and_values(tiny):
    architecture, model, w = tiny
    names = model.hook_names()
    assert names[0] == "hook_embed" and names[-3:] == ("ln_final.hook_scale", "ln_final.hook_normalized",
                                                         "ln_final.hook_out")
    assert "blocks.1.attn.hook_rot_k" in names and "hook_pos_embed" not in names
    trace, cache = model.run_with_cache(DECODER_TEXT)
    assert set(cache) == set(names) and trace.reused_positions == 0
    n = trace.n
    shapes = {"attn.hook_q": (n, HEADS, HEAD_DIM), "attn.hook_k": (n, KV_HEADS, HEAD_DIM),
              "attn.hook_v": (n, KV_HEADS, HEAD_DIM), "attn.hook_rot_q": (n, HEADS, HEAD_DIM),
              "attn.hook_rot_k": (n, KV_HEADS, HEAD_DIM), "attn.hook_attn_scores": (HEADS, n, n),
              "attn.hook_pattern": (HEADS, n, n), "attn.hook_z": (n, HEADS, HEAD_DIM),
              "ln1.hook_scale": (n, 1), "ln2.hook_scale": (n, 1)}
    for name, array in cache.items():
        local = name.split(".", 2)[2] if name.startswith("blocks.") else name
        assert array.shape == shapes.get(local, (n, 1) if local == "ln_final.hook_scale" else (n, D)), name
    hidden, logits, zs = decoder_reference(w, trace.input_ids.tolist())
    for l in range(LAYERS):
        np.testing.assert_array_equal(cache[f"blocks.{l}.attn.hook_pattern"], trace.attentions[l])
        np.testing.assert_allclose(cache[f"blocks.{l}.attn.hook_z"], zs[l], atol=2e-5)
        np.testing.assert_array_equal(cache[f"blocks.{l}.attn.hook_rot_q"], trace.q[l].transpose(1, 0, 2))
        np.testing.assert_allclose(cache[f"blocks.{l}.hook_resid_pre"], hidden[l], atol=2e-5 * np.abs(hidden).max())
        scores = cache[f"blocks.{l}.attn.hook_attn_scores"]  # masked: float32's minimum, as TransformerLens
        assert (scores[:, 0, 1:] == np.finfo(np.float32).min).all() and (scores[:, -1] > -1e30).all()
        assert np.isneginf(trace.layer_scores(l)[1][:, 0, 1:]).all()  # the trace's own scaled scores keep −∞
        eps, layer = model.config.rms_norm_eps, w["layers"][l]
        assert_norm_points(cache, f"blocks.{l}.ln1", cache[f"blocks.{l}.hook_resid_pre"], "rms", eps, layer["attn_norm"],
                           None)
        assert_norm_points(cache, f"blocks.{l}.ln2", cache[f"blocks.{l}.hook_resid_mid"], "rms", eps, layer["ffn_norm"],
                           None)
        if l + 1 < LAYERS:
            np.testing.assert_array_equal(cache[f"blocks.{l}.hook_resid_post"], trace.hidden_states[l + 1])
    np.testing.assert_array_equal(cache["ln_final.hook_out"], trace.hidden_states[-1])
    assert_norm_points(cache, "ln_final", cache[f"blocks.{LAYERS - 1}.hook_resid_post"], "rms",
                       model.config.rms_norm_eps, w["norm"], None)
    # transformers' order of a head's dimensions for both files (the llama one was permuted by its
    # writer as llama.cpp does): hook_q / hook_k before RoPE are x · Wᵀ (+ b) with the Hugging Face weights
    x = cache["blocks.0.ln1.hook_out"].astype(np.float64)
    layer = w["layers"][0]
    for part, heads in (("q", HEADS), ("k", KV_HEADS)):
        projected = x @ layer[part].T + (layer[part + "b"] if architecture == "qwen2" else 0.0)
        np.testing.assert_allclose(cache[f"blocks.0.attn.hook_{part}"], projected.reshape(n, heads, HEAD_DIM),
                                   atol=1e-5)


def test_decoder_norm_points_change_nothing_and_pass_replacements_on(tiny):
    """Listening inside the norms runs them step by step with the fast path's numbers; a replaced
    scale or normalized value is what the rest of the norm (and the model) reads."""
    _, model, w = tiny
    plain = model.run(DECODER_TEXT, use_cache=False)
    names = [name for name in model.hook_names() if ".hook_scale" in name or ".hook_normalized" in name]
    listened, _ = model.run_with_cache(DECODER_TEXT, names=names)
    np.testing.assert_array_equal(listened.hidden_states, plain.hidden_states)
    np.testing.assert_array_equal(listened.next_token_logits, plain.next_token_logits)
    # the final norm's scale doubled: its output halves, and the logits with it
    doubled = model.run_with_hooks(DECODER_TEXT, fwd_hooks=[("ln_final.hook_scale", lambda scale, name: scale * 2)])
    np.testing.assert_allclose(doubled.hidden_states[-1], plain.hidden_states[-1] / 2, rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(doubled.next_token_logits, plain.next_token_logits / 2, rtol=1e-5, atol=1e-6)
    # layer 0's normalized input to attention set to zeros: q, k, v are their biases (or 0), the pattern uniform
    zeroed = model.run_with_hooks(DECODER_TEXT, fwd_hooks=[("blocks.0.ln1.hook_normalized",
                                                            lambda x, name: np.zeros_like(x))])
    rows = np.tril(np.ones((plain.n, plain.n))) / np.arange(1, plain.n + 1)[:, None]  # causal, uniform
    if "qb" not in w["layers"][0]:
        np.testing.assert_allclose(zeroed.attentions[0], np.broadcast_to(rows, zeroed.attentions[0].shape), atol=1e-6)
    assert not np.allclose(zeroed.hidden_states[1], plain.hidden_states[1])


def test_decoder_resumes_with_a_copied_prefix_through_the_contract(tiny):
    """What activation patching runs (a residual patched at position p of layer l, the rows before p
    copied from the unpatched run) is a public run_with_hooks: the same trace as the full resumed run."""
    _, model, _ = tiny
    tokenized = model.tokenize(DECODER_TEXT)
    base, cache = model.run_with_cache(tokenized, names=["blocks.1.hook_resid_pre"], use_cache=False)
    resid = np.array(cache["blocks.1.hook_resid_pre"])
    p = 3
    resid[p:] *= 1.5  # a change at p and after: rows before p are the base run's
    full = model.run_with_hooks(tokenized, start_at_layer=1, resid=resid, use_cache=False)
    copied = model.run_with_hooks(tokenized, start_at_layer=1, resid=resid, previous=base, prefix=p, use_cache=False)
    assert copied.reused_positions == p and full.reused_positions == 0  # rows before p copied, not computed
    np.testing.assert_allclose(copied.hidden_states[2:], full.hidden_states[2:], atol=1e-5 * np.abs(full.hidden_states[2:]).max())
    np.testing.assert_allclose(copied.next_token_logits, full.next_token_logits,
                               atol=1e-5 * np.abs(full.next_token_logits).max())
    assert not np.allclose(copied.next_token_logits, base.next_token_logits)


def test_decoder_doubling_mlp_out_as_a_float64_loop_predicts(tiny):
    _, model, w = tiny
    trace = model.run_with_hooks(DECODER_TEXT, fwd_hooks=[("blocks.0.hook_mlp_out", lambda a, name: a * 2)])
    hidden, logits, _ = decoder_reference(w, trace.input_ids.tolist(), mlp_edit=lambda l, m: 2 * m if l == 0 else m)
    np.testing.assert_allclose(trace.hidden_states, hidden, atol=2e-5 * np.abs(hidden).max())
    np.testing.assert_allclose(trace.next_token_logits, logits, atol=2e-5 * np.abs(logits).max())
    assert trace.hooked
    plain = model.run(DECODER_TEXT, previous=trace)
    assert plain.reused_positions == 0  # a hooked trace is never the KV cache
    assert np.abs(plain.next_token_logits - trace.next_token_logits).max() > 1e-3


def test_decoder_ablation_through_hook_z_as_a_float64_loop_predicts(tiny):
    _, model, w = tiny
    ablate = frozenset({(0, 1), (1, 2)})
    trace = model.run(DECODER_TEXT, ablate=ablate, use_cache=False)

    def zero(l, z):
        z[:, [h for layer, h in ablate if layer == l]] = 0.0

    hidden, logits, _ = decoder_reference(w, trace.input_ids.tolist(), z_edit=zero)
    np.testing.assert_allclose(trace.hidden_states, hidden, atol=2e-5 * np.abs(hidden).max())
    np.testing.assert_allclose(trace.next_token_logits, logits, atol=2e-5 * np.abs(logits).max())
    assert np.all(trace.head_outputs[0, 1] == 0) and not trace.hooked
    # an ablated run extends with the KV cache of the same ablation, and gives the same numbers
    longer = model.run(DECODER_TEXT + " the", ablate=ablate, previous=trace)
    assert longer.reused_positions == trace.n
    full = model.run(DECODER_TEXT + " the", ablate=ablate, use_cache=False)
    np.testing.assert_allclose(longer.next_token_logits, full.next_token_logits, atol=1e-5)


def test_decoder_start_at_layer_resumes_and_stop_at_layer_stops(tiny):
    _, model, _ = tiny
    full, cache = model.run_with_cache(DECODER_TEXT)
    resumed = model.run_with_hooks(DECODER_TEXT, start_at_layer=1, resid=cache["blocks.1.hook_resid_pre"])
    np.testing.assert_allclose(resumed.next_token_logits, full.next_token_logits, atol=1e-5)
    np.testing.assert_allclose(resumed.attentions[1], full.attentions[1], atol=1e-6)
    assert np.isnan(resumed.attentions[0]).all()
    stopped = model.run_with_hooks(DECODER_TEXT, stop_at_layer=1)
    np.testing.assert_allclose(stopped.hidden_states[1], cache["blocks.1.hook_resid_pre"], atol=1e-6)
    assert np.isnan(stopped.next_token_logits).all()


def test_decoder_inputs_as_tokenized_and_bad_inputs(tiny):
    _, model, _ = tiny
    tokenized = model.tokenize(DECODER_TEXT)
    assert tokenized.spans[1] == (4, 8)  # " cat"
    np.testing.assert_array_equal(model.run(tokenized, use_cache=False).next_token_logits,
                                  model.run(DECODER_TEXT, use_cache=False).next_token_logits)
    with pytest.raises(EngineError, match="a model runs a text or the Tokenized"):
        model.run(42)
    with pytest.raises(EngineError, match="cannot switch off layer 2 head 0: the model has layers 0 … 1"):
        model.run(DECODER_TEXT, ablate={(2, 0)})
