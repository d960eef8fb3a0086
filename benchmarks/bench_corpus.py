"""Benchmark: a corpus job's texts per second, in one process and on a local Dask cluster, and its peak memory.

    nice python benchmarks/bench_corpus.py                          # 1,000 sentences, MiniLM and SmolLM2
    nice python benchmarks/bench_corpus.py --texts 200 --models minilm
    nice python benchmarks/bench_corpus.py --memory 1000,10000      # MiniLM in one process: flat as it grows?
    nice python benchmarks/bench_corpus.py --models minilm --torch-python /work/refvenv/bin/python   # + transformers

Each figure is one run of ``./run corpus`` (``main.py corpus``) in a fresh process into a fresh
folder: ``--in-process`` and the default local cluster (two worker processes, one thread each).
texts/s is the job's own rate (its last progress line: texts over the seconds since its first
batch was submitted, model loading in the workers included, process and cluster start-up not);
wall s includes everything. Peak MB is the largest resident set of any one of the job's processes
(the job's own or one worker's: getrusage of the waited children, read in a wrapper process started
for each run; a local cluster holds the model once in each worker, so its total is about twice that);
CPU ms/text is the CPU time of the job's process and its workers over the texts (start-up and
model loading included): on a shared, loaded machine the figure that does not depend on the load.
The sentences are made from a few templates in the seeds' style (short English sentences with
commas and full stops), the same for every run.

The reference (MiniLM only, when ``--torch-python`` names an interpreter with torch and transformers):
transformers' BertModel (eager attention) doing the same forwards with ``output_attentions=True``,
batched, 32 sentences a batch padded to the batch's longest with the padding masked, under
torch.no_grad(), with 1 and with 2 threads, in a fresh process of that interpreter. Its texts/s
counts tokenizing and the forwards, not loading; it computes only the attention weights, none of
the job's measures, and writes nothing: a bound on what batching buys, not the same job.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

SUBJECTS = ["The cat", "A teacher", "My brother", "The old man", "Every student", "The small dog", "Her friend",
            "The committee", "The animal", "A trophy"]
VERBS = ["saw", "liked", "followed", "painted", "found", "helped", "ignored", "remembered", "crossed", "carried"]
OBJECTS = ["the bird", "a red car", "the quiet river", "his notes", "the long letter", "our neighbour", "the street",
           "a suitcase"]
TAILS = [".", ", and then it rained.", "; nobody knew why.", " because it was too tired.", " in the morning.",
         " before the storm, of course."]
REFERENCE_BATCH = 32  # sentences a batch of the transformers reference
WRAPPER = ("import resource, subprocess, sys; done = subprocess.run(sys.argv[1:], capture_output=True, text=True); "
           "sys.stderr.write(done.stderr); usage = resource.getrusage(resource.RUSAGE_CHILDREN); "
           "print(done.returncode, usage.ru_maxrss, usage.ru_utime + usage.ru_stime)")


def sentences(count: int) -> list[str]:
    import numpy as np

    rng = np.random.default_rng(0)
    return [f"{rng.choice(SUBJECTS)} {rng.choice(VERBS)} {rng.choice(OBJECTS)}{rng.choice(TAILS)}"
            for _ in range(count)]


def run(model: str, texts: Path, count: int, where: str, folder: Path) -> dict:
    command = [sys.executable, str(ROOT / "main.py"), "corpus", "--model", model, "--texts", str(texts),
               "--out", str(folder), "--limit", str(count)] + (["--in-process"] if where == "in-process" else [])
    started = time.monotonic()
    done = subprocess.run([sys.executable, "-c", WRAPPER, *command], capture_output=True, text=True, cwd=ROOT)
    wall = time.monotonic() - started
    code, peak_kb, cpu = done.stdout.split()
    if code != "0":
        raise SystemExit(f"{model} {where}: {done.stderr.strip().splitlines()[-1]}")
    rates = re.findall(r"([0-9.]+) texts/s", done.stderr)
    return {"rate": float(rates[-1]) if rates else float("nan"), "wall": wall, "peak_mb": int(peak_kb) / 1024,
            "cpu_ms": 1000 * float(cpu) / count}


def reference(python: str, texts: Path, count: int, threads: int) -> dict:
    """transformers' batched forwards over the first ``count`` lines of ``texts`` in ``python`` (a
    fresh process through WRAPPER, as :func:`run`), ``threads`` torch threads."""
    from engine.models.minilm import find_model_dir

    env = dict(os.environ, OMP_NUM_THREADS=str(threads), OPENBLAS_NUM_THREADS=str(threads),
               MKL_NUM_THREADS=str(threads))
    command = [python, __file__, "--reference-worker", str(find_model_dir()), str(texts), str(count), str(threads)]
    started = time.monotonic()
    done = subprocess.run([sys.executable, "-c", WRAPPER, *command], capture_output=True, text=True, cwd=ROOT, env=env)
    wall = time.monotonic() - started
    code, peak_kb, cpu = done.stdout.split()[-3:]
    if code != "0":
        raise SystemExit(f"transformers reference: {done.stderr.strip().splitlines()[-1]}")
    seconds, version = json.loads(done.stderr.strip().splitlines()[-1]).values()
    return {"rate": count / seconds, "wall": wall, "peak_mb": int(peak_kb) / 1024, "cpu_ms": 1000 * float(cpu) / count,
            "version": version}


def reference_worker(model_dir: str, texts: str, count: int, threads: int) -> None:
    """In the torch interpreter: the forwards, then one JSON line on stderr (seconds, versions)."""
    import torch
    import transformers
    from transformers import AutoModel, AutoTokenizer
    from transformers.utils import logging as hf_logging

    hf_logging.set_verbosity_error()
    torch.set_num_threads(threads)
    lines = Path(texts).read_text(encoding="utf-8").splitlines()[:count]
    tokenizer = AutoTokenizer.from_pretrained(model_dir)
    model = AutoModel.from_pretrained(model_dir, attn_implementation="eager").eval()
    started = time.perf_counter()
    with torch.no_grad():
        for start in range(0, len(lines), REFERENCE_BATCH):
            batch = tokenizer(lines[start:start + REFERENCE_BATCH], padding=True, truncation=True, max_length=512,
                              return_tensors="pt")  # attention_mask: 0 on the padding, which the scores then skip
            outputs = model(**batch, output_attentions=True)
            assert len(outputs.attentions) == model.config.num_hidden_layers
    seconds = time.perf_counter() - started
    sys.stderr.write(json.dumps({"seconds": seconds, "version": f"torch {torch.__version__}, transformers "
                                                                 f"{transformers.__version__}"}) + "\n")


def main() -> None:
    if len(sys.argv) == 6 and sys.argv[1] == "--reference-worker":  # the torch side: no app imports
        reference_worker(sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5]))
        return
    parser = argparse.ArgumentParser(description="corpus job: texts per second and peak memory")
    parser.add_argument("--texts", type=int, default=1000, help="sentences a run (default 1,000)")
    parser.add_argument("--models", default="minilm,smollm2")
    parser.add_argument("--where", default="in-process,local", help="in-process, local (the local cluster) or both")
    parser.add_argument("--memory", metavar="N,M,…", help="instead: MiniLM in one process at these corpus sizes")
    parser.add_argument("--torch-python", metavar="PYTHON",
                        help="an interpreter with torch + transformers: also MiniLM's forwards there, batched")
    options = parser.parse_args()
    from bench_common import blas_kernels, cpu_name

    print(f"# {cpu_name()}, {os.cpu_count()} cores; numpy's BLAS: {blas_kernels()}; "
          f"load average {open('/proc/loadavg').read().split()[0]} at the start")
    with tempfile.TemporaryDirectory() as scratch:
        scratch = Path(scratch)
        sizes = [int(n) for n in options.memory.split(",")] if options.memory else [options.texts]
        corpus = scratch / "sentences.txt"
        corpus.write_text("\n".join(sentences(max(sizes))) + "\n", encoding="utf-8")
        if options.memory:
            print("| MiniLM, in one process | texts/s | wall s | CPU ms/text | peak MB |\n| --- | --- | --- | --- | --- |")
            for count in sizes:
                figures = run("minilm", corpus, count, "in-process", scratch / f"memory-{count}")
                print(f"| {count:,} texts | {figures['rate']:.1f} | {figures['wall']:.0f} | {figures['cpu_ms']:.0f} | "
                      f"{figures['peak_mb']:.0f} |", flush=True)
            return
        print(f"| {options.texts:,} sentences | texts/s | wall s | CPU ms/text | peak MB |\n| --- | --- | --- | --- | --- |")
        for model in options.models.split(","):
            for where in options.where.split(","):
                figures = run(model, corpus, options.texts, where, scratch / f"{model}-{where}")
                print(f"| {model}, {'one process' if where == 'in-process' else 'local cluster (2 workers)'} | "
                      f"{figures['rate']:.1f} | {figures['wall']:.0f} | {figures['cpu_ms']:.0f} | {figures['peak_mb']:.0f} |",
                      flush=True)
            if model == "minilm" and options.torch_python:
                for threads in (1, 2):
                    figures = reference(options.torch_python, corpus, options.texts, threads)
                    print(f"| minilm, transformers batched ({REFERENCE_BATCH} a batch, {threads} thread"
                          f"{'s' if threads > 1 else ''}; {figures['version']}) | {figures['rate']:.1f} | "
                          f"{figures['wall']:.0f} | {figures['cpu_ms']:.0f} | {figures['peak_mb']:.0f} |", flush=True)
        print(f"# load average {open('/proc/loadavg').read().split()[0]} at the end")


if __name__ == "__main__":
    main()
