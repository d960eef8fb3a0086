"""Benchmark: a corpus job's texts per second, in one process and on a local Dask cluster, and its peak memory.

    nice python benchmarks/bench_corpus.py                          # 1,000 sentences, MiniLM and SmolLM2
    nice python benchmarks/bench_corpus.py --texts 200 --models minilm
    nice python benchmarks/bench_corpus.py --memory 1000,10000      # MiniLM in one process: flat as it grows?

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
"""
from __future__ import annotations

import argparse
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


def main() -> None:
    parser = argparse.ArgumentParser(description="corpus job: texts per second and peak memory")
    parser.add_argument("--texts", type=int, default=1000, help="sentences a run (default 1,000)")
    parser.add_argument("--models", default="minilm,smollm2")
    parser.add_argument("--where", default="in-process,local", help="in-process, local (the local cluster) or both")
    parser.add_argument("--memory", metavar="N,M,…", help="instead: MiniLM in one process at these corpus sizes")
    options = parser.parse_args()
    from bench_common import blas_kernels, cpu_name

    print(f"# {cpu_name()}, {blas_kernels()}; load average {open('/proc/loadavg').read().split()[0]} at the start")
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


if __name__ == "__main__":
    main()
