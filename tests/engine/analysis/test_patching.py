"""Activation patching (engine.analysis.patching, ./run patch) against the same patches done with
transformers' forward hooks on SmolLM2 (tests/fixtures/patch_reference.npz, made by
scripts/make_patch_reference.py), and the prompts' bad input."""
from __future__ import annotations

import json

import numpy as np
import pytest

from tests import FIXTURES
from engine.analysis import patching
from engine.core.errors import EngineError

pytestmark = pytest.mark.slow  # a real model

FIXTURE = FIXTURES / "patch_reference.npz"
CLEAN = "The Eiffel Tower is in the city of"
CORRUPT = "The Colosseum is in the city of"


@pytest.fixture(scope="module")
def decoder(smollm2_model):
    return smollm2_model  # loaded once per test process (tests/conftest.py)


@pytest.fixture(scope="module")
def reference():
    return np.load(FIXTURE)


@pytest.fixture(scope="module")
def setup(decoder):
    return patching.prepare(decoder, CLEAN, CORRUPT, " Paris")


# Tolerances relative to each reference cell: the probabilities run from 6e-6 to 0.73 (most of the
# attention-output and head cells are below 1e-3, where an absolute 1e-3 passes anything), the logit
# differences from 0.05 to 12. Measured against the fixture: at most 2.1e-5 relative in p(answer),
# 2.4e-5 absolute in a logit difference; a head cell that patched every head of its layer moves
# p(answer) by 0.5 % to 110 % and the logit difference by 0.004 to 0.78.
P_REL = 1e-3


def assert_p_equal(value, expected, where):
    assert value == pytest.approx(expected, rel=P_REL, abs=1e-12), where


def assert_diff_equal(diff, expected, where):
    assert diff == pytest.approx(expected, abs=1e-3), where


def test_setup_matches_transformers(setup, reference):
    np.testing.assert_array_equal(setup.clean.input_ids, reference["ids_clean"])
    np.testing.assert_array_equal(setup.corrupt.input_ids, reference["ids_corrupt"])
    assert setup.answer.id == int(reference["answer_id"]) and setup.other == int(reference["other_id"])
    assert setup.clean_value == pytest.approx(float(reference["clean_p"]), rel=P_REL)
    assert setup.corrupt_value == pytest.approx(float(reference["corrupt_p"]), rel=P_REL)


# cells checked: every layer at the subject's last token and the last position, and a sample elsewhere
# cell by cell (the path encoders take) on a sample across the layers: every cell of the grid is
# checked against the same reference by the batched path in test_whole_grid_and_cancel
RESID_CELLS = [(l, p) for l in (0, 3, 7, 12, 20, 29) for p in (2, 3, 8)] + [(0, 0), (7, 5), (29, 1)]


def test_residual_cells_equal_transformers(setup, reference):
    runner = patching.Runner(setup)
    for layer, p in RESID_CELLS:
        value, diff = runner.measure(runner.resid_pre(layer, p))
        assert_p_equal(value, reference["resid_pre"][layer, p], (layer, p))
        assert_diff_equal(diff, reference["resid_pre_logit_diff"][layer, p], (layer, p))
    # the fixture shows the known picture: the subject early, the last token late
    assert reference["resid_pre"][3, 2] > 0.3 and reference["resid_pre"][29, 8] > 0.3


@pytest.mark.parametrize("grid", ["attn_out", "mlp_out"])
def test_component_cells_equal_transformers(setup, reference, grid):
    runner = patching.Runner(setup)
    for layer, p in [(0, 2), (3, 3), (10, 8), (20, 8), (29, 8), (15, 2)]:
        value, diff = runner.measure(runner.row_point(grid, layer, p))
        assert_p_equal(value, reference[grid][layer, p], (grid, layer, p))
        assert_diff_equal(diff, reference[f"{grid}_logit_diff"][layer, p], (grid, layer, p))


def test_head_cells_equal_transformers(setup, reference):
    runner = patching.Runner(setup)
    for layer, head in [(0, 0), (12, 4), (20, 2), (25, 8), (29, 3)]:
        value, diff = runner.measure(runner.head(layer, head))
        assert_p_equal(value, reference["head_z"][layer, head], (layer, head))
        assert_diff_equal(diff, reference["head_z_logit_diff"][layer, head], (layer, head))


@pytest.mark.parametrize("grid", ["attn_out", "mlp_out", "head_z"])
def test_batched_rows_equal_transformers(setup, reference, grid):
    """Whole rows of every grid by the layer batches (the path a decoder's grid takes), values and
    logit differences: three layers a grid (a row at layer l reruns layers l … 29: the whole grids
    cost minutes; every cell of the batches is checked against hooked runs in test_patch_batch.py)."""
    for layer in (2, 16, 29):
        row = patching.patch_row(setup, grid, layer)
        assert row.complete
        np.testing.assert_allclose(row.values, reference[grid][layer], rtol=P_REL, atol=1e-12, err_msg=str(layer))
        np.testing.assert_allclose(row.diffs, reference[f"{grid}_logit_diff"][layer], atol=1e-3, rtol=0,
                                   err_msg=str(layer))


@pytest.fixture(scope="module")
def resid_grid(setup):
    """The whole residual grid of CLEAN → CORRUPT, computed once (the longest run of this file)."""
    return patching.patch(setup, grids=("resid_pre",))


def test_whole_grid_and_cancel(setup, reference, resid_grid):
    result = resid_grid
    np.testing.assert_allclose(result.grids["resid_pre"], reference["resid_pre"], rtol=P_REL, atol=1e-12)
    np.testing.assert_allclose(result.logit_diffs["resid_pre"], reference["resid_pre_logit_diff"], atol=1e-3, rtol=0)
    seen = []
    partial = patching.patch(setup, grids=("head_z",), progress=lambda d, t: seen.append((d, t)),
                             cancelled=lambda: len(seen) >= 5)
    from engine.core.parallel import THREADS

    # a decoder runs a layer batch (the 9 heads of a layer) at a time on the engine's threads: progress
    # after each batch, and one batch already started on another thread may still finish
    assert patching.batched(setup)
    finite = np.isfinite(partial.grids["head_z"])
    assert not partial.complete and 5 <= finite.all(axis=1).sum() <= 5 + THREADS - 1
    assert (finite.all(axis=1) | ~finite.any(axis=1)).all()  # whole layers only, never part of one
    assert seen[-1][1] == 30 * 9 and [d for d, _ in seen] == list(range(9, 9 * len(seen) + 1, 9))
    assert not bool(partial.arrays()["complete"])


def test_different_token_counts_name_both(decoder):
    with pytest.raises(EngineError) as caught:
        patching.prepare(decoder, CLEAN, "The Statue of Liberty in New York is in the city of", " Paris")
    message = str(caught.value)
    assert "clean 9" in message and "corrupted 1" in message and " Liberty" in message and "\n" not in message


def test_bad_prompts(decoder):
    with pytest.raises(EngineError, match="clean prompt is empty"):
        patching.prepare(decoder, "  ", CORRUPT, " Paris")
    with pytest.raises(EngineError, match=r"^20\d\d tokens is more than 128"):  # refused before any run
        patching.prepare(decoder, "a " * 2000, "b " * 2000, " Paris")
    with pytest.raises(EngineError, match="needs an answer"):
        patching.prepare(decoder, CLEAN, CORRUPT, None)
    setup = patching.prepare(decoder, CLEAN, CORRUPT, " Parisians")
    assert setup.answer.pieces > 1 and "first" in setup.answer.note


def test_encoder_cosine(minilm):
    clean = "The animal didn't cross the street because it was too tired."
    corrupt = "The animal didn't cross the street because it was too wide."
    setup = patching.prepare(minilm, clean, corrupt, position=10)
    assert setup.measure == "cosine" and setup.clean_value == 1.0 and setup.corrupt_value < 1.0
    runner = patching.Runner(setup)
    # patching the whole differing token's residual at layer 0 restores position 10 completely
    # (everything else is identical): an independent check of the plumbing
    value, _ = runner.measure(runner.resid_pre(0, 13))
    assert value == pytest.approx(1.0, abs=1e-6)
    value, _ = runner.measure(runner.resid_pre(0, 2))  # a token that is the same in both: nothing changes
    assert value == pytest.approx(setup.corrupt_value, abs=1e-6)


def test_cli_patch_npz_json_and_errors(tmp_path, decoder, reference, capsys, resid_grid, monkeypatch):
    from cli.commands import main

    # the grid is computed once for this file: the command gets it when it asks for exactly that run
    # (a command that swapped the prompts, lost the answer or asked for other grids computes its own)
    asked = []
    real = patching.activation_patching

    def known(model, request, corrupt, grids, **options):
        asked.append((request.text, corrupt, request.answer, tuple(grids), request.ablate))
        if asked[-1] == (CLEAN, CORRUPT, " Paris", ("resid_pre",), frozenset()) and not options:
            return resid_grid
        return real(model, request, corrupt, grids, **options)

    monkeypatch.setattr(patching, "activation_patching", known)
    out = tmp_path / "p.npz"
    code = main(["run", "patch", "--model", "smollm2", "--clean", CLEAN, "--corrupt", CORRUPT, "--answer", " Paris",
                 "--grids", "resid_pre", "--out", str(out)])
    assert code == 0
    with np.load(out) as data:
        np.testing.assert_allclose(data["resid_pre"], reference["resid_pre"], rtol=P_REL, atol=1e-12)
        np.testing.assert_allclose(data["resid_pre_logit_diff"], reference["resid_pre_logit_diff"], atol=1e-3, rtol=0)
        assert list(data["tokens"])[2] == "iffel" and float(data["clean_p"]) > 0.5
    code = main(["run", "patch", "--model", "smollm2", "--clean", CLEAN, "--corrupt", "The Statue of Liberty is here",
                 "--answer", " Paris", "--out", str(tmp_path / "x.npz")])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and "clean 9" in err and not (tmp_path / "x.npz").exists()


HEADS_OFF = frozenset((0, h) for h in range(5))  # heads 0.0 … 0.4


def _hooked(decoder, name, replace, ablate):
    """p(" Paris") of the corrupted prompt from the embeddings, heads ``ablate`` off, one hook."""
    trace = decoder.run_with_hooks(CORRUPT, [(name, replace)], ablate=ablate)
    return float(softmax64(trace.next_token_logits)[decoder.tokenize(" Paris").input_ids[0]])


def softmax64(logits):
    z = np.asarray(logits, dtype=np.float64)
    z = np.exp(z - z.max())
    return z / z.sum()


def test_heads_off_equal_the_ablated_runs(decoder, monkeypatch):
    """With heads switched off every patched run has them off: clean and corrupted are the ablated
    runs' p(answer), each cell a hooked run of the corrupted prompt with the same heads off."""
    from engine.analysis.request import RunRequest

    request = RunRequest(text=CLEAN, ablate=HEADS_OFF, answer=" Paris")
    # the request as the window and the command line hand it over; of its grid, the rows checked
    # below (the whole head grid is 30 layer batches: most of this test's time, for 3 rows' worth)
    made = []
    monkeypatch.setattr(patching, "patch", lambda setup, grids, **options: made.append((setup, grids)))
    patching.activation_patching(decoder, request, CORRUPT, grids=("head_z",))
    (s, grids), = made
    assert grids == ("head_z",)
    head_rows = {layer: patching.patch_row(s, "head_z", layer).values for layer in (0, 12, 29)}
    answer = decoder.tokenize(" Paris").input_ids[0]
    clean = float(softmax64(decoder.run(CLEAN, ablate=HEADS_OFF, use_cache=False).next_token_logits)[answer])
    corrupt = float(softmax64(decoder.run(CORRUPT, ablate=HEADS_OFF, use_cache=False).next_token_logits)[answer])
    plain = float(softmax64(decoder.run(CLEAN, use_cache=False).next_token_logits)[answer])
    assert s.clean_value == pytest.approx(clean, abs=1e-6) and s.corrupt_value == pytest.approx(corrupt, abs=1e-6)
    assert abs(clean - plain) > 0.05  # the heads matter: the comparison is not vacuous
    names = [f"blocks.{l}.attn.hook_z" for l in (0, 12, 29)] + [f"blocks.{l}.hook_resid_pre" for l in (3, 20)]
    _, cache = decoder.run_with_cache(CLEAN, names, ablate=HEADS_OFF)

    def head(layer, h):
        def replace(z, _name):
            z = z.copy()
            z[:, h] = cache[f"blocks.{layer}.attn.hook_z"][:, h]
            return z
        return replace

    for layer, h in ((0, 1), (0, 6), (12, 4), (29, 3)):
        expected = _hooked(decoder, f"blocks.{layer}.attn.hook_z", head(layer, h), HEADS_OFF)
        assert_p_equal(head_rows[layer][h], expected, (layer, h))
    assert head_rows[0][1] == pytest.approx(corrupt, abs=1e-5)  # a head that is off stays off
    for layer, p in ((3, 2), (20, 8)):  # residual cells, one grid row as the window's task runs it
        row = patching.patch_row(s, "resid_pre", layer)

        def resid(array, _name, layer=layer, p=p):
            array = array.copy()
            array[p] = cache[f"blocks.{layer}.hook_resid_pre"][p]
            return array

        expected = _hooked(decoder, f"blocks.{layer}.hook_resid_pre", resid, HEADS_OFF)
        assert_p_equal(row.values[p], expected, (layer, p))
