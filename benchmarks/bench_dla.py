"""Benchmark: direct logit attribution (engine/analysis/dla.py) and the logit lens grid
(engine/analysis/lens_grid.py) on SmolLM2 beside one plain forward of the same text (no KV cache),
medians of interleaved rounds in this one process, with the machine's load beside them.

    OPENBLAS_CORETYPE= OPENBLAS_L2_SIZE= python benchmarks/bench_dla.py [--rounds 5] [--tokens 32]

The attribution is one forward that keeps the hook points it reads (run_with_cache) and then a few
dot products per layer; the grid reads (layers + 1) · n residual rows through the 49,152-token
unembedding: (layers + 1) · n · d · vocab multiply-adds, about six forwards' worth for SmolLM2; the
last line times those products alone, the floor of any grid that gives the same cells.
Targets: ≤ 1.5 × one forward each.
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench_common import blas_kernels, cpu_name, text_of  # noqa: E402
from engine.analysis.dla import logit_attribution  # noqa: E402
from engine.analysis.lens_grid import lens_grid  # noqa: E402
from engine.analysis.request import RunRequest  # noqa: E402
from engine.analysis.runs import Runs  # noqa: E402
from engine.models import load_model  # noqa: E402


def timed(function) -> float:
    start = time.perf_counter()
    function()
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--tokens", type=int, default=32)
    args = parser.parse_args()
    print(f"{cpu_name()}; {blas_kernels()}; {args.rounds} rounds, medians; load {os.getloadavg()[0]:.2f}")
    model = load_model("smollm2")
    text = text_of(model, args.tokens)
    n = len(model.tokenize(text).tokens)
    request = RunRequest(text=text, answer=" the", lens_grid=True)
    trace = model.run(text, use_cache=False)
    rows = trace.hidden_states.reshape(-1, trace.hidden_states.shape[-1])  # ((layers + 1) · n, d)
    forwards, attributions, grids, products = [], [], [], []
    for _ in range(args.rounds):
        forwards.append(timed(lambda: model.run(text, use_cache=False)))
        attributions.append(timed(lambda: logit_attribution(model, request, Runs(model, request))))
        runs = Runs(model, request, trace=model.run(text, use_cache=False))  # the grid reads a run the window holds
        grids.append(timed(lambda: lens_grid(model, request, runs)))
        # the floor of any grid with the same cells: the (layers + 1) · n rows through the unembedding,
        # 256 at a time as the grid reads them, and nothing else
        products.append(timed(lambda: [model.residual_logits(rows[start:start + 256]) for start in range(0, len(rows), 256)]))
    forward = statistics.median(forwards) * 1e3
    print(f"SmolLM2, {n} tokens: forward {forward:.1f} ms")
    for name, times in (("attribution (its own cached run)", attributions), ("lens grid (of a held run)", grids),
                        ("its unembedding products alone", products)):
        median = statistics.median(times) * 1e3
        print(f"  {name:<34} {median:8.1f} ms  {median / forward:5.2f}× forward")
    print(f"load after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
