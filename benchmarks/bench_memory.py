"""Peak resident memory of the largest computations the memory budget allows, against the budget.

    python benchmarks/bench_memory.py            # the shapes below, one fresh process each

For each (d_model, heads, mask/positional) the script finds the largest n whose estimate
(engine.core.memory.estimate_trace_bytes) fits DEFAULT_MEMORY_BUDGET, then runs compute() for it in a
new process started as main.py starts (keep_freed_memory()), and reports:

- footprint: resident memory of that process after importing the engine, before computing
  (ru_maxrss: the interpreter, NumPy, BLAS);
- peak: its maximum resident memory after compute() (ru_maxrss, which includes the footprint);
- estimate: what the budget check counted;
- the claim: peak ≤ budget + footprint.

Not a test: it allocates up to 2 GiB per shape and takes about a minute on 2 cores.
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from engine.toy.config import DEFAULT_MEMORY_BUDGET  # noqa: E402
from engine.core.memory import estimate_trace_bytes  # noqa: E402

SHAPES = [  # (d_model, heads, positional, mask)
    (64, 1, "sinusoidal", "none"),
    (64, 4, "sinusoidal", "none"),
    (512, 8, "rope", "causal"),
    (2048, 16, "sinusoidal", "none"),
    (8192, 1, "sinusoidal", "none"),
    (8192, 64, "rope", "none"),
]

CHILD = """
import json, resource, sys
sys.path.insert(0, {root!r})
from engine.core.memory import keep_freed_memory
keep_freed_memory()
from engine import AttentionConfig, compute
n, d, h, positional, mask = {n}, {d}, {h}, {positional!r}, {mask!r}
config = AttentionConfig(text=" ".join("w%d" % i for i in range(n)), tokenizer="whitespace", d_model=d, heads=h,
                         positional=positional, mask=mask)
footprint = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
result = compute(config)
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
print(json.dumps({{"footprint": footprint, "peak": peak}}))
"""


def largest_n(d_model: int, heads: int, rope: bool, budget: int = DEFAULT_MEMORY_BUDGET) -> int:
    low, high = 0, 1 << 20
    while low < high:  # the largest n with estimate ≤ budget
        middle = (low + high + 1) // 2
        if estimate_trace_bytes(middle, d_model, heads, rope) <= budget:
            low = middle
        else:
            high = middle - 1
    return low


def measure(n: int, d: int, h: int, positional: str, mask: str) -> dict:
    code = CHILD.format(root=str(ROOT), n=n, d=d, h=h, positional=positional, mask=mask)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.parse_args()
    budget = DEFAULT_MEMORY_BUDGET
    mb = 1e6
    print(f"budget {budget / mb:.0f} MB ({budget / 1024**3:.0f} GiB)")
    print("| n | d_model | heads | positional, mask | estimate MB | footprint MB | peak MB | peak − footprint MB "
          "| budget + footprint − peak MB |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    worst = None
    for d, h, positional, mask in SHAPES:
        n = largest_n(d, h, positional == "rope")
        if n == 0:
            continue
        figures = measure(n, d, h, positional, mask)
        margin = budget + figures["footprint"] - figures["peak"]
        worst = margin if worst is None else min(worst, margin)
        print(f"| {n} | {d} | {h} | {positional}, {mask} | {estimate_trace_bytes(n, d, h, positional == 'rope') / mb:.0f} "
              f"| {figures['footprint'] / mb:.0f} | {figures['peak'] / mb:.0f} "
              f"| {(figures['peak'] - figures['footprint']) / mb:.0f} | {margin / mb:.0f} |", flush=True)
    print(f"smallest margin under budget + footprint: {worst / mb:.0f} MB ({'holds' if worst >= 0 else 'FAILS'})")


if __name__ == "__main__":
    main()
