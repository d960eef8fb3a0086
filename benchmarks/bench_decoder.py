"""Benchmark: the NumPy decoder (engine.models.llama) against transformers on PyTorch CPU, SmolLM2-135M.

    python benchmarks/bench_decoder.py                         # 16, 128 and 512 tokens
    python benchmarks/bench_decoder.py --rounds 3 --threads 2 --torch-python /work/refvenv/bin/python

Both sides run SmolLM2-135M-Instruct from the same GGUF file, float32, on the same input ids:
- NumPy: engine.models.llama.forward, the full trace (every layer's attention weights, q, k, v, head
  outputs, hidden states) and the next-token logits of the last position;
- PyTorch: transformers' LlamaForCausalLM, attn_implementation="eager", output_attentions=True,
  output_hidden_states=True, use_cache=False, under torch.no_grad() (its logits cover every
  position: that is how the model's forward is called).
Plus "one more token": a 32-token text extended by one token, NumPy through the KV cache
(engine.models.llama.forward with ``previous``, then the top-10 next-token probabilities: what the
next-token bars need), PyTorch with the prefix's past_key_values; and the first load of the
model (ours: checksum, dequantize, prepare, tokenizer; theirs: from_pretrained).

Each side runs in its own subprocess with the same thread count (OpenBLAS / OpenMP /
torch.set_num_threads / engine.core.parallel.THREADS), alternating for ``--rounds`` rounds; figures are
medians of all timed calls. The PyTorch side may run under another interpreter (``--torch-python``),
e.g. a separate venv with torch: the app's never has it.
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

KV_PREFIX = 32


def _time(call, repeats: int, setup=None) -> list[list[float]]:
    """[wall seconds, CPU seconds of the process (all its threads)] of each timed call. CPU time
    is the steadier figure on a shared machine: waiting for a core does not count (spinning does)."""
    times = []
    for index in range(repeats + 2):  # two warm-up calls
        state = setup() if setup else None
        started, cpu = time.perf_counter(), time.process_time()
        call(state)
        if index >= 2:
            times.append([time.perf_counter() - started, time.process_time() - cpu])
    return times


def repeats_for(n: int, repeats: int) -> int:
    return max(3, repeats // 4) if n >= 384 else repeats


def numpy_worker(ids: list[int], lengths: list[int], repeats: int, threads: int) -> dict:
    import numpy as np

    import engine.core.parallel
    from engine.models import llama
    from engine.core.memory import keep_freed_memory
    from engine.models.smollm2 import load_smollm2

    keep_freed_memory()
    engine.core.parallel.THREADS = threads
    started, cpu = time.perf_counter(), time.process_time()
    model = load_smollm2()
    results = {"load": [[time.perf_counter() - started, time.process_time() - cpu]]}
    for n in lengths:
        x = np.asarray(ids[:n])
        results[str(n)] = _time(lambda _: llama.forward(model.weights, model.config, x), repeats_for(n, repeats))
    prefix = llama.forward(model.weights, model.config, np.asarray(ids[:KV_PREFIX]))
    longer = np.asarray(ids[: KV_PREFIX + 1])

    def step(_):
        trace = llama.forward(model.weights, model.config, longer, previous=prefix)
        assert trace.reused_positions == KV_PREFIX
        probabilities = llama.softmax64(trace.next_token_logits)
        np.argpartition(-probabilities, 10)[:10]

    results["kv"] = _time(step, repeats)
    return results


def torch_worker(ids: list[int], lengths: list[int], repeats: int, threads: int, gguf: str) -> dict:
    import torch
    from transformers import AutoModelForCausalLM
    from transformers.utils import logging as hf_logging

    hf_logging.set_verbosity_error()
    hf_logging.disable_progress_bar()
    torch.set_num_threads(threads)
    path = Path(gguf)
    started, cpu = time.perf_counter(), time.process_time()
    model = AutoModelForCausalLM.from_pretrained(str(path.parent), gguf_file=path.name, dtype=torch.float32,
                                                 attn_implementation="eager").eval()
    results = {"load": [[time.perf_counter() - started, time.process_time() - cpu]]}
    for n in lengths:
        x = torch.tensor([ids[:n]])

        def call(_):
            with torch.no_grad():
                model(input_ids=x, output_attentions=True, output_hidden_states=True, use_cache=False)

        results[str(n)] = _time(call, repeats_for(n, repeats))
    prefix = torch.tensor([ids[:KV_PREFIX]])
    new = torch.tensor([ids[KV_PREFIX: KV_PREFIX + 1]])

    def setup():
        with torch.no_grad():
            return model(input_ids=prefix, use_cache=True).past_key_values

    def step(cache):
        with torch.no_grad():
            out = model(input_ids=new, past_key_values=cache, use_cache=True, output_attentions=True,
                        output_hidden_states=True)
            torch.topk(torch.softmax(out.logits[0, -1], -1), 10)

    results["kv"] = _time(step, repeats, setup)
    return results


def run_worker(backend: str, args, ids_file: Path, gguf: str) -> dict:
    env = dict(os.environ)
    for name in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        env[name] = str(args.threads)
    python = sys.executable if backend == "numpy" else args.torch_python
    command = [python, __file__, "--worker", backend, "--threads", str(args.threads), "--repeats", str(args.repeats),
               "--ids", str(ids_file), "--gguf", gguf, "--lengths", *map(str, args.lengths)]
    output = subprocess.run(command, env=env, capture_output=True, text=True, check=True).stdout
    return json.loads(output.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description="NumPy decoder vs transformers on PyTorch CPU (SmolLM2-135M)")
    parser.add_argument("--lengths", type=int, nargs="+", default=[16, 128, 512])
    parser.add_argument("--repeats", type=int, default=12, help="timed calls per length and round (÷4 from 384)")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--torch-python", default=sys.executable, help="interpreter with torch + transformers")
    parser.add_argument("--no-torch", action="store_true")
    parser.add_argument("--worker", choices=["numpy", "torch"], help=argparse.SUPPRESS)
    parser.add_argument("--ids", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--gguf", help=argparse.SUPPRESS)
    args = parser.parse_args()

    if args.worker:
        ids = json.loads(args.ids.read_text())
        if args.worker == "numpy":
            print(json.dumps(numpy_worker(ids, args.lengths, args.repeats, args.threads)))
        else:
            print(json.dumps(torch_worker(ids, args.lengths, args.repeats, args.threads, args.gguf)))
        return

    import tempfile

    from engine.models.smollm2 import find_smollm2, load_smollm2

    gguf = str(find_smollm2())
    model = load_smollm2()
    ids = model.tokenize(TEXT * (max(args.lengths) // 40 + 2)).input_ids.tolist()
    assert len(ids) >= max(args.lengths + [KV_PREFIX + 1])
    del model
    ids_file = Path(tempfile.mkstemp(suffix=".json")[1])
    ids_file.write_text(json.dumps(ids))
    backends = ["numpy"] + ([] if args.no_torch else ["torch"])
    samples: dict[str, dict[str, list[float]]] = {b: {} for b in backends}
    load_before = os.getloadavg()[0]
    try:
        for round_index in range(args.rounds):
            for backend in backends if round_index % 2 == 0 else backends[::-1]:
                for key, times in run_worker(backend, args, ids_file, gguf).items():
                    samples[backend].setdefault(key, []).extend(times)
    finally:
        ids_file.unlink()
    load_after = os.getloadavg()[0]

    import numpy as np

    print(f"SmolLM2-135M-Instruct (Q4_1 GGUF → float32), {args.threads} thread(s), {cpu_name()}, numpy {np.__version__}; "
          f"load average {load_before:.2f} → {load_after:.2f}; median of {args.rounds} alternating rounds")
    print(f"numpy's BLAS: {blas_kernels()}; ratio = NumPy time / PyTorch time (< 1: NumPy faster)")
    print()
    print("| case | NumPy wall (ms) | PyTorch eager wall (ms) | ratio | NumPy CPU (ms) | PyTorch CPU (ms) | CPU ratio |")
    print("|------|-----:|-----:|-----:|-----:|-----:|-----:|")
    rows = [(f"forward, {n} tokens, every attention + hidden state", str(n)) for n in args.lengths]
    rows += [(f"one more token after {KV_PREFIX} (KV cache) + top-10 next tokens", "kv"),
             ("first load of the model", "load")]
    for label, key in rows:
        ours = [1e3 * statistics.median(t[i] for t in samples["numpy"][key]) for i in (0, 1)]
        if "torch" in samples:
            theirs = [1e3 * statistics.median(t[i] for t in samples["torch"][key]) for i in (0, 1)]
            print(f"| {label} | {ours[0]:.1f} | {theirs[0]:.1f} | {ours[0] / theirs[0]:.2f} | {ours[1]:.1f} | "
                  f"{theirs[1]:.1f} | {ours[1] / theirs[1]:.2f} |")
        else:
            print(f"| {label} | {ours[0]:.1f} | – | – | {ours[1]:.1f} | – | – |")

if __name__ == "__main__":
    main()
