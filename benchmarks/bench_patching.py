"""Benchmark: activation patching and attention flow, each beside its reference, in one run.

    python benchmarks/bench_patching.py                       # needs /work/refvenv for the references
    python benchmarks/bench_patching.py --reference-python /path/to/python --flow-tokens 32

1. A 16-token residual-stream grid on SmolLM2-135M (30 layers × 16 positions = 480 patched runs,
   p(" Paris") at the last position): engine.analysis.patching (one layer batch at a time,
   engine.models.llama_batch: the 16 positions' variants packed, positions before the patch copied)
   — and, with ``--cells``, the same grid cell by cell (the previous way) — against transformers' forward pre-hooks doing the same 480 full
   runs (scripts/make_patch_reference.py's Patcher, torch on 2 threads) in a child process with
   the reference Python. The two grids are compared cell by cell.
2. Attention flow on MiniLM's attentions of the first ``--flow-tokens`` tokens (32 and 64 by default;
   6 layers): engine.analysis.flow (exact push-relabel, all pairs batched) against networkx's
   maximum_flow_value per pair (the paper's own method) in the reference Python; both results
   compared. Above 1,024 pairs (32 tokens) networkx runs a fixed random sample of 256 and its time for all pairs is
   extrapolated (said so in the line).
Times are wall-clock seconds of one run each; the machine's load is printed beside them.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

CLEAN = "The famous Eiffel Tower, built long ago, is found in the city of"  # 16 tokens
CORRUPT = "The famous Colosseum, built long ago, is found in the city of"  # 16 tokens
ANSWER = " Paris"
FLOW_TEXT = ("The animal didn't cross the street because it was too tired, and the cat that sat on the warm "
             "mat by the door watched it all day long while the rain kept falling on the quiet town below and the "
             "children played inside with their old toys near the warm fire of the small house, until the evening "
             "came and everyone went to sleep")  # > 64 pieces

REFERENCE_PATCH = r"""
import sys, time, json, numpy as np
sys.path.insert(0, sys.argv[1] + "/scripts")
from pathlib import Path
import make_patch_reference as ref
tokenizer, model = ref.load(Path(ref.DEFAULT_GGUF))
clean = tokenizer(sys.argv[2], return_tensors="pt")["input_ids"]
corrupt = tokenizer(sys.argv[3], return_tensors="pt")["input_ids"]
answer = tokenizer(sys.argv[4])["input_ids"][0]
patcher = ref.Patcher(model, clean, corrupt, answer)
n, layers = clean.shape[1], len(patcher.layers)
grid = np.zeros((layers, n))
start = time.perf_counter()
for l in range(layers):
    for p in range(n):
        grid[l, p] = patcher.resid_pre(l, p)[0]
seconds = time.perf_counter() - start
np.save(sys.argv[5], grid)
print(json.dumps({"seconds": seconds, "n": n}))
"""

REFERENCE_FLOW = r"""
import sys, time, json, numpy as np
sys.path.insert(0, sys.argv[1] + "/scripts")
import make_flow_reference as ref
import networkx as nx
attentions = np.load(sys.argv[2])
pairs = np.load(sys.argv[4])  # (P, 2) [i, j] pairs to compute: all of them, or a sample
graph, layers, n = ref.flow_graph(attentions)
flows = np.zeros(len(pairs))
start = time.perf_counter()
for index, (i, j) in enumerate(pairs):
    flows[index] = nx.maximum_flow_value(graph, (0, int(j)), (layers, int(i)))
seconds = time.perf_counter() - start
np.save(sys.argv[3], flows)
print(json.dumps({"seconds": seconds, "networkx": nx.__version__}))
"""

NETWORKX_PAIRS = 1024  # above this many pairs (32 tokens), networkx runs a random sample of 256 and its time is extrapolated


def load_line() -> str:
    try:
        return "load average " + " ".join(f"{x:.1f}" for x in os.getloadavg())
    except OSError:
        return ""


def bench_patching(python: str | None, cells: bool = False) -> None:
    from engine.analysis import patching
    from engine.models import load_model

    model = load_model("smollm2")
    setup = patching.prepare(model, CLEAN, CORRUPT, ANSWER)
    n = setup.n
    start = time.perf_counter()
    ours = patching.patch(setup, grids=("resid_pre",)).grids["resid_pre"]
    seconds = time.perf_counter() - start
    print(f"patching: {setup.layers} × {n} residual grid on SmolLM2, ours {seconds:.2f} s ({load_line()})")
    if cells:
        values = {"resid_pre": np.full((setup.layers, n), np.nan)}
        start = time.perf_counter()
        patching._run_cells(setup, patching.cells(setup, ("resid_pre",)), values, {"resid_pre": values["resid_pre"].copy()})
        print(f"patching: the same grid cell by cell (before the layer batches) {time.perf_counter() - start:.2f} s; "
              f"largest cell difference {np.abs(values['resid_pre'] - ours).max():.2e} ({load_line()})")
    if python:
        with tempfile.TemporaryDirectory() as folder:
            out = Path(folder) / "grid.npy"
            done = subprocess.run([python, "-c", REFERENCE_PATCH, str(ROOT), CLEAN, CORRUPT, ANSWER, str(out)],
                                  capture_output=True, text=True, check=True)
            info = json.loads(done.stdout.strip().splitlines()[-1])
            theirs = np.load(out)
        print(f"patching: transformers forward pre-hooks, same grid, {info['seconds']:.2f} s; "
              f"largest cell difference {np.abs(ours - theirs).max():.2e} ({load_line()})")


def bench_flow(python: str | None, tokens: int) -> None:
    from engine.analysis.flow import attention_flow
    from engine.models import load_model

    trace = load_model("minilm").run(FLOW_TEXT)
    attentions = np.asarray(trace.attentions)[:, :, :tokens, :tokens].astype(np.float32).astype(np.float64)
    attentions /= attentions.sum(axis=-1, keepdims=True)  # the first `tokens` rows and columns, renormalised
    n = attentions.shape[-1]
    start = time.perf_counter()
    ours = attention_flow(attentions)
    seconds = time.perf_counter() - start
    print(f"flow: {n} tokens × {attentions.shape[0]} layers, ours {seconds:.2f} s ({load_line()})")
    if python:
        every = np.array([(i, j) for i in range(n) for j in range(n)])
        sample = every if len(every) <= NETWORKX_PAIRS else every[
            np.sort(np.random.default_rng(0).choice(len(every), 256, replace=False))]
        with tempfile.TemporaryDirectory() as folder:
            source, out, pairs = Path(folder) / "att.npy", Path(folder) / "flow.npy", Path(folder) / "pairs.npy"
            np.save(source, attentions)
            np.save(pairs, sample)
            done = subprocess.run([python, "-c", REFERENCE_FLOW, str(ROOT), str(source), str(out), str(pairs)],
                                  capture_output=True, text=True, check=True)
            info = json.loads(done.stdout.strip().splitlines()[-1])
            theirs = np.load(out)
        difference = np.abs(ours[sample[:, 0], sample[:, 1]] - theirs).max()
        if len(sample) == len(every):
            print(f"flow: networkx {info['networkx']} maximum_flow_value per pair {info['seconds']:.2f} s; "
                  f"largest difference {difference:.2e} ({load_line()})")
        else:
            whole = info["seconds"] * len(every) / len(sample)
            print(f"flow: networkx {info['networkx']} maximum_flow_value on {len(sample)} random pairs of {len(every)} "
                  f"{info['seconds']:.2f} s → ~{whole:.0f} s for all (extrapolated); largest difference on those pairs "
                  f"{difference:.2e} ({load_line()})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reference-python", default="/work/refvenv/bin/python" if Path("/work/refvenv/bin/python").exists() else None)
    parser.add_argument("--flow-tokens", type=int, nargs="+", default=[32, 64])
    parser.add_argument("--cells", action="store_true", help="patching: also time the grid cell by cell")
    parser.add_argument("--skip", choices=("patching", "flow"), action="append", default=[])
    args = parser.parse_args()
    if "patching" not in args.skip:
        bench_patching(args.reference_python, args.cells)
    if "flow" not in args.skip:
        for tokens in args.flow_tokens:
            bench_flow(args.reference_python, tokens)


if __name__ == "__main__":
    main()
