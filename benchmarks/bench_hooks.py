"""Benchmark: what one listening hook costs — a run with one identity hook against a plain run.

    python benchmarks/bench_hooks.py                               # SmolLM2 and MiniLM, 16 and 128 tokens
    python benchmarks/bench_hooks.py --models minilm --lengths 12 128 512 --repeats 30 --threads 2

The target: a run with one hook within 5 % of a run without. For each model and length:
- plain:  ``model.run(text)``
- hooked: ``model.run_with_hooks(text, fwd_hooks=[("blocks.{L//2}.attn.hook_z", identity)])``,
  ``identity`` returning None (keep the array), so both runs compute the same numbers.
The two alternate call by call in the order plain A, hooked B, hooked A, plain B, … where A and B
are texts of the same length that differ in their first token: a decoder's KV cache (which
reuses a shared prefix of the model's previous run) never finds one, whichever path keeps it.
Figures: median of ``--repeats`` calls each after one warm-up round, and the ratio hooked / plain,
of wall time and of the process's CPU time (all threads; less hurt by other programs' load).
Everything runs in this process on --threads threads (engine.core.parallel.THREADS, and OpenBLAS's
unless OPENBLAS_NUM_THREADS is set); no torch. Under load, --threads 1 isolates the hook's cost
from the scheduling of threads (OpenBLAS's spinning threads on oversubscribed cores cost seconds).
Lengths are token counts (a decoder's text has no special tokens, an encoder's counts [CLS]
and [SEP]); the real count is printed when a text cannot hit it exactly.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench_common import cpu_name  # noqa: E402

BODY = (
    "attention lets every word in a sentence look at every other word and decide how much "
    "each one matters for its own meaning. A query asks a question, the keys answer how well "
    "they match, and the values carry what is passed on. The weights of one row always add "
    "up to one, so a word spreads a fixed budget of attention over the whole sentence. "
    "Different heads learn different habits: some look at the previous word, some at the "
    "next one, some at the verb of the clause, and some rest on the separator token when "
    "they have nothing better to do. "
)
FIRST_WORDS = ("Yes", "No")  # the two texts differ here, at their first token


def token_count(model, text: str) -> int:
    return len(model.tokenize(text).input_ids)


def text_of(model, n: int, first: str) -> tuple[str, int]:
    """``first`` + the first words of BODY (repeated) up to ``n`` tokens: (text, its count)."""
    words = (BODY * (n // 40 + 2)).split()
    text, count = first, token_count(model, first)
    for word in words:
        candidate = f"{text} {word}"
        grown = token_count(model, candidate)
        if grown > n:
            break
        text, count = candidate, grown
        if count == n:
            break
    return text, count


def middle_z(model) -> str:
    """blocks.{L//2}.attn.hook_z of the model's own hook names."""
    layers = sorted({int(m.group(1)) for name in model.hook_names()
                     if (m := re.fullmatch(r"blocks\.(\d+)\.attn\.hook_z", name))})
    return f"blocks.{layers[len(layers) // 2]}.attn.hook_z"


def measure(model, n: int, repeats: int) -> dict:
    text_a, count_a = text_of(model, n, FIRST_WORDS[0])
    text_b, count_b = text_of(model, n, FIRST_WORDS[1])
    name = middle_z(model)
    calls = []

    def identity(array, hook_name):
        calls.append(hook_name)  # proves the hook ran; returns None: keep the array
        return None

    plain = lambda text: model.run(text)  # noqa: E731
    hooked = lambda text: model.run_with_hooks(text, fwd_hooks=[(name, identity)])  # noqa: E731
    order = [(plain, text_a, "plain"), (hooked, text_b, "hooked"), (hooked, text_a, "hooked"),
             (plain, text_b, "plain")]
    times: dict[str, list[float]] = {"plain": [], "hooked": []}
    cpu: dict[str, list[float]] = {"plain": [], "hooked": []}  # the process's CPU time: less hurt by load
    for round_index in range(1 + (repeats + 1) // 2):
        for call, text, kind in order:
            started, started_cpu = time.perf_counter(), time.process_time()
            call(text)
            elapsed, elapsed_cpu = time.perf_counter() - started, time.process_time() - started_cpu
            if round_index:  # the first round warms up (allocations, BLAS threads)
                times[kind].append(elapsed)
                cpu[kind].append(elapsed_cpu)
    if not calls or set(calls) != {name}:
        raise RuntimeError(f"the identity hook on {name} was not called as expected: {calls[:3]}")
    plain_ms = 1e3 * statistics.median(times["plain"])
    hooked_ms = 1e3 * statistics.median(times["hooked"])
    plain_cpu = 1e3 * statistics.median(cpu["plain"])
    hooked_cpu = 1e3 * statistics.median(cpu["hooked"])
    return {"tokens": n, "actual_tokens": sorted({count_a, count_b}), "hook": name, "calls": len(times["plain"]),
            "plain_ms": plain_ms, "hooked_ms": hooked_ms, "ratio": hooked_ms / plain_ms,
            "plain_cpu_ms": plain_cpu, "hooked_cpu_ms": hooked_cpu, "cpu_ratio": hooked_cpu / plain_cpu}


def main() -> None:
    parser = argparse.ArgumentParser(description="a run with one identity hook against a plain run")
    parser.add_argument("--models", nargs="+", default=["smollm2", "minilm"])
    parser.add_argument("--lengths", type=int, nargs="+", default=[16, 128])
    parser.add_argument("--repeats", type=int, default=20, help="timed calls per side, model and length")
    parser.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--json", type=Path, help="also write the figures here")
    args = parser.parse_args()
    for name in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):  # before numpy is imported
        os.environ.setdefault(name, str(args.threads))

    from engine.core.memory import keep_freed_memory
    from engine.models import model_info

    keep_freed_memory()  # as main.py
    import engine.core.parallel

    engine.core.parallel.THREADS = args.threads
    import numpy as np

    load_before = os.getloadavg()[0]
    rows = []
    for name in args.models:
        entry = model_info(name)
        if not entry.is_installed():
            print(f"{name}: not installed ({entry.install_command}), skipped")
            continue
        model = entry.load()
        for n in args.lengths:
            rows.append({"model": name, **measure(model, n, args.repeats)})
    load_after = os.getloadavg()[0]
    print(f"one identity hook vs none, {args.threads} thread(s), {cpu_name()}, "
          f"numpy {np.__version__}; load average {load_before:.2f} → {load_after:.2f}")
    print(f"median of {args.repeats}-ish alternating calls per side; ratio = hooked / plain (target ≤ 1.05)")
    print()
    print("| model | tokens | hook | plain (ms) | hooked (ms) | ratio | plain CPU (ms) | hooked CPU (ms) | CPU ratio |")
    print("|-------|-------:|------|-----------:|------------:|------:|---------------:|----------------:|----------:|")
    for row in rows:
        tokens = row["tokens"] if row["actual_tokens"] == [row["tokens"]] else "/".join(map(str, row["actual_tokens"]))
        print(f"| {row['model']} | {tokens} | {row['hook']} | {row['plain_ms']:.1f} | {row['hooked_ms']:.1f} | "
              f"{row['ratio']:.3f} | {row['plain_cpu_ms']:.1f} | {row['hooked_cpu_ms']:.1f} | {row['cpu_ratio']:.3f} |")
    if args.json:
        args.json.write_text(json.dumps({"threads": args.threads, "load": [load_before, load_after], "rows": rows},
                                        indent=2))


if __name__ == "__main__":
    main()
