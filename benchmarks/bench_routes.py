"""Benchmark: information-flow routes beside one forward (SmolLM2, 32 tokens; target ≤ 3×), value
zeroing on MiniLM at 32 tokens (target ≤ 2 s) and the attention flow to one focused token at 64
tokens (target ≤ 300 ms; MiniLM, SmolLM2 beside it), medians of interleaved rounds in this one
process, with the CPU and the load average.

    OPENBLAS_CORETYPE= OPENBLAS_L2_SIZE= python benchmarks/bench_routes.py [--rounds 5]

The forward is the plain run of the window (``model.run(text, use_cache=False)``); routes run the
model once with hooks on every layer and measure every edge (engine/analysis/routes.py).
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
sys.path.insert(0, str(ROOT / "benchmarks"))

from bench_common import TEXT, blas_kernels, cpu_name  # noqa: E402
from engine.analysis.flow import focused_flow  # noqa: E402
from engine.analysis.request import RunRequest  # noqa: E402
from engine.analysis.routes import flow_routes  # noqa: E402
from engine.analysis.value_zeroing import value_zeroing  # noqa: E402
from engine.models import load_model  # noqa: E402


def text_of(model, tokens: int) -> str:
    """The longest prefix of TEXT (repeated) that ``model`` reads as at most ``tokens`` tokens."""
    words = (TEXT * 8).split()
    best = words[0]
    for count in range(1, len(words) + 1):
        text = " ".join(words[:count])
        if len(model.tokenize(text).tokens) > tokens:
            break
        best = text
    return best


def median_ms(function, rounds: int) -> float:
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        function()
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1e3


def measure_routes(smollm2, rounds: int) -> None:
    text = text_of(smollm2, 32)
    n = len(smollm2.tokenize(text).tokens)
    forwards, routes = [], []
    for _ in range(rounds):  # interleaved: the load shifts both alike
        forwards.append(median_ms(lambda: smollm2.run(text, use_cache=False), 1))
        routes.append(median_ms(lambda: flow_routes(smollm2, RunRequest(text=text, tau=0.04)), 1))
    forward, route = statistics.median(forwards), statistics.median(routes)
    print(f"routes, SmolLM2, {n} tokens: forward {forward:.0f} ms, routes {route:.0f} ms, {route / forward:.2f}× "
          f"(target ≤ 3×)")

def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--only", choices=("routes", "zeroing", "flow"), help="one of the three measures")
    args = parser.parse_args()
    wanted = (args.only,) if args.only else ("routes", "zeroing", "flow")
    print(f"{cpu_name()}; {blas_kernels()}; load average {os.getloadavg()[0]:.2f}; {args.rounds} rounds, medians")
    smollm2, minilm = load_model("smollm2"), load_model("minilm")

    if "routes" in wanted:
        measure_routes(smollm2, args.rounds)
    if "zeroing" in wanted:
        text = text_of(minilm, 32)
        n = len(minilm.tokenize(text).tokens)
        zeroing = median_ms(lambda: value_zeroing(minilm, RunRequest(text=text)), args.rounds)
        print(f"value zeroing, MiniLM, {n} tokens: {zeroing:.0f} ms (target ≤ 2,000 ms)")
    if "flow" in wanted:
        for name, model in (("MiniLM", minilm), ("SmolLM2", smollm2)):
            text = text_of(model, 64)
            attentions = model.run(text, use_cache=False).attentions  # (layers, heads, n, n)
            n = attentions.shape[-1]
            row = median_ms(lambda: focused_flow(attentions, n - 1), args.rounds)
            print(f"focused flow, {name} ({attentions.shape[0]} layers), {n} tokens: {row:.0f} ms (target ≤ 300 ms)")
    print(f"load average at the end {os.getloadavg()[0]:.2f}")



if __name__ == "__main__":
    main()
