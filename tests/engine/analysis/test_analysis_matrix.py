"""Every analysis × model kind × surface (the window's panels, ``./run export``, File → Export
data): the same arrays as the engine's own result within 1e-6, with and without two heads switched
off and by words, and a one-line reason where a cell does not apply (scripts/analysis_matrix.py
prints the same matrix). The real models' rows are slow; the toy and two tiny files run always."""
from __future__ import annotations

import importlib.util
import sys

import numpy as np
import pytest

from tests import ROOT
from engine.analysis.request import NotApplicable, RunRequest
from engine.analysis.table import ANALYSES, run_all

pytest.importorskip("gguf")
pytest.importorskip("tokenizers")

_spec = importlib.util.spec_from_file_location(
    "analysis_matrix", ROOT / "scripts" / "analysis_matrix.py")
matrix = importlib.util.module_from_spec(_spec)
sys.modules["analysis_matrix"] = matrix  # its dataclasses look their module up there
_spec.loader.exec_module(matrix)

REAL = ("minilm", "e5", "smollm2")
KINDS = [pytest.param(kind, marks=pytest.mark.slow) if kind in REAL else kind for kind in matrix.MODELS]
_cells: dict = {}


def export_from_held_models(export_arrays):
    """matrix.export_arrays whose ``./run export`` (in this process) reads the weights of the model this
    process already holds (the window's cache, read from the same file) instead of a second copy from disk
    (SmolLM2: 2.6 s of CPU a load, four exports a cell; e5 1.5 s). An encoder keeps nothing between runs:
    the held one. A GGUF decoder keeps its last trace as the next run's KV cache (a shared SmolLM2 gave the
    export by words a value_norms 5.5e-5 off a whole run's): a new Decoder on the same arrays, as
    load_gguf builds it, with no trace yet. Patched around the export only (the cache loads through it)."""
    from engine.models import ModelEntry, cache
    from engine.models.decoder import Decoder

    load_from_disk = ModelEntry.load

    def load(entry, progress=None):
        if entry.name in cache.loaded_models():
            held = cache.model(entry.name)
            if not held.facts.capabilities.kv_cache:
                return held
            if type(held) is Decoder and str(held.path).endswith(".gguf"):
                return Decoder(held.config, held.weights, held.tokenizer, held.path, held.sha256,
                               special_tokens=held.facts.special_tokens)
        return load_from_disk(entry, progress)

    def export(*args, **kwargs):
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(ModelEntry, "load", load)
            return export_arrays(*args, **kwargs)

    return export


@pytest.fixture(scope="module")
def cells_of(tmp_path_factory):
    """kind → its cells, each kind's made once for the module (the registry keeps its files meanwhile)."""
    from engine.models import model_info

    def make(kind: str):
        if kind not in _cells:
            source = matrix.MODELS[kind][0]
            if isinstance(source, str) and not model_info(source).is_installed():
                pytest.skip(f"{source} is not installed")
            with pytest.MonkeyPatch.context() as patch:
                patch.setattr(matrix, "export_arrays", export_from_held_models(matrix.export_arrays))
                _cells[kind] = matrix.cells(kind, tmp_path_factory.mktemp(kind.replace(" ", "-")))
        return _cells[kind]

    return make


@pytest.mark.parametrize("kind", KINDS)
def test_every_surface_gives_the_engines_arrays_or_says_why(cells_of, kind):
    cells = cells_of(kind)
    assert len(cells) == len(ANALYSES) * len(matrix.SURFACES) * 4  # plain / heads off × pieces / words
    wrong = [c for c in cells if c.status not in ("same", "n/a")]
    assert not wrong, "\n".join(f"{c.analysis} {c.surface} off={c.ablated} words={c.by_words}: {c.status} "
                                f"{c.detail}" for c in wrong)
    for cell in cells:
        if cell.status == "n/a":  # one line, saying something
            assert cell.detail.strip() and "\n" not in cell.detail, cell
    # what every kind computes somewhere: the four arrays of what attention moves, on every surface
    for name in ("value_norms", "rollout", "value_rollout", "head_stats"):
        assert all(c.status == "same" for c in cells if c.analysis == name), name
    # switched-off heads' effect: on every surface exactly when heads are off
    effect = [c for c in cells if c.analysis == "ablation_cosines"]
    assert all((c.status == "same") == c.ablated for c in effect)
    # the attribution and the lens grid: on every surface for decoders (asked with an answer), nowhere else
    attribution = [c for c in cells if c.analysis in ("dla", "lens_grid")]
    assert all((c.status == "same") == (kind in ("gpt2 folder", "qwen3 gguf", "smollm2")) for c in attribution)


def _export_keys(kind: str, tmp_path, ablated: bool, by_words: bool) -> set:
    name = matrix.registry_name(kind)
    text = matrix.MODELS[kind][1]
    model = matrix.model_of(name, text)
    request = RunRequest(text=text, ablate=matrix.switched_off(model.facts) if ablated else frozenset(),
                         by_words=by_words)
    return set(export_from_held_models(matrix.export_arrays)(name, request, tmp_path))


def test_decoders_of_two_files_export_the_same_arrays(tmp_path):
    """Every array an analysis exports for one decoder it exports for another (a folder, a GGUF file)."""
    for ablated in (False, True):
        folder = _export_keys("gpt2 folder", tmp_path, ablated, False)
        gguf = _export_keys("qwen3 gguf", tmp_path, ablated, False)
        assert folder == gguf
        assert {"value_norms", "rollout", "head_stats", "logit_lens_top_ids", "next_token_top_ids"} <= folder
        assert ("ablation_cosines" in folder) == ablated and ("ablated_heads" in folder) == ablated


@pytest.mark.slow
def test_encoders_export_the_same_arrays(tmp_path, minilm_model, e5_model):
    for ablated in (False, True):
        assert _export_keys("minilm", tmp_path, ablated, False) == _export_keys("e5", tmp_path, ablated, False)


@pytest.mark.slow
def test_smollm2_exports_what_the_tiny_decoders_export(tmp_path, smollm2_model):
    assert _export_keys("smollm2", tmp_path, True, False) == _export_keys("qwen3 gguf", tmp_path, True, False)


def test_switched_off_heads_change_the_arrays_the_cells_compare():
    """The matrix compares runs with heads off: they must differ from the plain run's, or a surface that
    ignored the heads would pass."""
    from engine.models.toy import ToyModel

    model = ToyModel(matrix._toy_config("the cat sat on the mat"))
    plain = run_all(model, RunRequest(text="the cat sat on the mat"))
    off = run_all(model, RunRequest(text="the cat sat on the mat", ablate=frozenset({(0, 0), (0, 1)})))
    assert not off["value_norms"].value_norms[0, :2].any() and plain["value_norms"].value_norms[0, :2].any()
    assert not np.allclose(off["rollout"].rollout, plain["rollout"].rollout)
    assert isinstance(plain["ablation_cosines"], NotApplicable)
