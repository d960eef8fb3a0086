"""Attention flow (engine.analysis.flow) against networkx's maximum flow on MiniLM's own attentions
(tests/fixtures/flow_reference.npz, scripts/make_flow_reference.py) and against small cases
worked by hand."""
from __future__ import annotations


import numpy as np
import pytest

from tests import FIXTURES
from engine.analysis.flow import attention_flow, flow_capacities, max_flows
from engine.analysis.rollout import attention_rollout

FIXTURE = FIXTURES / "flow_reference.npz"


@pytest.fixture(scope="module")
def reference():
    return np.load(FIXTURE)


def test_flow_equals_networkx_on_minilm(reference):
    flow = attention_flow(reference["attentions"])
    assert flow.shape == reference["flow"].shape
    np.testing.assert_allclose(flow, reference["flow"], atol=1e-9, rtol=0)
    # the fixture is not trivial: flows differ from the rollout and from the 1 bound
    assert np.abs(flow - attention_rollout(reference["attentions"])[-1]).max() > 0.05


def test_flow_rows_subset_matches_full(reference):
    full = attention_flow(reference["attentions"])
    some = attention_flow(reference["attentions"], rows=[3, 7])
    np.testing.assert_array_equal(some[[3, 7]], full[[3, 7]])
    assert np.isnan(some[0]).all()


def test_flow_between_rollout_and_one(reference):
    flow = attention_flow(reference["attentions"])
    roll = attention_rollout(reference["attentions"])[-1]
    assert (flow >= roll - 1e-12).all() and (flow <= 1 + 1e-12).all()


def test_two_layers_is_sum_of_path_minima():
    # two layers: the paths j → k → i are disjoint, so the flow is Σ_k min(Â0[k, j], Â1[i, k])
    rng = np.random.default_rng(3)
    caps = rng.random((2, 5, 5))
    caps /= caps.sum(axis=-1, keepdims=True)
    flow = max_flows(caps)
    expected = np.minimum(caps[0].T[None, :, :], caps[1][:, None, :]).sum(axis=-1)  # [i, j]
    np.testing.assert_allclose(flow, expected, atol=1e-12)


def test_three_layers_needs_rerouting():
    # a case where the greedy first path blocks the best one: the flow must undo it (a back edge)
    caps = np.zeros((3, 3, 3))
    caps[0][:, 0] = [1.0, 1.0, 0.0]  # source 0 → middle nodes 0 and 1
    caps[1][0, 0] = 1.0  # 0 → 0
    caps[1][1, 0] = 1.0  # 0 → 1 (the greedy choice)
    caps[1][1, 1] = 1.0  # 1 → 1
    caps[2][0, 0] = 1.0  # 0 → sink 0
    caps[2][0, 1] = 1.0  # 1 → sink 0
    flow = max_flows(caps)
    assert flow[0, 0] == pytest.approx(2.0)


def test_capacities_rows_sum_to_one(reference):
    caps = flow_capacities(reference["attentions"])
    np.testing.assert_allclose(caps.sum(axis=-1), 1.0, atol=1e-12)


def test_switched_off_heads_are_zero_weights_in_the_capacities(reference):
    """Failed before: flow used every head's pattern even when heads were switched off. A head
    off counts as zero weights in its layer's mean over all heads (as the rollout's)."""
    a = reference["attentions"].astype(np.float64)
    layers, heads, n, _ = a.shape
    kept = np.ones((layers, heads), dtype=bool)
    kept[2, [0, 3, 7]] = False
    kept[4] = False  # a whole layer off: it mixes nothing
    caps = flow_capacities(a, heads_kept=kept)
    for l in range(layers):
        mean = sum(a[l, h] for h in range(heads) if kept[l, h]) / heads
        mixed = 0.5 * mean + 0.5 * np.eye(n)
        np.testing.assert_allclose(caps[l], mixed / mixed.sum(axis=1, keepdims=True), atol=1e-12)
    np.testing.assert_allclose(caps[4], np.eye(n), atol=1e-15)
    flow = attention_flow(a, heads_kept=kept)
    np.testing.assert_allclose(flow, max_flows(caps), atol=1e-12)
    assert np.abs(flow - attention_flow(a)).max() > 1e-2  # the switched-off heads change the flow
    roll = attention_rollout(a, heads_kept=kept)[-1]
    assert (flow >= roll - 1e-12).all()  # the same graph as the rollout's: still a lower bound


def _edmonds_karp(caps: np.ndarray, source: int, sink: int) -> float:
    """Shortest augmenting paths in plain Python on the layered graph (an independent maximum flow)."""
    from collections import deque

    layers, n, _ = caps.shape
    residual = {}
    for l in range(layers):
        for m in range(n):
            for k in range(n):
                if caps[l, m, k] > 0:
                    residual[((l, k), (l + 1, m))] = residual.get(((l, k), (l + 1, m)), 0.0) + caps[l, m, k]
                    residual.setdefault(((l + 1, m), (l, k)), 0.0)
    out = {}
    for (u, v) in residual:
        out.setdefault(u, []).append(v)
    start, end, total = (0, source), (layers, sink), 0.0
    while True:
        parent, queue = {start: None}, deque([start])
        while queue and end not in parent:
            u = queue.popleft()
            for v in out.get(u, ()):
                if v not in parent and residual[(u, v)] > 1e-15:
                    parent[v] = u
                    queue.append(v)
        if end not in parent:
            return total
        path, v = [], end
        while parent[v] is not None:
            path.append((parent[v], v))
            v = parent[v]
        amount = min(residual[e] for e in path)
        for u, v in path:
            residual[(u, v)] -= amount
            residual[(v, u)] += amount
        total += amount


def test_flow_equals_augmenting_paths_on_random_graphs():
    """Random attentions, some of them peaked (a few large weights, many near 0): every pair against
    an independent float64 Edmonds–Karp — the early exits (trivial cuts, the certified cut) included."""
    rng = np.random.default_rng(7)
    for layers, n, peak in ((4, 7, 1.0), (5, 9, 6.0), (3, 10, 3.0)):
        logits = rng.standard_normal((layers, 3, n, n)) * peak
        a = np.exp(logits)
        a /= a.sum(axis=-1, keepdims=True)
        caps = flow_capacities(a)
        got = max_flows(caps)
        expected = np.array([[_edmonds_karp(caps, j, i) for j in range(n)] for i in range(n)])
        np.testing.assert_allclose(got, expected, atol=1e-9, rtol=0)


def _trivial_cuts(caps: np.ndarray) -> np.ndarray:
    """(n, n) the smaller of the two trivial cuts at [i, j]: source (0, j)'s out-edges, sink (L, i)'s in-edges."""
    return np.minimum(caps[0].sum(axis=0)[None, :], caps[-1].sum(axis=1)[:, None])


def test_middle_layer_bottleneck_below_the_trivial_cuts():
    """An identity middle layer: the paths j → k → k → i are edge-disjoint, so the flow is
    Σ_k min(Â0[k, j], Â2[i, k]), below both trivial cuts for every pair — a solver that stopped at
    (or returned) the trivial cut's value would fail here."""
    rng = np.random.default_rng(11)
    n = 6
    caps = rng.random((3, n, n)) ** 3  # peaked: the two ends disagree, so the middle binds
    caps /= caps.sum(axis=-1, keepdims=True)
    caps[1] = np.eye(n)
    expected = np.minimum(caps[0].T[None, :, :], caps[2][:, None, :]).sum(axis=-1)  # [i, j]
    assert (_trivial_cuts(caps) - expected).min() > 0.05
    np.testing.assert_allclose(max_flows(caps), expected, atol=1e-12, rtol=0)


def test_nearly_diagonal_middle_layer_against_augmenting_paths():
    """A middle layer that mixes little (diagonal ≈ 0.98): many pairs' minimum cut lies in the
    middle, the rest at a trivial cut; every pair against Edmonds–Karp."""
    rng = np.random.default_rng(12)
    layers, n = 5, 8
    logits = rng.standard_normal((layers, 2, n, n)) * 3.0
    a = np.exp(logits)
    a /= a.sum(axis=-1, keepdims=True)
    caps = flow_capacities(a)
    caps[2] = 0.98 * np.eye(n) + 0.02 * caps[2]  # rows still sum to 1
    got = max_flows(caps)
    expected = np.array([[_edmonds_karp(caps, j, i) for j in range(n)] for i in range(n)])
    np.testing.assert_allclose(got, expected, atol=1e-9, rtol=0)
    below = _trivial_cuts(caps) - expected > 0.05
    assert 0.2 < below.mean() < 1.0  # both kinds of pairs are present


def test_causal_attentions_against_augmenting_paths():
    """A decoder's causal mask: Â_l is lower triangular, so flow only moves to later positions —
    nothing reaches an earlier position (exactly 0 above the diagonal: a capacity read transposed
    would break it) — and every pair matches Edmonds–Karp."""
    rng = np.random.default_rng(13)
    layers, heads, n = 4, 3, 8
    above = np.triu_indices(n, 1)  # (rows, columns) of the masked future positions
    logits = rng.standard_normal((layers, heads, n, n)) * 2.5
    logits[..., above[0], above[1]] = -np.inf
    a = np.exp(logits)
    a /= a.sum(axis=-1, keepdims=True)
    caps = flow_capacities(a)
    assert (np.triu(caps, 1) == 0).all()
    got = attention_flow(a)
    assert (got[above] == 0).all()
    expected = np.array([[_edmonds_karp(caps, j, i) for j in range(n)] for i in range(n)])
    np.testing.assert_allclose(got, expected, atol=1e-9, rtol=0)
    below = (_trivial_cuts(caps) - expected > 0.05)[np.tril_indices(n)]
    assert 0.2 < below.mean() < 1.0  # a source late in the sequence reaches few positions: a middle cut


def test_flow_of_a_run_with_heads_off_and_its_token_limit(reference):
    """flow_of_run: the one function the window and `export --flow` call — the run's switched-off
    heads as zero weights (the capacities above), the token limit checked before any work."""
    from engine.analysis.flow import FLOW_TOKENS, flow_of_run
    from engine.core.errors import EngineError

    a = reference["attentions"].astype(np.float64)
    off = frozenset({(2, 0), (2, 3), (4, 7)})
    kept = np.ones(a.shape[:2], dtype=bool)
    kept[2, [0, 3]] = kept[4, 7] = False
    np.testing.assert_allclose(flow_of_run(a, off), max_flows(flow_capacities(a, heads_kept=kept)), atol=1e-12)
    np.testing.assert_allclose(flow_of_run(a), attention_flow(a), atol=1e-15)
    too_long = np.full((2, 1, FLOW_TOKENS + 1, FLOW_TOKENS + 1), 1.0 / (FLOW_TOKENS + 1))
    with pytest.raises(EngineError, match=f"at most {FLOW_TOKENS} tokens; this text has {FLOW_TOKENS + 1}"):
        flow_of_run(too_long)
    stopped = flow_of_run(a, off, cancelled=lambda: True)  # a newer request: nothing more is computed
    assert np.isnan(stopped).all()
