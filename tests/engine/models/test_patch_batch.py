"""The layer-batched patching engine (engine.models.llama_batch, driven by engine.analysis.patching)
against its definition: for every cell, a full run of the corrupted ids from the embeddings with
one hook replacing the activation by the clean run's (engine.models.llama.forward, no resume, no
prefix, no batch), on small random decoders of every block shape — RMSNorm | LayerNorm, SwiGLU |
GELU-tanh, rotary in both row layouts | learned positions, grouped-query attention, biases, q/k
norm, a separate unembedding. (SmolLM2's grids against transformers: tests/engine/analysis/test_patching.py.)"""
from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from engine.analysis import patching
from engine.analysis.occlusion import probability
from engine.models.contract import Capabilities
from engine.core.hooks import HookRun
from engine.models import llama_batch
from engine.models.llama import forward, hook_names

HEADS, LAYERS, VOCAB = 4, 3, 40  # conftest.random_decoder: d 16, 4 heads, 12 positions
CLEAN = [3, 14, 15, 9, 26, 5, 35, 8]
CORRUPT = [3, 14, 21, 30, 26, 5, 35, 8]  # two positions differ


def decoder(random_decoder, norm, mlp, positions, kv, extras, seed):
    """``extras``: biases, q/k norm and a separate unembedding together."""
    return random_decoder(norm, mlp, positions, kv, layers=LAYERS, vocab=VOCAB, biases=extras, qk_norm=extras,
                          untied=extras, seed=seed, spread=0.5)


def setup_for(config, weights, ablate=frozenset()):
    """A PatchSetup as engine.analysis.patching.prepare makes one, from forward runs with every hook
    cached (the heads of ``ablate`` switched off in both)."""
    runs = []
    for ids in (CLEAN, CORRUPT):
        hooks = HookRun(hook_names(config), cache_all=True)
        runs.append((forward(weights, config, ids, hooks=hooks, ablate=ablate), hooks.cache))
    (clean, clean_cache), (corrupt, corrupt_cache) = runs
    answer = int(np.argmax(clean.next_token_logits))
    ranked = np.argsort(-corrupt.next_token_logits)
    other = int(ranked[0] if ranked[0] != answer else ranked[1])
    facts = SimpleNamespace(capabilities=Capabilities(next_token_logits=True, layer_batches=True))
    model = SimpleNamespace(weights=weights, config=config, facts=facts)  # what the grids read of a Decoder
    return patching.PatchSetup(
        model, SimpleNamespace(input_ids=np.array(CLEAN)), SimpleNamespace(input_ids=np.array(CORRUPT)), True,
        LAYERS, HEADS, SimpleNamespace(id=answer, note=""), other, len(CLEAN) - 1, clean_cache, corrupt_cache, corrupt,
        np.zeros(0), probability(clean.next_token_logits, answer), probability(corrupt.next_token_logits, answer),
        ablate=frozenset(ablate))


def hooked_cell(setup, grid, layer, column):
    """(p(answer), logit difference) of one cell: the corrupted ids from the embeddings, one hook."""
    name = f"blocks.{layer}.{patching._POINT[grid]}"
    source = setup.clean_cache[name]

    def replace(array, _name):
        if grid == "head_z":
            array[:, column] = source[:, column]  # (n, heads, d_k): one head at every position
        else:
            array[column] = source[column]

    config, weights = setup.model.config, setup.model.weights
    trace = forward(weights, config, CORRUPT, hooks=HookRun(hook_names(config), [(name, replace)]), ablate=setup.ablate)
    logits = np.asarray(trace.next_token_logits, dtype=np.float64)
    return probability(logits, setup.answer.id), logits[setup.answer.id] - logits[setup.other]


SHAPES = [("rms", "swiglu", "adjacent", 2, False), ("rms", "swiglu", "half", 4, True),
          ("layer", "gelu_tanh", "learned", 4, True), ("layer", "gelu", "adjacent", 2, True),
          ("rms", "gelu_tanh", "learned", 2, False)]


@pytest.mark.parametrize("norm, mlp, positions, kv, extras", SHAPES)
def test_batched_grids_equal_hooked_full_runs(random_decoder, norm, mlp, positions, kv, extras, monkeypatch):
    config, _, weights = decoder(random_decoder, norm, mlp, positions, kv, extras, seed=len(norm) * 7 + len(mlp) + kv)
    setup = setup_for(config, weights)
    assert patching.batched(setup)
    monkeypatch.setattr(llama_batch, "ROWS_PER_CHUNK", 11)  # several chunks per layer batch
    result = patching.patch(setup)
    assert result.complete
    moved = 0.0
    for grid in patching.GRIDS:
        for layer in range(LAYERS):
            for column in range(HEADS if grid == "head_z" else len(CLEAN)):
                value, diff = hooked_cell(setup, grid, layer, column)
                assert result.grids[grid][layer, column] == pytest.approx(value, abs=1e-5), (grid, layer, column)
                assert result.logit_diffs[grid][layer, column] == pytest.approx(diff, abs=1e-4), (grid, layer, column)
                moved = max(moved, abs(value - setup.corrupt_value))
        # one grid row as the window runs it (its variants split between the threads)
        row = patching.patch_row(setup, grid, 1)
        np.testing.assert_allclose(row.values, result.grids[grid][1], atol=1e-6)
    assert moved > 1e-2  # the patches change the answer's probability: the comparison is not vacuous


@pytest.mark.parametrize("shape", [SHAPES[0], SHAPES[2]])
def test_switched_off_heads_equal_hooked_full_runs_with_them_off(random_decoder, shape):
    """Heads off in layers 0 and 2 (the layer a batch enters and one it runs through): every cell
    equals a full run with the same heads off and the one patch hook."""
    config, _, weights = decoder(random_decoder, *shape, seed=11)
    off = frozenset({(0, 1), (2, 0), (2, 3)})
    setup = setup_for(config, weights, off)
    plain = setup_for(config, weights)
    assert abs(setup.corrupt_value - plain.corrupt_value) > 1e-3  # the heads matter to the measure
    result = patching.patch(setup)
    for grid in patching.GRIDS:
        for layer in range(LAYERS):
            for column in range(HEADS if grid == "head_z" else len(CLEAN)):
                value, diff = hooked_cell(setup, grid, layer, column)
                assert result.grids[grid][layer, column] == pytest.approx(value, abs=1e-5), (grid, layer, column)
                assert result.logit_diffs[grid][layer, column] == pytest.approx(diff, abs=1e-4), (grid, layer, column)
    # a head that is off stays off when patched: its cell is the corrupted run's value
    assert result.grids["head_z"][0, 1] == pytest.approx(setup.corrupt_value, abs=1e-6)


def test_packed_positions_and_chunks():
    variant, position = llama_batch.packed_positions(4, np.array([0, 2, 3]))
    assert variant.tolist() == [0, 0, 0, 0, 1, 1, 2] and position.tolist() == [0, 1, 2, 3, 2, 3, 3]
    assert llama_batch.chunk_variants(4, np.array([0, 1, 2, 3]), rows=5) == [slice(0, 1), slice(1, 3), slice(3, 4)]
    assert llama_batch.chunk_variants(4, np.array([0, 0]), rows=2) == [slice(0, 1), slice(1, 2)]  # one variant over the limit
