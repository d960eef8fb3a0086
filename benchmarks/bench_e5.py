"""Benchmark: the e5 forward (12 layers, engine.models.e5) side by side with MiniLM's (6 layers, engine.models.minilm).

    python benchmarks/bench_e5.py                    # 12, 128 and 512 tokens
    python benchmarks/bench_e5.py --lengths 12 256 --rounds 5

Both models are the same BERT forward (engine.models.bert.forward, the full trace: q, k, v, scores,
weights, … of every layer) with d 384, 12 heads, FF 1536; e5 has 12 layers to MiniLM's 6, so
the expected ratio is about 2 (target: e5 ≤ 2.2 × MiniLM). Both run in this one process on the
same number of tokens, one call each in turn (e5, MiniLM, e5, MiniLM …, ``--rounds`` × a
length-dependent number of pairs) so that load from other programs hits both alike; each figure
is the median of all its timed calls, in wall time and in the process's CPU time.
e5's input is a mixed Chinese / English text cut to exactly n pieces, MiniLM's an English one.
"""
from __future__ import annotations

import argparse
import platform
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench_common import cpu_name  # noqa: E402

E5_TEXT = (
    "passage: 小明喜欢苹果，苹果很好吃。苹果发布了新手机。猫追老鼠。Attention lets every word look at "
    "every other word and decide how much each one matters for its own meaning. "
)


def e5_ids(model, n: int):
    import numpy as np

    ids = model.tokenize(E5_TEXT * (n // 30 + 2)).input_ids.tolist()
    return np.asarray(ids[: n - 1] + [ids[-1]], dtype=np.int64)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--lengths", type=int, nargs="+", default=[12, 128, 512])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--repeats", type=int, default=0, help="calls per block (default: by length)")
    args = parser.parse_args()

    import numpy as np

    from bench_minilm import input_ids as minilm_ids
    from engine.models.bert import forward
    from engine.models.e5 import load_e5
    from engine.core.memory import keep_freed_memory
    from engine.models.minilm import load_minilm

    keep_freed_memory()  # as main.py does for the app
    started = time.perf_counter()
    e5 = load_e5()
    e5_load = time.perf_counter() - started
    started = time.perf_counter()
    minilm = load_minilm()
    minilm_load = time.perf_counter() - started

    print(f"CPU: {cpu_name()}, {platform.python_version()}, numpy {np.__version__}")
    print(f"load: e5 {e5_load:.2f} s, MiniLM {minilm_load:.2f} s")
    print(f"{'n':>5} {'e5 ms':>9} {'MiniLM ms':>10} {'ratio':>6} {'e5 cpu ms':>10} {'MiniLM cpu ms':>14} {'cpu ratio':>10}")
    for n in args.lengths:
        ids = {"e5": e5_ids(e5, n), "minilm": np.asarray(minilm_ids(n))}
        assert all(len(v) == n for v in ids.values())
        models = {"e5": e5, "minilm": minilm}
        repeats = args.repeats or (20 if n <= 32 else 6 if n <= 128 else 3)
        wall = {"e5": [], "minilm": []}
        cpu = {"e5": [], "minilm": []}
        for name in wall:  # warm-up: first-call allocations, BLAS threads
            forward(models[name].weights, models[name].config, ids[name])
        for _ in range(args.rounds * repeats):
            for name in wall:  # one call each, alternating: a burst of outside load hits both
                model = models[name]
                t, c = time.perf_counter(), time.process_time()
                forward(model.weights, model.config, ids[name])
                wall[name].append(time.perf_counter() - t)
                cpu[name].append(time.process_time() - c)
        w = {k: 1e3 * statistics.median(v) for k, v in wall.items()}
        c = {k: 1e3 * statistics.median(v) for k, v in cpu.items()}
        print(f"{n:>5} {w['e5']:>9.1f} {w['minilm']:>10.1f} {w['e5'] / w['minilm']:>6.2f} "
              f"{c['e5']:>10.1f} {c['minilm']:>14.1f} {c['e5'] / c['minilm']:>10.2f}")
    print("ms: median wall time of forward(); cpu ms: median CPU time of the process (all threads) per call")

if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    main()
