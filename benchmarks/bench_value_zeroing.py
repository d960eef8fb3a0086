"""Benchmark: value zeroing (engine/analysis/value_zeroing.py) beside one plain forward of the same
text, MiniLM and SmolLM2, medians of interleaved rounds in this one process.

    OPENBLAS_CORETYPE= OPENBLAS_L2_SIZE= python benchmarks/bench_value_zeroing.py [--rounds 5] [--tokens 32]

Value zeroing runs layers × n one-layer forwards (each token's values zeroed in each layer), so its
cost grows with n² · layers; the target is ≤ 2 s on MiniLM at 32 tokens.
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench_common import blas_kernels, cpu_name, text_of  # noqa: E402
from engine.analysis.request import RunRequest  # noqa: E402
from engine.analysis.value_zeroing import value_zeroing  # noqa: E402
from engine.models import load_model  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--tokens", type=int, default=32)
    args = parser.parse_args()
    print(f"{cpu_name()}; {blas_kernels()}; {args.rounds} rounds, medians")
    print(f"{'model':<10} {'tokens':>6} {'forward ms':>11} {'value zeroing ms':>17} {'ratio':>7}")
    for name in ("minilm", "smollm2"):
        model = load_model(name)
        text = text_of(model, args.tokens)
        n = len(model.tokenize(text).tokens)
        forwards, zeroings = [], []
        for _ in range(args.rounds):
            start = time.perf_counter()
            model.run(text)
            forwards.append(time.perf_counter() - start)
            start = time.perf_counter()
            value_zeroing(model, RunRequest(text=text))
            zeroings.append(time.perf_counter() - start)
        forward, zeroing = statistics.median(forwards) * 1e3, statistics.median(zeroings) * 1e3
        print(f"{name:<10} {n:>6} {forward:>11.1f} {zeroing:>17.1f} {zeroing / forward:>6.1f}×")


if __name__ == "__main__":
    main()
