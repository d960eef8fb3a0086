"""Value-weighted attention of a pretrained model reads W_O through the model contract
(``model.W_O``, engine/models/contract.py), never ``model.weights``: checked with a model whose
weights are out of reach, against a float64 loop over the trace's values and the layers' W_O."""
from __future__ import annotations

import math
from tests import FIXTURES as ROOT_FIXTURES

import numpy as np
import pytest

from engine.analysis.request import RunRequest
from engine.analysis.runs import Runs
from engine.analysis.table import run_analysis
from engine.models.families.loading import load_folder

FIXTURES = ROOT_FIXTURES / "families"


class ContractOnly:
    """A model whose ``weights`` raise: what an analysis reads must come through the contract."""

    def __init__(self, model) -> None:
        self._model = model

    def __getattr__(self, name: str):
        if name == "weights":
            raise AttributeError("an analysis reached into model.weights")
        return getattr(self._model, name)


def loop_norms(attentions, values, output_weights) -> np.ndarray:
    """‖α_ij · (v_{g(h)j} · W_O[h·d_k:(h+1)·d_k])‖ one cell at a time, float64; g(h) the key/value
    head that query head h shares."""
    layers, heads, n, _ = attentions.shape
    out = np.zeros((layers, heads, n, n))
    for l in range(layers):
        v = np.asarray(values[l], np.float64)  # (kv_heads, n, d_k)
        group, d_k = heads // v.shape[0], v.shape[-1]
        w_o = np.asarray(output_weights[l], np.float64)
        for h in range(heads):
            rows = w_o[h * d_k:(h + 1) * d_k]
            for i in range(n):
                for j in range(n):
                    vector = float(attentions[l, h, i, j]) * (v[h // group, j] @ rows)
                    out[l, h, i, j] = math.sqrt(sum(x * x for x in vector))
    return out


@pytest.mark.parametrize("family", ["llama", "bert"])
def test_value_norms_read_w_o_through_the_contract(family):
    model = load_folder(FIXTURES / family)
    request = RunRequest(text="the cat sat on the mat", ablate=frozenset({(0, 1)}))
    runs = Runs(ContractOnly(model), request)
    norms = run_analysis("value_norms", runs.model, runs=runs).value_norms
    trace = runs.trace
    expected = loop_norms(np.asarray(trace.attentions, np.float64), trace.layer_values(),
                          [w.output_weight for w in model.weights.layers])
    expected[0, 1] = 0.0  # the switched-off head
    assert norms.shape == expected.shape and expected.max() > 0
    np.testing.assert_allclose(norms, expected, rtol=1e-5, atol=1e-6 * expected.max())
    with pytest.raises(AttributeError):
        runs.model.weights
