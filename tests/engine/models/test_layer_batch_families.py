"""Activation patching reruns many patched variants of a layer at once (engine.models.llama_batch)
only for the plain Llama/Qwen block; a family whose block has a sliding window, soft-capping or
norms after attention and MLP declares it cannot, and its grid comes from hooked runs, equal to a
cell patched by hand."""
from __future__ import annotations


import numpy as np
import pytest

from tests import FIXTURES
from engine.analysis.patching import activation_patching
from engine.analysis.request import RunRequest
from engine.models.families.loading import load_folder

FIXTURES = FIXTURES / "families"


@pytest.mark.parametrize("family, batches", [("llama", True), ("qwen3", True), ("mistral", False),
                                             ("gemma2", False), ("olmo2", False)])
def test_only_the_plain_block_declares_layer_batches(family, batches):
    assert load_folder(FIXTURES / family).facts.capabilities.layer_batches is batches


def test_a_gemma2_residual_grid_equals_runs_patched_by_hand():
    model = load_folder(FIXTURES / "gemma2")
    clean, corrupt = "the cat sat on the mat", "the dog sat on the mat"
    answer = " mat"
    result = activation_patching(model, RunRequest(text=clean, answer=answer), corrupt, ("resid_pre",))
    grid = np.asarray(result.grids["resid_pre"])  # (layers, n) p(answer) with one clean row patched in
    answer_id = result.setup.answer.id
    layers, n = grid.shape
    _, cache = model.run_with_cache(clean, [f"blocks.{layer}.hook_resid_pre" for layer in range(layers)],
                                    use_cache=False)
    expected = np.zeros((layers, n))
    for layer in range(layers):
        name = f"blocks.{layer}.hook_resid_pre"
        for position in range(n):
            def put_clean(resid, hook_name, position=position, name=name):
                resid = resid.copy()
                resid[position] = cache[name][position]
                return resid

            logits = model.run_with_hooks(corrupt, [(name, put_clean)], use_cache=False).next_token_logits
            logits = logits.astype(np.float64)
            probabilities = np.exp(logits - logits.max())
            expected[layer, position] = (probabilities / probabilities.sum())[answer_id]
    np.testing.assert_allclose(grid, expected, rtol=1e-4, atol=1e-9)
    assert np.ptp(expected) > 1e-3 * expected.max()  # some cells move the answer: the grid is not flat
