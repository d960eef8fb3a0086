"""The two block shapes built from a config, each against the short float64 reference block beside
it: the decoder (engine.models.llama.forward vs reference_block) in every combination of LayerNorm |
RMSNorm, SwiGLU | GELU | GELU-tanh, rotary (both row layouts) | learned positions, grouped-query
attention, biases, q/k norm and tied | separate unembedding (random weights: conftest's
random_decoder); the post-LN encoder (engine.models.bert.forward vs reference_encoder_block)."""
from __future__ import annotations

import itertools
import math
import zlib

import numpy as np
import pytest

from engine.models.bert import BertConfig, reference_encoder_block
from engine.models.bert import forward as bert_forward
from engine.models.bert import prepare_weights as bert_weights
from engine.core.hooks import HookRun
from engine.models.llama import DecoderConfig, forward, hook_names, reference_block

D, HEADS, D_FF, LAYERS, VOCAB, CONTEXT = 16, 4, 24, 2, 50, 12

SHAPES = list(itertools.product(("rms", "layer"), ("swiglu", "gelu", "gelu_tanh"),
                                ("adjacent", "half", "learned")))


@pytest.mark.parametrize("norm, mlp, positions", SHAPES)
@pytest.mark.parametrize("kv, biases, qk_norm, tied", [(2, False, False, True), (4, True, True, False)])
def test_decoder_block_matches_its_reference(random_decoder, norm, mlp, positions, kv, biases, qk_norm, tied):
    seed = zlib.crc32(repr((norm, mlp, positions, kv)).encode()) % 1000  # hash() is salted per process: unrepeatable
    config, tensors, weights = random_decoder(norm, mlp, positions, kv, layers=LAYERS, vocab=VOCAB, biases=biases,
                                              qk_norm=qk_norm, untied=not tied, seed=seed, spread=0.3)
    assert (weights.output_head is weights.token_embeddings) == tied
    assert (weights.layers[0].qkv_bias is not None) == biases and (weights.layers[0].q_norm is not None) == qk_norm
    ids = [3, 14, 15, 9, 26, 5, 35, 8]
    hooks = HookRun(hook_names(config), cache_all=True)
    trace = forward(weights, config, ids, hooks=hooks)
    cache = hooks.cache
    scale = 1e-5 * max(1.0, float(np.abs(trace.hidden_states).max()))
    h = tensors["embed"].astype(np.float64)[ids] + (tensors["wpe"][: len(ids)] if positions == "learned" else 0.0)
    np.testing.assert_allclose(cache["blocks.0.hook_resid_pre"], h, atol=scale)
    for l in range(LAYERS):
        expected = reference_block(h, weights.layers[l], config, weights.inverse_frequency)
        np.testing.assert_allclose(cache[f"blocks.{l}.hook_resid_post"], expected, atol=scale, err_msg=f"layer {l}")
        h = expected
    if norm == "rms":
        final = h / np.sqrt((h * h).mean(-1, keepdims=True) + 1e-5) * tensors["norm"]
    else:
        centered = h - h.mean(-1, keepdims=True)
        final = centered / np.sqrt((centered ** 2).mean(-1, keepdims=True) + 1e-5) * tensors["norm"] + tensors["norm.b"]
    np.testing.assert_allclose(trace.hidden_states[-1], final, atol=scale)
    head = tensors["embed"] if tied else tensors["lm_head"]
    logits = head.astype(np.float64) @ final[-1]
    np.testing.assert_allclose(trace.next_token_logits, logits, atol=1e-5 * np.abs(logits).max())
    # the KV cache: one more token computes only its position, with the same numbers
    longer = forward(weights, config, ids + [7], previous=trace)
    full = forward(weights, config, ids + [7])
    assert longer.reused_positions == len(ids)
    # float32 sums in another order: within 1e-5 of the logits' size, as above
    np.testing.assert_allclose(longer.next_token_logits, full.next_token_logits, atol=1e-5 * np.abs(full.next_token_logits).max())


def test_the_reference_block_can_fail(random_decoder):
    """A reference that agreed with anything would prove nothing: one wrong flag moves it."""
    config, _, weights = random_decoder("rms", "swiglu", "half", 2, layers=LAYERS, vocab=VOCAB, biases=False,
                                        qk_norm=False, untied=False, seed=0, spread=0.3)
    h = np.random.default_rng(1).standard_normal((6, D))
    right = reference_block(h, weights.layers[0], config, weights.inverse_frequency)
    for change in ({"rope_style": "adjacent"}, {"norm": "layer"}):
        other = DecoderConfig(**{**config.__dict__, **change})
        assert np.abs(reference_block(h, weights.layers[0], other, weights.inverse_frequency) - right).max() > 1e-3


def test_bad_block_shapes_are_refused():
    with pytest.raises(Exception, match="mlp is one of swiglu, geglu, gelu, gelu_tanh; got 'relu'"):
        DecoderConfig("x", 1, D, D_FF, HEADS, 2, 4, VOCAB, 1e4, 1e-5, 8, mlp="relu")
    with pytest.raises(Exception, match="cannot share"):
        DecoderConfig("x", 1, D, D_FF, HEADS, 3, 4, VOCAB, 1e4, 1e-5, 8)


# ---------------------------------------------------------------- the encoder block


@pytest.mark.parametrize("threaded", [False, True])
def test_encoder_block_matches_its_reference(threaded, monkeypatch):
    """threaded: the layers in two row shares, each attending for its own query rows (the fast path
    of long sentences), against the same reference."""
    if threaded:
        from engine.core import parallel
        from engine.models import bert

        monkeypatch.setattr(parallel, "THREADS", 2)
        monkeypatch.setattr(parallel, "PARALLEL_MIN_PRODUCTS", 0)
        monkeypatch.setattr(bert, "ENCODER_THREADED_MIN_SCORES", 0)
    config = BertConfig(vocab_size=VOCAB, hidden_size=D, num_layers=LAYERS, num_heads=HEADS, intermediate_size=D_FF,
                        max_positions=CONTEXT, type_vocab_size=2, layer_norm_eps=1e-12)
    rng = np.random.default_rng(4)
    f = lambda *shape, s=0.4: (rng.standard_normal(shape) * s).astype(np.float32)  # noqa: E731
    t = {"embeddings.word_embeddings.weight": f(VOCAB, D, s=1.0), "embeddings.position_embeddings.weight": f(CONTEXT, D),
         "embeddings.token_type_embeddings.weight": f(2, D), "embeddings.LayerNorm.weight": 1 + f(D, s=0.1),
         "embeddings.LayerNorm.bias": f(D, s=0.1)}
    for i in range(LAYERS):
        p = f"encoder.layer.{i}."
        for name in ("query", "key", "value"):
            t[f"{p}attention.self.{name}.weight"], t[f"{p}attention.self.{name}.bias"] = f(D, D), f(D, s=0.1)
        t.update({p + "attention.output.dense.weight": f(D, D), p + "attention.output.dense.bias": f(D, s=0.1),
                  p + "attention.output.LayerNorm.weight": 1 + f(D, s=0.1),
                  p + "attention.output.LayerNorm.bias": f(D, s=0.1), p + "intermediate.dense.weight": f(D_FF, D),
                  p + "intermediate.dense.bias": f(D_FF, s=0.1), p + "output.dense.weight": f(D, D_FF),
                  p + "output.dense.bias": f(D, s=0.1), p + "output.LayerNorm.weight": 1 + f(D, s=0.1),
                  p + "output.LayerNorm.bias": f(D, s=0.1)})
    weights = bert_weights(t, config)
    trace = bert_forward(weights, config, [1, 7, 22, 4, 9, 2])
    for l in range(LAYERS):
        expected = reference_encoder_block(trace.hidden_states[l], weights.layers[l], config)
        np.testing.assert_allclose(trace.hidden_states[l + 1], expected, atol=2e-5)
    wrong = reference_encoder_block(trace.hidden_states[0], weights.layers[1], config)  # another layer's weights
    assert np.abs(wrong - trace.hidden_states[1]).max() > 1e-2
    assert math.isfinite(float(np.abs(expected).max()))
