"""Attention flow (engine.analysis.flow) against networkx's maximum flow on MiniLM's own attentions
(tests/fixtures/flow_reference.npz, scripts/make_flow_reference.py) and against small cases
worked by hand."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from engine.analysis.flow import attention_flow, flow_capacities, max_flows
from engine.analysis.rollout import attention_rollout

FIXTURE = Path(__file__).parent / "fixtures" / "flow_reference.npz"


@pytest.fixture(scope="module")
def reference():
    return np.load(FIXTURE)


def test_flow_equals_networkx_on_minilm(reference):
    flow = attention_flow(reference["attentions"])
    assert flow.shape == reference["flow"].shape
    np.testing.assert_allclose(flow, reference["flow"], atol=1e-4, rtol=0)
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
    """Issue 21 leftover: flow used every head's pattern even when heads were switched off. A head
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
