"""Benchmark engine.toy.compute() against a plain NumPy loop over heads and PyTorch CPU.

    python benchmarks/bench_engine.py            # full run (a few minutes on 2 cores)
    python benchmarks/bench_engine.py --quick    # fewer repeats
    python benchmarks/bench_engine.py --steps    # also time each step of compute() at n=512, 2048

For each (n, d_model, heads) it prints, from ONE process, the median wall time of

- ``engine``: engine.toy.compute() with the full trace (every intermediate kept), a text of n distinct
  whitespace-separated tokens, tokenizer='whitespace', random weights, sinusoidal positions;
- ``cold``: the same with the engine's memo caches (projection weights, positional table, token
  vectors) emptied before every call: what the first computation of a new text / seed costs;
- ``loop``: a straightforward NumPy version, one np.dot per head (weights kept per head only);
- ``torch``: torch.nn.functional.multi_head_attention_forward(..., need_weights=True,
  average_attn_weights=False) on the same x and the same W_Q, W_K, W_V, W_O (float32),

plus GFLOP/s (projections, q·kᵀ, weights·v and W_O: 8·n·d² + 4·n²·d flops), the ratio
engine / torch, the cost of the 'whitespace' and 'auto' tokenizers on the same text, and the
largest absolute difference of torch's and the loop's outputs and weights from the engine's.
"""
from __future__ import annotations

import argparse
import gc
import math
import os
import platform
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from engine import AttentionConfig, compute, tokenize  # noqa: E402

try:  # optional: PyTorch CPU as the reference
    import torch
    import torch.nn.functional as F
except ImportError:  # pragma: no cover - depends on the machine
    torch = None

SIZES = ((12, 64, 4), (128, 512, 8), (512, 512, 8), (2048, 512, 8))


# --------------------------------------------------------------------------------------------
# what runs on this machine


def blas_description() -> str:
    """The BLAS numpy calls, by threadpoolctl when it is installed, else numpy's build config."""
    try:
        from threadpoolctl import threadpool_info

        lines = [
            f"{i['internal_api']} {i.get('version')} {i.get('architecture', '')} "
            f"threads={i['num_threads']} ({Path(i['filepath']).name})"
            for i in threadpool_info()
        ]
        return "; ".join(lines) + "  [threadpoolctl]"
    except ImportError:
        pass
    try:
        blas = np.show_config(mode="dicts")["Build Dependencies"]["blas"]
        return f"{blas.get('name')} {blas.get('version')} ({blas.get('openblas configuration', '')})  [numpy build config]"
    except Exception:  # pragma: no cover - very old numpy
        return "unknown (no threadpoolctl; numpy.show_config() gave nothing usable)"


def machine_description() -> list[str]:
    cpu = platform.processor() or "?"
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as info:
            cpu = next(line.split(":", 1)[1].strip() for line in info if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    lines = [
        f"machine: {cpu}, {os.cpu_count()} logical CPUs, {platform.system()} {platform.release()}",
        f"python {platform.python_version()}, numpy {np.__version__}"
        + (f", torch {torch.__version__} ({torch.get_num_threads()} threads)" if torch else ", torch not importable"),
        f"BLAS: {blas_description()}",
    ]
    for name in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE", "OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS",
                 "MALLOC_MMAP_THRESHOLD_", "MALLOC_TRIM_THRESHOLD_"):
        lines.append(f"{name}={os.environ.get(name, '(unset)')}")
    return lines


# --------------------------------------------------------------------------------------------
# the contenders


def flops(n: int, d: int) -> int:
    """Projections 3·2nd², q·kᵀ 2n²d (all heads), weights·v 2n²d, W_O 2nd²."""
    return 8 * n * d * d + 4 * n * n * d


def numpy_loop(x, w_q, w_k, w_v, w_o, heads):
    """Plain NumPy: project, then one np.dot per head; the per-head weights are returned."""
    n, d = x.shape
    d_k = d // heads
    q, k, v = x @ w_q, x @ w_k, x @ w_v  # (n, d) each
    outputs, weights = [], []
    for h in range(heads):
        cols = slice(h * d_k, (h + 1) * d_k)
        scores = np.dot(q[:, cols], k[:, cols].T) / np.float32(math.sqrt(d_k))  # (n, n)
        e = np.exp(scores - scores.max(axis=1, keepdims=True))
        p = e / e.sum(axis=1, keepdims=True)  # (n, n)
        weights.append(p)
        outputs.append(np.dot(p, v[:, cols]))  # (n, d_k)
    return np.concatenate(outputs, axis=1) @ w_o, weights


def torch_mha(x, w_q, w_k, w_v, w_o, heads):
    """PyTorch CPU multi-head attention with our weights. torch computes x·Wᵀ, so pass Wᵀ."""
    n, d = x.shape
    t = torch.from_numpy(np.ascontiguousarray(x)).unsqueeze(1)  # (n, batch 1, d)
    in_proj = torch.from_numpy(np.ascontiguousarray(np.concatenate([w_q.T, w_k.T, w_v.T])))  # (3d, d)
    out_proj = torch.from_numpy(np.ascontiguousarray(w_o.T))  # (d, d)

    def run():
        with torch.inference_mode():
            return F.multi_head_attention_forward(
                t, t, t, d, heads, in_proj, None, None, None, False, 0.0, out_proj, None,
                training=False, need_weights=True, average_attn_weights=False,
            )

    return run


# --------------------------------------------------------------------------------------------
# timing


def _cpu_jiffies() -> tuple[int, int]:
    """(all, idle) jiffies of the whole machine since boot, from /proc/stat (Linux)."""
    with open("/proc/stat", encoding="ascii") as stat:
        values = [int(v) for v in stat.readline().split()[1:]]
    return sum(values), values[3] + values[4]


def _other_load(before, after, own_seconds: float) -> float:
    """Share of the machine's CPU time that OTHER processes used between two snapshots."""
    total = after[0] - before[0]
    busy = total - (after[1] - before[1])
    return max(0.0, busy - own_seconds * CLOCK_TICKS) / total if total > 0 else 0.0


CLOCK_TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
HAVE_PROC_STAT = os.path.exists("/proc/stat")
STATS = {"rejected": 0, "kept": 0}  # samples thrown away because the machine was busy elsewhere
MAX_OTHER_LOAD = 0.10  # a sample counts only if other processes used at most 10 % of the CPUs


def _quiet_pause(limit: float = 30.0) -> None:
    """Wait (up to ``limit`` s) until other processes use less than MAX_OTHER_LOAD for 0.5 s."""
    deadline = time.monotonic() + limit
    while HAVE_PROC_STAT and time.monotonic() < deadline:
        before = _cpu_jiffies()
        time.sleep(0.5)
        if _other_load(before, _cpu_jiffies(), 0.0) < MAX_OTHER_LOAD:
            return


def timed(fn) -> tuple[float, float]:
    """(wall seconds, kernel seconds of this process) of one call, re-run (up to 10 times) while
    other processes were busy during it: this machine is shared, and their bursts are not ours."""
    for _ in range(10):
        cpu_before, jiffies_before = os.times(), _cpu_jiffies() if HAVE_PROC_STAT else None
        started = time.perf_counter()
        result = fn()
        wall = time.perf_counter() - started
        cpu_after = os.times()
        del result
        own = (cpu_after.user - cpu_before.user) + (cpu_after.system - cpu_before.system)
        if not HAVE_PROC_STAT or _other_load(jiffies_before, _cpu_jiffies(), own) <= MAX_OTHER_LOAD:
            STATS["kept"] += 1
            return wall, cpu_after.system - cpu_before.system
        STATS["rejected"] += 1
        _quiet_pause()
    STATS["kept"] += 1
    return wall, cpu_after.system - cpu_before.system


def samples_ms(fn, repeats: int, warmup: int = 1, setup=None) -> tuple[list[float], list[float]]:
    """(wall ms, kernel ms) of ``repeats`` clean calls after ``warmup`` untimed ones."""
    gc.collect()
    _quiet_pause(5.0)  # also lets the previous contender's BLAS / OpenMP threads fall asleep
    for _ in range(warmup):
        if setup:
            setup()
        fn()
    walls, systems = [], []
    for _ in range(repeats):
        if setup:
            setup()
        wall, system = timed(fn)
        walls.append(1e3 * wall)
        systems.append(1e3 * system)
    return walls, systems


def median_ms(fn, repeats: int, warmup: int = 1, setup=None) -> float:
    return statistics.median(samples_ms(fn, repeats, warmup, setup)[0])


def clear_engine_caches() -> None:
    """Empty the engine's memo caches (if this engine version has them)."""
    try:
        from engine.toy.compute import _clear_caches
    except ImportError:
        return
    _clear_caches()


def text_of(n: int) -> str:
    return " ".join(f"tok{i}" for i in range(n))


def bench_size(n: int, d: int, heads: int, repeats: int, rounds: int) -> dict:
    """Every contender in turn, ``rounds`` times over (so that drifting load hits all alike);
    each figure is the median of all its samples."""
    text = text_of(n)
    config = AttentionConfig(text=text, tokenizer="whitespace", d_model=d, heads=heads)
    row = {"n": n, "d": d, "heads": heads}

    row["tok_ws"] = median_ms(lambda: tokenize(text, "whitespace"), max(repeats, 5))
    row["tok_auto"] = median_ms(lambda: tokenize(text, "auto"), max(repeats, 5))
    row["cold"] = median_ms(lambda: compute(config), max(3, repeats // 2), setup=clear_engine_caches)

    result = compute(config)
    x = np.array(result.x)
    w = [np.array(m) for m in (result.w_q, result.w_k, result.w_v, result.w_o)]
    contenders = {"engine": lambda: compute(config), "loop": lambda: numpy_loop(x, *w, heads)}
    loop_out, loop_weights = numpy_loop(x, *w, heads)
    row["diff_loop"] = max(
        float(np.abs(loop_out - result.output).max()),
        max(float(np.abs(p - result.weights[h]).max()) for h, p in enumerate(loop_weights)),
    )
    if torch is not None:
        contenders["torch"] = torch_mha(x, *w, heads)
        out, attn = contenders["torch"]()
        row["diff_torch_out"] = float(np.abs(out[:, 0].numpy() - result.output).max())
        row["diff_torch_w"] = float(np.abs(attn[0].numpy() - result.weights).max())
        del out, attn
    del result, loop_out, loop_weights

    walls = {name: [] for name in contenders}
    kernel = {name: [] for name in contenders}
    for _ in range(rounds):
        for name, fn in contenders.items():
            wall, system = samples_ms(fn, repeats, warmup=2)
            walls[name] += wall
            kernel[name] += system
    for name in contenders:
        row[name] = statistics.median(walls[name])
        row[name + "_sys"] = statistics.median(kernel[name])
    gc.collect()
    return row


def table_lines(rows: list[dict]) -> list[str]:
    """The figures as a Markdown table (also readable as plain text)."""
    lines = [
        "| n | d | h | engine ms | GFLOP/s | (sys ms) | cold ms | loop ms | GFLOP/s | torch ms | GFLOP/s "
        "| (sys ms) | engine/torch | engine/loop | tok ws ms | tok auto ms | max|Δ| torch out | max|Δ| torch w "
        "| max|Δ| loop |",
        "|" + "---:|" * 19,
    ]
    for r in rows:
        gflop = flops(r["n"], r["d"]) / 1e6  # GFLOP per ms
        t = r.get("torch")
        cells = [
            r["n"], r["d"], r["heads"],
            f"{r['engine']:.2f}", f"{gflop / r['engine']:.1f}", f"{r['engine_sys']:.0f}", f"{r['cold']:.2f}",
            f"{r['loop']:.2f}", f"{gflop / r['loop']:.1f}",
            f"{t:.2f}" if t else "-", f"{gflop / t:.1f}" if t else "-", f"{r['torch_sys']:.0f}" if t else "-",
            f"**{r['engine'] / t:.2f}**" if t else "-", f"{r['engine'] / r['loop']:.2f}",
            f"{r['tok_ws']:.3f}", f"{r['tok_auto']:.3f}",
            f"{r['diff_torch_out']:.1e}" if t else "-", f"{r['diff_torch_w']:.1e}" if t else "-",
            f"{r['diff_loop']:.1e}",
        ]
        lines.append("| " + " | ".join(str(c) for c in cells) + " |")
    return lines


# --------------------------------------------------------------------------------------------
# per-step profile of compute()


def profile_steps(n: int, d: int, heads: int, repeats: int) -> None:
    """Time each step of compute() separately, with the engine's own building blocks."""
    from engine.core import attention
    from engine.toy import embeddings
    from engine.core import positional
    from engine.core import trace
    from engine.toy import weights

    text = text_of(n)
    d_k = d // heads
    print(f"\nsteps of compute() at n={n}, d_model={d}, heads={heads} (median ms)")

    def step(label, fn, setup=None):
        ms = median_ms(fn, repeats, setup=setup)
        print(f"  {label:44s} {ms:9.2f}")
        return fn()

    tokens = step("tokenize (whitespace)", lambda: tokenize(text, "whitespace"))
    step("tokenize (auto)", lambda: tokenize(text, "auto"))
    texts = [t.text for t in tokens]
    emb = step("static embeddings (cold)", lambda: embeddings.static_embeddings(texts, d, 0), setup=clear_engine_caches)
    step("static embeddings (memo cache warm)", lambda: embeddings.static_embeddings(texts, d, 0))
    pos = step("sinusoidal", lambda: positional.sinusoidal(n, d))
    x = step("x = embeddings + positional", lambda: emb + pos)
    w = step("projection weights (random)", lambda: weights.projection_weights(d, 0, "random"))
    projected = step("3 projections x @ W_Q, W_K, W_V", lambda: [x @ w["w_q"], x @ w["w_k"], x @ w["w_v"]])
    fused = np.concatenate([w["w_q"], w["w_k"], w["w_v"]], axis=1)
    step("fused projection x @ [W_Q|W_K|W_V]", lambda: x @ fused)
    q, k, v = step("split heads (3 contiguous copies)", lambda: [attention.split_heads(m, heads) for m in projected])
    k_t = np.ascontiguousarray(k.transpose(0, 2, 1))
    scores = step("scores: stacked matmul q @ kᵀ (contiguous)", lambda: np.matmul(q, k_t))
    step("scores: stacked matmul on transposed view", lambda: np.matmul(q, k.transpose(0, 2, 1)))
    step("scores: loop of per-head np.dot", lambda: [np.dot(q[h], k_t[h]) for h in range(heads)])
    c = np.float32(1 / math.sqrt(d_k))
    scaled = step("scale: scores · 1/√d_k (new array)", lambda: scores * c)
    mask = attention.causal_mask(n)
    step("causal mask: boolean-index assignment", lambda: scaled.copy().__setitem__((Ellipsis, mask), -np.inf))
    step("softmax: row max", lambda: scaled.max(axis=-1, keepdims=True))
    shifted = step("softmax: subtract max (new array)", lambda: scaled - scaled.max(axis=-1, keepdims=True))
    step("softmax: np.exp (new array)", lambda: np.exp(shifted))
    step("softmax: np.exp in place (on a copy)", lambda: np.exp(shifted, out=shifted.copy()))
    step("softmax: row sums", lambda: shifted.sum(axis=-1, keepdims=True))
    step("softmax: engine softmax() (whole)", lambda: attention.softmax(scaled))
    probs = attention.softmax(scaled)
    step("weighted sum: stacked matmul weights @ v", lambda: np.matmul(probs, v))
    step("weighted sum: loop of per-head np.dot", lambda: [np.dot(probs[h], v[h]) for h in range(heads)])
    step("engine attend() (scores..weighted sum)", lambda: attention.attend(q, k, v, divisor=math.sqrt(d_k)))
    head_out = np.matmul(probs, v)
    concat = step("concat (merge heads)", lambda: attention.merge_heads(head_out))
    out = step("W_O: concat @ W_O", lambda: concat @ w["w_o"])
    step("vector diffs (float64 norms, cosine)", lambda: trace.vector_diffs(x, out))
    config = AttentionConfig(text=text, tokenizer="whitespace", d_model=d, heads=heads)
    step("compute() total (warm caches)", lambda: compute(config))
    step("compute() total (cold caches)", lambda: compute(config), setup=clear_engine_caches)


def profile_in_situ(n: int, d: int, heads: int, repeats: int) -> None:
    """compute() itself, with a clock around the functions it calls (tokenize, embeddings, the
    row shares of the projections and of W_O + vector diffs, attend): unlike the isolated steps
    above, each step pays for memory and threads as it does inside compute()."""
    import importlib

    c = importlib.import_module("engine.toy.compute")
    config = AttentionConfig(text=text_of(n), tokenizer="whitespace", d_model=d, heads=heads)
    spent: dict[str, float] = {}
    originals = {name: getattr(c, name) for name in ("tokenize", "static_embeddings", "attend", "for_rows")}

    def clocked(label_of, function):
        def wrapper(*args, **kwargs):
            started = time.perf_counter()
            try:
                return function(*args, **kwargs)
            finally:
                label = label_of(args)
                spent[label] = spent.get(label, 0.0) + time.perf_counter() - started
        return wrapper

    labels = {"project": "projection x·[W_Q|W_K|W_V] into heads", "combine": "concat, W_O, vector diffs"}
    c.tokenize = clocked(lambda args: "tokenize", originals["tokenize"])
    c.static_embeddings = clocked(lambda args: "embeddings (memo)", originals["static_embeddings"])
    c.attend = clocked(lambda args: "attend (q·kᵀ … weights·v, tiles)", originals["attend"])
    c.for_rows = clocked(lambda args: labels.get(args[1].__name__, args[1].__name__), originals["for_rows"])
    try:
        for _ in range(2):
            compute(config)
        spent.clear()
        totals = []
        for _ in range(repeats):  # plain clock: a re-run sample (timed()) would count its steps twice
            started = time.perf_counter()
            compute(config)
            totals.append(1e3 * (time.perf_counter() - started))
    finally:
        for name, function in originals.items():
            setattr(c, name, function)
    print(f"\ninside compute() at n={n} (mean ms per call over {repeats} calls, clock around each step)")
    for name, seconds in spent.items():
        print(f"  {name:44s} {1e3 * seconds / repeats:9.2f}")
    print(f"  {'rest (positions, AttentionResult, …)':44s} {statistics.mean(totals) - 1e3 * sum(spent.values()) / repeats:9.2f}")
    print(f"  {'total (mean)':44s} {statistics.mean(totals):9.2f}")


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="fewer repeats and one round (noisier medians)")
    parser.add_argument("--steps", action="store_true", help="also time each step of compute() at n=512 and 2048")
    parser.add_argument("--sizes", default=None, help="comma-separated n values to run (default: all)")
    parser.add_argument(
        "--glibc-defaults", action="store_true",
        help="leave glibc's malloc as it is; by default the process (every contender alike) keeps freed "
        "memory for reuse as main.py does (engine.core.memory.keep_freed_memory), so that fresh arrays do "
        "not fault in new pages on every call",
    )
    args = parser.parse_args(argv)

    from engine.core.memory import keep_freed_memory

    kept = False if args.glibc_defaults else keep_freed_memory()
    print("\n".join(machine_description()))
    print(f"malloc: {'keeps freed memory for reuse (engine.core.memory.keep_freed_memory, as main.py)' if kept else 'glibc defaults'}"
          " — the same for every contender, all in this one process")
    sizes = SIZES
    if args.sizes:
        wanted = {int(s) for s in args.sizes.split(",")}
        sizes = tuple(s for s in SIZES if s[0] in wanted)
    rounds = 1 if args.quick else 2
    started = time.perf_counter()
    rows = []
    for n, d, heads in sizes:
        repeats = {12: 100, 128: 20, 512: 10}.get(n, 5)
        if args.quick:
            repeats = max(3, repeats // 3)
        rows.append(bench_size(n, d, heads, repeats, rounds))
        print(f"  measured n={n}: {rounds} round(s) × {repeats} repeats per contender", file=sys.stderr)
    print()
    print("\n".join(table_lines(rows)))
    print(
        f"\nmedians of clean samples; {STATS['rejected']} of {STATS['kept'] + STATS['rejected']} samples re-run because "
        f"other processes used > {MAX_OTHER_LOAD:.0%} of the CPUs meanwhile; {time.perf_counter() - started:.0f} s"
    )
    print("flops counted: projections 6·n·d², q·kᵀ 2·n²·d, weights·v 2·n²·d, W_O 2·n·d²; "
          "sys = kernel time of the process (page faults of fresh arrays)")
    if args.steps:
        for n in (512, 2048):
            profile_steps(n, 512, 8, 3 if args.quick else 7)
            profile_in_situ(n, 512, 8, 5 if args.quick else 15)


if __name__ == "__main__":
    main()
