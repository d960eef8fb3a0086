"""engine.core.attention.attend_weights (the forwards' lean attention: weights and head outputs only,
the causal triangle, grouped-query heads in one matmul) against a float64 loop written here, head by
head and row by row, and against attend() itself."""
from __future__ import annotations

import math

import numpy as np
import pytest

from engine.core import parallel
from engine.core.attention import attend, attend_weights, causal_mask


def loop_reference(q, k, v, divisor, causal):
    """float64, one head and one query row at a time: softmax over the keys the row may see."""
    heads, n_q, _ = q.shape
    kv, n_k, _ = k.shape
    group = heads // kv
    weights = np.zeros((heads, n_q, n_k))
    outputs = np.zeros((heads, n_q, v.shape[2]))
    for h in range(heads):
        for i in range(n_q):
            seen = n_k - n_q + i + 1 if causal else n_k
            row = np.array([float(np.dot(q[h, i].astype(np.float64), k[h // group, j].astype(np.float64)))
                            for j in range(seen)]) / divisor
            e = np.exp(row - row.max())
            weights[h, i, :seen] = e / e.sum()
            outputs[h, i] = weights[h, i, :seen] @ v[h // group, :seen].astype(np.float64)
    return weights, outputs


CASES = [  # heads, kv heads, n_q, n_k, d_k, divisor, causal
    (9, 3, 40, 40, 16, 4.0, True),  # SmolLM2's grouping, a power-of-two divisor (q scaled)
    (9, 3, 3, 29, 16, 4.0, True),  # new positions over a cached prefix
    (4, 4, 1, 11, 8, math.sqrt(8.0), True),  # one new token, a divisor that is not a power of two
    (6, 6, 33, 33, 8, math.sqrt(8.0), False),  # an encoder: every key, scores scaled
    (2, 1, 70, 70, 4, 1.0, True),  # tiles of 16+ rows, multi-query
]


@pytest.mark.parametrize("heads, kv, n_q, n_k, d_k, divisor, causal", CASES)
@pytest.mark.parametrize("threaded", [False, True])
def test_attend_weights_matches_a_float64_loop(heads, kv, n_q, n_k, d_k, divisor, causal, threaded):
    rng = np.random.default_rng(heads * 100 + n_q)
    q = (rng.standard_normal((heads, n_q, d_k)) * 2).astype(np.float32)
    k = (rng.standard_normal((kv, n_k, d_k)) * 2).astype(np.float32)
    v = rng.standard_normal((kv, n_k, d_k)).astype(np.float32)
    garbage = np.full((heads, n_q, n_k), 7.0, np.float32)  # what was there: must not survive above the diagonal
    with parallel.engine_threads(threaded):
        got = attend_weights(q, k, v, divisor=divisor, causal=causal, weights_out=garbage)
    weights, outputs = loop_reference(q, k, v, divisor, causal)
    assert got["weights"] is garbage
    np.testing.assert_allclose(got["weights"], weights, atol=2e-6)
    np.testing.assert_allclose(got["head_outputs"], outputs, atol=1e-5)
    if causal:
        assert not np.triu(got["weights"][:, :, n_k - n_q:], 1).any()  # the future is exactly 0


def test_attend_weights_agrees_with_attend_on_a_large_causal_input():
    """512 tokens: many tiles, on the engine's threads, against attend's full square."""
    rng = np.random.default_rng(5)
    q = rng.standard_normal((9, 512, 64)).astype(np.float32)
    k, v = (rng.standard_normal((3, 512, 64)).astype(np.float32) for _ in range(2))
    full = attend(q, k, v, divisor=8.0, mask=causal_mask(512))
    out = np.zeros((9, 512, 512), np.float32)
    with parallel.engine_threads(True):
        lean = attend_weights(q, k, v, divisor=8.0, causal=True, weights_out=out, zeroed_above=True)
    np.testing.assert_allclose(lean["weights"], full["weights"], atol=1e-6)
    np.testing.assert_allclose(lean["head_outputs"], full["head_outputs"], atol=1e-5)


def test_attend_weights_refuses_heads_that_do_not_share_evenly():
    q = np.zeros((5, 2, 4), np.float32)
    k = v = np.zeros((2, 2, 4), np.float32)
    with pytest.raises(ValueError, match="5 query heads"):
        attend_weights(q, k, v)


@pytest.mark.parametrize("divisor, causal", [(8.0, True), (math.sqrt(32.0), False)])
def test_copying_the_scores_out_changes_no_weight(divisor, causal):
    """A run with a hook on the scores asks for them: its weights must be the very numbers of a run without."""
    rng = np.random.default_rng(9)
    q = rng.standard_normal((6, 50, 32)).astype(np.float32)
    k, v = (rng.standard_normal((3, 50, 32)).astype(np.float32) for _ in range(2))
    plain = attend_weights(q, k, v, divisor=divisor, causal=causal)
    kept = attend_weights(q, k, v, divisor=divisor, causal=causal, scores_out=np.empty((6, 50, 50), np.float32),
                          scaled_out=np.empty((6, 50, 50), np.float32))
    np.testing.assert_array_equal(kept["weights"], plain["weights"])
    np.testing.assert_array_equal(kept["head_outputs"], plain["head_outputs"])
    full = attend(q, k, v, divisor=divisor, mask=causal_mask(50) if causal else None)
    np.testing.assert_allclose(kept["scaled"], full["scaled"], rtol=1e-6, atol=1e-5)  # −∞ in the same places
    lower = np.tril(np.ones((50, 50), bool)) if causal else np.ones((50, 50), bool)
    np.testing.assert_allclose(kept["scores"][:, lower], full["scores"][:, lower], rtol=1e-6, atol=1e-5)


@pytest.mark.parametrize("shift", [300.0, -300.0])
def test_scores_past_exps_range_take_the_shifted_softmax(shift):
    """Scaled scores of ±300 (exp overflows to ∞ above ~88, underflows to 0 below ~−103): the softmax
    without the row maximum cannot hold them, the tile's rows are redone with it; the weights still
    match the float64 loop (which subtracts the maximum) and no row is NaN or all zero."""
    rng = np.random.default_rng(11)
    # eighths: every product a multiple of 1/64, so the float32 scores near ±300 are exact
    q, k = (np.round(rng.standard_normal((2, 20, 8)) * 8).astype(np.float32) / 8 for _ in range(2))
    q[:, :, 0] = 1.0
    k[:, :, 0] = shift  # every score moved by shift: the weights are those of the unshifted scores
    v = rng.standard_normal((2, 20, 8)).astype(np.float32)
    got = attend_weights(q, k, v, divisor=1.0, causal=False)
    weights, outputs = loop_reference(q, k, v, 1.0, False)
    assert np.isfinite(got["weights"]).all()
    np.testing.assert_allclose(got["weights"].sum(-1), 1.0, atol=1e-5)
    np.testing.assert_allclose(got["weights"], weights, atol=2e-6)
    np.testing.assert_allclose(got["head_outputs"], outputs, atol=1e-5)
