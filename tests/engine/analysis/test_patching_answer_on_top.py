"""Activation patching when the corrupted run already predicts the answer: the logit difference's
other token is then the corrupted run's runner-up, never the answer itself (which would make every
difference 0). Every cell of every grid is checked against a run of the corrupted prompt with that
one activation replaced through the model's hooks, its logits read in float64 here, on tiny GGUF
decoders (llama and qwen2), the grids run in layer batches and, as for a block that declares none,
cell by cell through the hooks."""
from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("gguf")
pytest.importorskip("tokenizers")

from engine.analysis import patching  # noqa: E402
from engine.models.smollm2 import load_gguf  # noqa: E402
from tests.tiny_gguf import write_tiny_gguf  # noqa: E402

CLEAN, CORRUPT = " the cat sat", " cat the sat"  # the same five tokens, two swapped


def logits64(trace) -> np.ndarray:
    return np.asarray(trace.next_token_logits, dtype=np.float64)


def top_as_answer(tmp_path, architecture):
    """A tiny model and an answer string whose token is the corrupted prompt's most likely one."""
    for seed in range(40):
        path = tmp_path / f"tiny-{architecture}-{seed}.gguf"
        write_tiny_gguf(path, architecture, seed=seed)
        model = load_gguf(path)
        top = int(np.argmax(logits64(model.run(CORRUPT, use_cache=False))))
        answer = model.tokenizer.decode([top])
        ids, _tokens = model.tokenizer.tokens(answer)
        if answer and len(ids) and int(ids[0]) == top:
            return model, answer, top
    pytest.fail("no seed gives a corrupted top token that a string round-trips to")


def replaced_row(source, row):
    def replace(array, _name):
        array = array.copy()
        array[row] = source[row]
        return array
    return replace


def replaced_head(source, head):
    def replace(z, _name):  # z (n, heads, d_head)
        z = z.copy()
        z[:, head] = source[:, head]
        return z
    return replace


@pytest.mark.parametrize("architecture,batches", [("llama", True), ("qwen2", True), ("llama", False)])
def test_the_answer_on_top_of_the_corrupted_run(tmp_path, monkeypatch, architecture, batches):
    model, answer, top = top_as_answer(tmp_path, architecture)
    if not batches:
        monkeypatch.setattr(patching, "batched", lambda setup: False)
    corrupt = logits64(model.run(CORRUPT, use_cache=False))
    clean = logits64(model.run(CLEAN, use_cache=False))
    runner_up = int(np.argsort(-corrupt, kind="stable")[1])
    assert corrupt[top] > corrupt[runner_up]  # a strict top: the case is what it says

    result = patching.activation_patching(model, patching_request(answer), CORRUPT)
    s = result.setup
    assert s.answer.id == top and s.other == runner_up, (s.answer.id, s.other, top, runner_up)
    assert s.corrupt_diff == pytest.approx(corrupt[top] - corrupt[runner_up], rel=1e-6)
    assert s.corrupt_diff > 0
    assert s.clean_diff == pytest.approx(clean[top] - clean[runner_up], rel=1e-6, abs=1e-9)
    assert np.ptp(result.logit_diffs["resid_pre"]) > 1e-3  # the patches move the measure: not a flat grid

    points = {"resid_pre": "hook_resid_pre", "attn_out": "hook_attn_out", "mlp_out": "hook_mlp_out",
              "head_z": "attn.hook_z"}
    layers, n, heads = model.facts.layers, len(s.clean.input_ids), model.facts.heads
    hook_names = [f"blocks.{l}.{point}" for l in range(layers) for point in points.values()]
    _, cache = model.run_with_cache(CLEAN, hook_names)
    for grid, point in points.items():
        columns = heads if grid == "head_z" else n
        assert result.grids[grid].shape == result.logit_diffs[grid].shape == (layers, columns)
        for layer in range(layers):
            name = f"blocks.{layer}.{point}"
            for column in range(columns):
                replace = replaced_head(cache[name], column) if grid == "head_z" else replaced_row(cache[name], column)
                z = logits64(model.run_with_hooks(CORRUPT, [(name, replace)]))
                p = np.exp(z - z.max())
                p /= p.sum()
                where = (grid, layer, column)
                assert result.logit_diffs[grid][layer, column] == pytest.approx(z[top] - z[runner_up], rel=1e-4,
                                                                               abs=1e-6), where
                assert result.grids[grid][layer, column] == pytest.approx(p[top], rel=1e-4, abs=1e-9), where


def patching_request(answer):
    from engine.analysis.request import RunRequest

    return RunRequest(text=CLEAN, answer=answer)
