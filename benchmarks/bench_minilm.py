"""Benchmark: the NumPy BERT forward pass (engine.models.bert) against transformers on PyTorch CPU.

    python benchmarks/bench_minilm.py                  # 12, 128 and 512 tokens
    python benchmarks/bench_minilm.py --lengths 12 256 --rounds 5 --threads 2
    python benchmarks/bench_minilm.py --torch-python /work/refvenv/bin/python   # torch in another venv

Both sides run all-MiniLM-L6-v2 on the same input ids, one unpadded sentence, float32:
- NumPy: engine.models.bert.forward, i.e. the full trace (q, k, v, scores, scaled, weights,
  head_outputs, concat, … of every layer, hidden states, cosines);
- PyTorch: transformers' BertModel with attn_implementation="eager",
  output_attentions=True, output_hidden_states=True, under torch.no_grad().

Each side runs in its own subprocess (PyTorch's OpenMP threads keep spinning after each call
and would steal the cores from OpenBLAS otherwise), with the same thread count for
OpenBLAS / MKL / OpenMP / torch.set_num_threads / the engine's own threads (engine.core.parallel). The subprocesses alternate for ``--rounds``
rounds so that load from other programs hits both sides alike; the figure is the median of
all timed calls. PyTorch's column is skipped when torch or transformers is not installed (in
``--torch-python``, default this interpreter: the app's venv never has torch). The model's folder
is found here and handed to the workers, so the torch venv needs no model package.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench_common import TEXT, blas_kernels, cpu_name  # noqa: E402



def input_ids(n: int, model_dir: str | None = None):
    """Exactly n ids: [CLS], the first n − 2 pieces of a long English text, [SEP]."""
    from engine.models.minilm import load_tokenizer, find_model_dir, TOKENIZER_FILE

    tokenizer = load_tokenizer(Path(model_dir or find_model_dir()) / TOKENIZER_FILE)
    tokenizer.no_truncation()
    ids = tokenizer.encode(TEXT * (n // 20 + 2)).ids
    return ids[: n - 1] + [ids[-1]]


def _time(call, repeats: int) -> list[float]:
    call()  # warm-up: first-call allocations, BLAS thread start-up
    call()
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        call()
        times.append(time.perf_counter() - started)
    return times


def worker(backend: str, lengths: list[int], repeats: int, threads: int, glibc_defaults: bool = False,
           model_dir: str | None = None) -> dict:
    """Run in a subprocess: seconds of every timed call, per length."""
    results = {}
    if not glibc_defaults:  # both sides alike: freed memory kept for reuse, as main.py does
        from engine.core.memory import keep_freed_memory

        keep_freed_memory()
    if backend == "numpy":
        import numpy as np

        import engine.core.parallel
        from engine.models.bert import forward
        from engine.models.minilm import load_minilm

        engine.core.parallel.THREADS = threads  # the engine's own threads (attention tiles, row shares)

        model = load_minilm()
        for n in lengths:
            ids = np.asarray(input_ids(n, model_dir))
            results[n] = _time(lambda: forward(model.weights, model.config, ids), repeats_for(n, repeats))
    else:
        import torch
        from transformers import AutoModel
        from transformers.utils import logging as hf_logging

        from engine.models.minilm import find_model_dir

        model_dir = model_dir or str(find_model_dir())
        hf_logging.set_verbosity_error()
        hf_logging.disable_progress_bar()
        torch.set_num_threads(threads)
        model = AutoModel.from_pretrained(model_dir, attn_implementation="eager").eval()
        for n in lengths:
            ids = torch.tensor([input_ids(n, model_dir)])

            def call():
                with torch.no_grad():
                    return model(input_ids=ids, output_attentions=True, output_hidden_states=True)

            results[n] = _time(call, repeats_for(n, repeats))
    return results


def repeats_for(n: int, repeats: int) -> int:
    return max(3, repeats // 4) if n >= 384 else repeats


def torch_versions(python: str) -> str | None:
    """"torch X, transformers Y" in the interpreter ``python``, or None without them."""
    probe = "import torch, transformers; print(f'torch {torch.__version__}, transformers {transformers.__version__}')"
    result = subprocess.run([python, "-c", probe], capture_output=True, text=True)
    return result.stdout.strip() if result.returncode == 0 else None


def run_worker(backend: str, args) -> dict[int, list[float]]:
    env = dict(os.environ)
    for name in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        env[name] = str(args.threads)
    from engine.models.minilm import find_model_dir

    command = [
        sys.executable if backend == "numpy" else args.torch_python, __file__, "--worker", backend,
        "--model-dir", str(find_model_dir()), "--threads", str(args.threads),
        "--repeats", str(args.repeats), "--lengths", *map(str, args.lengths),
    ] + (["--glibc-defaults"] if args.glibc_defaults else [])
    output = subprocess.run(command, env=env, capture_output=True, text=True, check=True).stdout
    return {int(n): times for n, times in json.loads(output.strip().splitlines()[-1]).items()}


def attention_version() -> str:
    """The commit of engine/core/attention.py benchmarked (the kernel is being tuned in parallel)."""
    try:
        commit = subprocess.run(
            ["git", "log", "-1", "--format=%h", "--", "engine/core/attention.py"],
            cwd=ROOT, capture_output=True, text=True, check=True,
        ).stdout.strip()
        dirty = subprocess.run(["git", "diff", "--quiet", "--", "engine/core/attention.py"], cwd=ROOT).returncode
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return commit + (" + uncommitted changes" if dirty else "")


def main() -> None:
    parser = argparse.ArgumentParser(description="NumPy BERT forward vs transformers on PyTorch CPU")
    parser.add_argument("--lengths", type=int, nargs="+", default=[12, 128, 512])
    parser.add_argument("--repeats", type=int, default=20, help="timed calls per length and round (÷4 from 384 tokens)")
    parser.add_argument("--rounds", type=int, default=3, help="alternating NumPy / PyTorch subprocess rounds")
    parser.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--no-torch", action="store_true", help="time the NumPy side only")
    parser.add_argument("--json", type=Path, help="also write the figures here")
    parser.add_argument("--glibc-defaults", action="store_true",
                        help="leave glibc's malloc as it is (default: both sides keep freed memory, as main.py)")
    parser.add_argument("--torch-python", default=sys.executable, help="interpreter with torch + transformers")
    parser.add_argument("--worker", choices=["numpy", "torch"], help=argparse.SUPPRESS)
    parser.add_argument("--model-dir", help=argparse.SUPPRESS)
    args = parser.parse_args()

    if args.worker:
        print(json.dumps(worker(args.worker, args.lengths, args.repeats, args.threads, args.glibc_defaults,
                                args.model_dir)))
        return

    torch_side = None if args.no_torch else torch_versions(args.torch_python)
    backends = ["numpy"] + (["torch"] if torch_side else [])
    samples = {backend: {n: [] for n in args.lengths} for backend in backends}
    load_before = os.getloadavg()[0]
    for round_index in range(args.rounds):
        order = backends if round_index % 2 == 0 else backends[::-1]
        for backend in order:
            for n, times in run_worker(backend, args).items():
                samples[backend][n].extend(times)
    load_after = os.getloadavg()[0]

    import numpy as np

    versions = f"numpy {np.__version__}"
    if torch_side:
        versions += f", {torch_side}"
    print(f"all-MiniLM-L6-v2 forward, float32, {args.threads} thread(s), {cpu_name()}, "
          f"{versions}; load average {load_before:.2f} → {load_after:.2f}")
    print(f"engine/core/attention.py at {attention_version()}; numpy's BLAS: {blas_kernels()}")
    print("malloc: " + ("glibc defaults" if args.glibc_defaults else "both sides keep freed memory for reuse (engine.core.memory.keep_freed_memory, as main.py)"))
    print(f"median of {args.rounds} alternating rounds; ratio = NumPy time / PyTorch time (< 1: NumPy faster)")
    print()
    print("| tokens | NumPy (ms) | PyTorch (ms) | ratio |")
    print("|-------:|-----------:|-------------:|------:|")
    figures = []
    for n in args.lengths:
        numpy_ms = 1e3 * statistics.median(samples["numpy"][n])
        row = {"tokens": n, "numpy_ms": numpy_ms}
        if "torch" in backends:
            torch_ms = 1e3 * statistics.median(samples["torch"][n])
            row.update(torch_ms=torch_ms, ratio=numpy_ms / torch_ms)
            print(f"| {n} | {numpy_ms:.1f} | {torch_ms:.1f} | {numpy_ms / torch_ms:.2f} |")
        else:
            print(f"| {n} | {numpy_ms:.1f} | – | – |")
        figures.append(row)
    if args.json:
        args.json.write_text(json.dumps({"threads": args.threads, "figures": figures}, indent=2))


if __name__ == "__main__":
    main()
