"""Every analysis × every model kind × every surface: print which arrays agree, and why a cell
does not apply.

    .venv/bin/python scripts/analysis_matrix.py            # toy, tiny GPT-2 folder, tiny Qwen3 GGUF
    .venv/bin/python scripts/analysis_matrix.py --real     # and MiniLM, e5, SmolLM2 (installed ones)

The surfaces are the three a user meets: the window's panels (the app/jobs adapter each panel
draws, computed as the worker computes it), ``./run export`` (the command line, in this process)
and File → Export data (the worker job the menu submits). Each is compared with the engine's own
result (engine.analysis.table.run_analysis) within 1e-6, with and without two heads switched off
and with and without by-words; decoders are asked for the attribution and the lens grid of ANSWER.
tests/engine/analysis/test_analysis_matrix.py runs the same cells.
"""
from __future__ import annotations

import argparse
import contextlib
import io
import os
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

FAMILIES = ROOT / "tests" / "fixtures" / "families"
TOLERANCE = 1e-6
SURFACES = ("window", "export", "export data")
# model kind → (registry name or file, text); the files are registered on first use
MODELS = {
    "toy": ("toy", "the cat sat on the mat"),
    "gpt2 folder": (FAMILIES / "gpt2", " the cat sat on the mat"),
    "qwen3 gguf": (FAMILIES / "qwen3.gguf", " the cat sat on the mat"),
    "minilm": ("minilm", "The animal didn't cross the street because it was too tired."),
    "e5": ("e5", "小明喜欢苹果"),
    # six tokens, "Eiffel" two of them (by words differs from by pieces): each lens grid and logit lens reads
    # every layer × token against the 49,152-token vocabulary, sixteen of them a cell (the nine-token prompt
    # of the patching tests cost half as much again)
    "smollm2": ("smollm2", "The Eiffel Tower is in"),
}
FAST = ("toy", "gpt2 folder", "qwen3 gguf")
ANSWER = " the"  # the decoders' answer token: direct logit attribution and the lens grid read it


@dataclass(frozen=True)
class Cell:
    model: str  # a key of MODELS
    analysis: str  # a name of engine.analysis.table.ANALYSES
    surface: str  # one of SURFACES
    ablated: bool
    by_words: bool
    status: str  # "same", "differs", "missing", "n/a"
    detail: str  # the largest difference, or the one-line reason


def registry_name(kind: str) -> str:
    from engine.models import register_folder, register_gguf

    source, _ = MODELS[kind]
    if isinstance(source, Path):
        return register_folder(source) if source.is_dir() else register_gguf(source)
    return source


def switched_off(facts) -> frozenset:
    """Two heads: (0, 1) and the last layer's head 0 (the toy's one layer: heads 0 and 1)."""
    return frozenset({(0, 1), (facts.layers - 1, 0)}) if facts.layers > 1 else frozenset({(0, 0), (0, 1)})


def _toy_config(text: str):
    from engine import AttentionConfig

    return AttentionConfig(text=text)


def model_of(name: str, text: str):
    """The model a surface reads: the window's cache for a pretrained one, the toy with its settings."""
    from engine.models import model_info
    from engine.models.toy import ToyModel

    from app.jobs import trained

    return ToyModel(_toy_config(text)) if model_info(name).configurable else trained.model(name)


def engine_results(model, request) -> dict:
    """name → the engine's result (or NotApplicable), from a whole run of the request."""
    from engine.analysis.runs import Runs
    from engine.analysis.table import run_all

    runs = Runs(model, request)
    if model.facts.capabilities.kv_cache:  # a whole run, as the command line makes it
        trace = model.run(request.text, ablate=request.ablate, use_cache=False)
        plain = model.run(request.text, use_cache=False) if request.ablate else None
        runs = Runs(model, request, trace=trace, plain=plain)
    return run_all(model, runs=runs)


def window_arrays(name: str, request) -> dict:
    """name → {key: array} of what the window's panels draw (the adapters' outputs), or a str reason."""
    from engine.models import model_info

    from app.jobs import decoder_view, trained
    from app.jobs.analysis_job import with_analysis
    from app.jobs.snapshot import take_snapshot
    from app.pretrained import take_pretrained_snapshot

    if model_info(name).configurable:
        snapshot = take_snapshot(_toy_config(request.text), by_words=request.by_words, ablate=request.ablate)
    else:
        trained.shown_traces.pop(name, None)  # a whole run, not the prefix of an earlier one
        snapshot = take_pretrained_snapshot(name, request.text, 0, None, request.by_words, request.ablate)
    analysis = with_analysis(snapshot).analysis  # a decoder's: the job the window submits when a view reads them
    out = {}
    for key, attribute in (("value_norms", "value_norms"), ("rollout", "rollout"), ("value_rollout", "value_rollout"),
                           ("head_stats", "head_stats"), ("ablation_cosines", "cosines")):
        value = getattr(analysis, attribute)
        out[key] = {key: value} if value is not None else str(analysis.reason(key))
    view = snapshot.bert
    decoder = view is not None and view.next_token_logits is not None
    if decoder:
        out["attention_sink"] = {"attention_sink": view.sink}
        out["cosine_to_layer0"] = {"cosine_to_layer0": view.cosine_to_layer0}
        bars = view.next_bars
        out["next_token"] = {"next_token_top_ids": np.asarray(bars["ids"]),
                             "next_token_top_probabilities": np.asarray(bars["probabilities"])}
        lens = decoder_view.logit_lens(name, view.trace, -1, 5)["lens"]
        out["logit_lens"] = {"logit_lens_top_ids": lens.top_ids, "logit_lens_top_probabilities": lens.top_probabilities,
                             "logit_lens_final_probability": lens.final_probability}
    else:
        reason = "drawn for decoders only (the layers panel's decoder view)" if view is not None else \
            "the toy engine has one layer"
        for key in ("attention_sink", "cosine_to_layer0", "next_token", "logit_lens"):
            out[key] = reason
    if decoder:  # the Attribution dock's worker task
        from app.jobs.attribution import attribution_task

        shown = attribution_task(_NeverInterrupted(), name, request)
        out["dla"] = shown.dla.arrays()
        out["lens_grid"] = shown.grid.arrays() if shown.grid is not None else "the lens grid was not asked for"
    else:
        for key in ("dla", "lens_grid"):
            out[key] = "the Attribution dock reads decoders only"
    if snapshot.words is not None:  # the layer shown (0) by words
        words = snapshot.words
        out["words"] = {"words": np.array(words.words, dtype=str), "word_index": words.word_index,
                        "word_attentions": words.weights}  # (heads, w, w) of layer 0
    else:
        out["words"] = "the window shows pieces (By words is off)"
    return out


class _NeverInterrupted:
    """A worker task's state for a task run here, in this thread."""

    def is_interruption_requested(self) -> bool:
        return False


def export_arrays(name: str, request, folder: Path) -> dict:
    """{key: array} of ``./run export --model name --text … [--ablate …] [--by words]`` (this process)."""
    from cli import commands as cli

    out = folder / "export.npz"
    args = ["main.py", "export", "--model", name, "--text", request.text, "--out", str(out)]
    if request.ablate:
        args += ["--ablate", ",".join(f"{l}.{h}" for l, h in sorted(request.ablate))]
    if request.by_words:
        args += ["--by", "words"]
    if request.answer is not None:
        args += ["--dla", "--answer", request.answer]
    if request.lens_grid:
        args += ["--lens-grid"]
    with contextlib.redirect_stdout(io.StringIO()):  # its "wrote …" line
        code = cli.main(args)
    if code != 0:
        raise RuntimeError(f"export failed: {' '.join(args)}")
    with np.load(out) as data:
        return {key: data[key] for key in data.files}


def export_data_arrays(name: str, request, folder: Path) -> dict:
    """{key: array} of File → Export data (the worker job the menu submits)."""
    from app.jobs.trained import export_shown

    out = folder / "export-data.npz"
    export_shown(name, _toy_config(request.text), request, out)
    with np.load(out) as data:
        return {key: data[key] for key in data.files}


def _difference(a: np.ndarray, b: np.ndarray) -> float | None:
    """The largest absolute difference, or None when shapes or kinds differ."""
    a, b = np.asarray(a), np.asarray(b)
    if a.dtype.names or b.dtype.names:
        if a.dtype.names != b.dtype.names or a.shape != b.shape:
            return None
        return max((_difference(a[f], b[f]) or 0.0) for f in a.dtype.names)
    if a.shape != b.shape:
        return None
    if a.dtype.kind in "USO" or b.dtype.kind in "USO":
        return 0.0 if a.tolist() == b.tolist() else float("inf")
    return float(np.max(np.abs(a.astype(np.float64) - b.astype(np.float64)), initial=0.0))


def compare(expected: dict, got: dict, window: bool) -> tuple[str, str]:
    """(status, detail) of one surface's arrays against the engine's."""
    worst = 0.0
    for key, value in expected.items():
        if key not in got:
            return "missing", key
        # the window draws one layer (0) by words: (heads, w, w); a pretrained model's file has every layer
        reference = value[0] if window and key == "word_attentions" and np.ndim(value) == 4 else value
        difference = _difference(reference, got[key])
        if difference is None:
            return "differs", f"{key}: shape {np.shape(got[key])} ≠ {np.shape(reference)}"
        worst = max(worst, difference)
    return ("same" if worst <= TOLERANCE else "differs"), f"{worst:.1e}"


def cells(kind: str, folder: Path) -> list[Cell]:
    """Every cell of one model kind: analyses × surfaces × {plain, two heads off} × {pieces, words}."""
    from engine.analysis.request import NotApplicable, RunRequest
    from engine.analysis.table import ANALYSES

    name = registry_name(kind)
    _, text = MODELS[kind]
    model = model_of(name, text)
    found = []
    for ablated in (False, True):
        for by_words in (False, True):
            decoder = model.facts.capabilities.next_token_logits  # an answer to attribute, a lens grid
            request = RunRequest(text=text, ablate=switched_off(model.facts) if ablated else frozenset(),
                                 by_words=by_words, answer=ANSWER if decoder else None, lens_grid=decoder)
            results = engine_results(model, request)
            surfaces = {"window": window_arrays(name, request), "export": export_arrays(name, request, folder),
                        "export data": export_data_arrays(name, request, folder)}
            for row in ANALYSES:
                result = results[row.name]
                for surface, arrays in surfaces.items():
                    if isinstance(result, NotApplicable):
                        keys = [k for k in arrays if k == row.name] if surface == "window" else []
                        found.append(Cell(kind, row.name, surface, ablated, by_words, "n/a", str(result.reason)))
                        continue
                    if surface == "window":
                        shown = arrays[row.name]
                        if isinstance(shown, str):
                            found.append(Cell(kind, row.name, surface, ablated, by_words, "n/a", shown))
                            continue
                        status, detail = compare(result.arrays(), shown, window=True)
                    else:
                        status, detail = compare(result.arrays(), arrays, window=False)
                    found.append(Cell(kind, row.name, surface, ablated, by_words, status, detail))
    return found


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--real", action="store_true", help="also MiniLM, e5 and SmolLM2 (when installed)")
    options = parser.parse_args(argv)
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from engine.models import model_info

    kinds = [k for k in MODELS if k in FAST or (options.real and model_info(MODELS[k][0]).is_installed())]
    bad = 0
    with tempfile.TemporaryDirectory() as folder:
        for kind in kinds:
            for cell in cells(kind, Path(folder)):
                mark = {"same": "ok", "n/a": "--"}.get(cell.status, "XX")
                bad += mark == "XX"
                print(f"{mark} {cell.model:<12} {cell.analysis:<17} {cell.surface:<12} "
                      f"{'2 heads off' if cell.ablated else 'all heads':<12} {'words' if cell.by_words else 'pieces':<7} "
                      f"{cell.detail}")
    print(f"{bad} cells differ")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
