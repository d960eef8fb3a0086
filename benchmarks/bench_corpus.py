"""Benchmark: a corpus job's texts per second, in one process and on a local Dask cluster, and its peak memory.

    nice python benchmarks/bench_corpus.py                          # 1,000 sentences, MiniLM and SmolLM2
    nice python benchmarks/bench_corpus.py --texts 200 --models minilm
    nice python benchmarks/bench_corpus.py --memory 1000,10000      # MiniLM in one process: flat as it grows?
    nice python benchmarks/bench_corpus.py --torch-python /work/refvenv/bin/python   # + transformers, both models

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

The reference (when ``--torch-python`` names an interpreter with torch, transformers and gguf): transformers
doing the same forwards with ``output_attentions=True`` and eager attention, batched, 32 sentences a
batch padded on the right to the batch's longest with the padding masked, under torch.no_grad(), with 1
and with 2 threads, in a fresh process of that interpreter. MiniLM: its BertModel from the installed
model folder. SmolLM2: LlamaForCausalLM loaded from the same GGUF file the job reads
(``from_pretrained(folder, gguf_file=name, dtype=torch.float32)``, as scripts/make_smollm2_reference.py;
transformers dequantizes it to float32 as our loader does), no BOS as the job, the end-of-text token
as padding (masked; a causal model's real tokens never see right padding anyway). Its texts/s counts
tokenizing and the forwards, not loading; it computes only the attention weights (and, for SmolLM2,
the logits its forward cannot skip), none of the job's measures, and writes nothing: a bound on what
batching buys, not the same job.
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


def load_average() -> str:
    """The 1-minute load average now (what the other work on a shared machine took of its cores)."""
    return open("/proc/loadavg").read().split()[0]


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


def reference(python: str, model: str, texts: Path, count: int, threads: int) -> dict:
    """transformers' batched forwards of ``model`` (minilm or smollm2) over the first ``count`` lines of
    ``texts`` in ``python`` (a fresh process through WRAPPER, as :func:`run`), ``threads`` torch threads."""
    if model == "minilm":
        from engine.models.minilm import find_model_dir

        location = find_model_dir()
    else:
        from engine.models.smollm2 import find_smollm2

        location = find_smollm2()
    env = dict(os.environ, OMP_NUM_THREADS=str(threads), OPENBLAS_NUM_THREADS=str(threads),
               MKL_NUM_THREADS=str(threads))
    command = [python, __file__, "--reference-worker", model, str(location), str(texts), str(count), str(threads)]
    started = time.monotonic()
    done = subprocess.run([sys.executable, "-c", WRAPPER, *command], capture_output=True, text=True, cwd=ROOT, env=env)
    wall = time.monotonic() - started
    code, peak_kb, cpu = done.stdout.split()[-3:]
    if code != "0":
        raise SystemExit(f"transformers reference ({model}): {done.stderr.strip().splitlines()[-1]}")
    figures = json.loads(done.stderr.strip().splitlines()[-1])
    return {"rate": count / figures["seconds"], "wall": wall, "peak_mb": int(peak_kb) / 1024,
            "cpu_ms": 1000 * float(cpu) / count, "version": figures["version"], "load_s": figures["load_s"]}


def reference_worker(model: str, location: str, texts: str, count: int, threads: int) -> None:
    """In the torch interpreter: the forwards, then one JSON line on stderr (seconds, load seconds, versions)."""
    import torch
    import transformers
    from transformers import AutoModel, AutoModelForCausalLM, AutoTokenizer
    from transformers.utils import logging as hf_logging

    hf_logging.set_verbosity_error()
    torch.set_num_threads(threads)
    lines = Path(texts).read_text(encoding="utf-8").splitlines()[:count]
    loading = time.perf_counter()
    if model == "minilm":
        tokenizer = AutoTokenizer.from_pretrained(location)
        network = AutoModel.from_pretrained(location, attn_implementation="eager").eval()
        encode = dict(truncation=True, max_length=512)
    else:  # the GGUF file: transformers builds the tokenizer and LlamaForCausalLM from it
        path = Path(location)
        tokenizer = AutoTokenizer.from_pretrained(str(path.parent), gguf_file=path.name)
        network = AutoModelForCausalLM.from_pretrained(str(path.parent), gguf_file=path.name, dtype=torch.float32,
                                                       attn_implementation="eager").eval()
        tokenizer.padding_side = "right"
        if tokenizer.pad_token is None:
            tokenizer.pad_token = tokenizer.eos_token
        encode = dict(add_special_tokens=False)  # the job adds no BOS to SmolLM2's texts either
    loaded = time.perf_counter()
    with torch.no_grad():
        for start in range(0, len(lines), REFERENCE_BATCH):
            batch = tokenizer(lines[start:start + REFERENCE_BATCH], padding=True, return_tensors="pt",
                              **encode)  # attention_mask: 0 on the padding, which the scores then skip
            outputs = network(**batch, output_attentions=True)
            assert len(outputs.attentions) == network.config.num_hidden_layers
    seconds = time.perf_counter() - loaded
    sys.stderr.write(json.dumps({"seconds": seconds, "load_s": loaded - loading,
                                 "version": f"torch {torch.__version__}, transformers {transformers.__version__}"})
                     + "\n")


COLUMNS = ("texts/s | wall s | CPU ms/text | peak MB | load before → after |\n"
           "| --- | --- | --- | --- | --- | --- |")


def row(label: str, figures: dict, load_before: str) -> None:
    """One table line: a run's figures and the machine's 1-minute load average before and after it."""
    print(f"| {label} | {figures['rate']:.1f} | {figures['wall']:.0f} | {figures['cpu_ms']:.0f} | "
          f"{figures['peak_mb']:.0f} | {load_before} → {load_average()} |", flush=True)


def main() -> None:
    if len(sys.argv) == 7 and sys.argv[1] == "--reference-worker":  # the torch side: no app imports
        reference_worker(sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5]), int(sys.argv[6]))
        return
    parser = argparse.ArgumentParser(description="corpus job: texts per second and peak memory")
    parser.add_argument("--texts", type=int, default=1000, help="sentences a run (default 1,000)")
    parser.add_argument("--models", default="minilm,smollm2")
    parser.add_argument("--where", default="in-process,local", help="in-process, local (the local cluster) or both")
    parser.add_argument("--memory", metavar="N,M,…", help="instead: MiniLM in one process at these corpus sizes")
    parser.add_argument("--torch-python", metavar="PYTHON",
                        help="an interpreter with torch + transformers + gguf: also each model's forwards there, batched")
    options = parser.parse_args()
    from bench_common import blas_kernels, cpu_name

    print(f"# {cpu_name()}, {os.cpu_count()} cores; numpy's BLAS: {blas_kernels()}; "
          f"load average {load_average()} at the start")
    with tempfile.TemporaryDirectory() as scratch:
        scratch = Path(scratch)
        sizes = [int(n) for n in options.memory.split(",")] if options.memory else [options.texts]
        corpus = scratch / "sentences.txt"
        corpus.write_text("\n".join(sentences(max(sizes))) + "\n", encoding="utf-8")
        if options.memory:
            print(f"| MiniLM, in one process | {COLUMNS}")
            for count in sizes:
                before = load_average()
                figures = run("minilm", corpus, count, "in-process", scratch / f"memory-{count}")
                row(f"{count:,} texts", figures, before)
            return
        print(f"| {options.texts:,} sentences | {COLUMNS}")
        for model in options.models.split(","):
            for where in options.where.split(","):
                before = load_average()
                figures = run(model, corpus, options.texts, where, scratch / f"{model}-{where}")
                row(f"{model}, {'one process' if where == 'in-process' else 'local cluster (2 workers)'}", figures, before)
            if options.torch_python:
                for threads in (1, 2):
                    before = load_average()
                    figures = reference(options.torch_python, model, corpus, options.texts, threads)
                    row(f"{model}, transformers batched ({REFERENCE_BATCH} a batch, {threads} thread"
                        f"{'s' if threads > 1 else ''}; loading {figures['load_s']:.0f} s not in texts/s; "
                        f"{figures['version']})", figures, before)
        print(f"# load average {load_average()} at the end")


if __name__ == "__main__":
    main()
