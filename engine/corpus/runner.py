"""Run a corpus job: its batches mapped in this process or on a Dask cluster, its folder resumed.

    spec = JobSpec(model="minilm", texts="sentences.txt", out="minilm-heads")
    with open_executor("local") as executor:       # or None (this process), or "tcp://HOST:8786"
        result = run_job(spec, executor, progress=print)

The job reads the corpus, asks a worker for the model's shape (so a worker that cannot import
the project or load the model fails before any batch), prepares the folder (engine/corpus/
shards.py: a folder of another job is refused; a folder of this job resumes from its complete
shards), computes the missing batches, writes each shard as it arrives, then reduces the shards
in batch order and writes the results (engine/corpus/outputs.py). Every batch is a pure function
of its texts, and the reduction reads shards in order, so this process, a local cluster and a
remote one give the same numbers, and a batch retried by Dask after a lost worker counts once.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterator

from ..core.errors import EngineError
from ..core.parallel import blas_single_threaded
from ..core.hooks import check_ablation
from .batch import measure_batch, model_facts, token_limit
from .outputs import write_qk_map, write_results
from .shards import IDENTITY, Summary, check_folder, make_manifest, prepare_folder, reduce_shards, write_shard
from .texts import Corpus, read_corpus

DEFAULT_BATCH = 16  # texts a shard: a killed job loses at most this many per worker
DEFAULT_MAX_TOKENS = 512  # longer texts are skipped and counted (the head-pair distances grow as n²)


@dataclass(frozen=True)
class JobSpec:
    """What a corpus job computes; everything but ``out`` and ``limit`` is named in its manifest."""

    model: str  # engine.models registry name (bundled, gguf:PATH, hf:PATH)
    texts: str  # the corpus file
    out: str  # the job's folder
    field: str | None = None  # JSONL: the field holding the text; None: one text a line
    ablate: frozenset = frozenset()  # (layer, head) switched off
    batch_size: int = DEFAULT_BATCH
    limit: int | None = None  # the first ``limit`` texts only
    max_tokens: int = DEFAULT_MAX_TOKENS
    # the t-SNE view of every head's query-key map, computed at the job's end (about 0.3 s a head; the
    # PCA view is always written); not in the manifest: a finished folder rerun with it adds the view
    tsne: bool = True


@dataclass
class JobResult:
    summary: Summary
    manifest: dict
    computed: int  # batches computed by this run (the rest were already in the folder)
    skipped_lines: str = ""  # the corpus reader's line of skipped lines ("" when none)
    arrays: dict = field(default_factory=dict)


class InProcess:
    """Batches computed one after the other in this process."""

    name = "this process"

    def facts(self, model: str) -> dict:
        return model_facts(model)

    def map(self, calls: list) -> Iterator[tuple[int, dict]]:
        for index, args in calls:
            yield index, measure_batch(*args)

    def close(self) -> None:
        pass

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def open_executor(scheduler: str | None, workers: int = 2):
    """None: :class:`InProcess`; "local": a Dask LocalCluster of ``workers`` processes started
    here; an address (tcp://HOST:8786): that cluster's scheduler (engine/corpus/dask_executor.py)."""
    if scheduler is None:
        return InProcess()
    from .dask_executor import DaskExecutor

    return DaskExecutor(scheduler, workers)


def check_job(spec: JobSpec) -> Corpus:
    """The corpus of ``spec``, read and checked, and its folder checked against the job as far as
    it is known without the model: what the command line does before it starts a cluster."""
    if spec.batch_size < 1:
        raise EngineError("the batch size must be at least 1, not {size}", field="batch_size", size=spec.batch_size)
    if spec.limit is not None and spec.limit < 1:
        raise EngineError("--limit must be at least 1, not {limit}", field="limit", limit=spec.limit)
    corpus = read_corpus(spec.texts, spec.field)
    count = min(len(corpus.texts), spec.limit or len(corpus.texts))
    known = make_manifest(spec.model, spec.ablate, corpus.sha256, spec.field, count, spec.batch_size, 0, 0, 0)
    check_folder(spec.out, {key: known[key] for key in IDENTITY if key != "max_tokens"})
    return corpus


def run_job(spec: JobSpec, executor, progress: Callable | None = None, corpus: Corpus | None = None) -> JobResult:
    """Compute ``spec`` with ``executor`` (open_executor's); ``progress(done, total, elapsed,
    done_here)`` after every batch: texts done in all, texts of the job, seconds since this run
    started, texts this run computed. ``corpus``: :func:`check_job`'s, when it was called."""
    with blas_single_threaded():  # small matrices all the way (engine/corpus/batch.py says why)
        return _run(spec, executor, progress, corpus if corpus is not None else check_job(spec))


def _run(spec: JobSpec, executor, progress: Callable | None, corpus: Corpus) -> JobResult:
    texts = corpus.texts[:spec.limit] if spec.limit else corpus.texts
    facts = executor.facts(spec.model)
    ablate = check_ablation(spec.ablate, facts["layers"], facts["heads"])
    manifest = make_manifest(spec.model, ablate, corpus.sha256, spec.field, len(texts), spec.batch_size,
                             token_limit(facts["max_positions"], spec.max_tokens), facts["layers"], facts["heads"])
    done = prepare_folder(spec.out, manifest)
    size = spec.batch_size
    calls = [(index, (spec.model, ablate, index * size, texts[index * size:(index + 1) * size], spec.max_tokens))
             for index in range(manifest["batches"]) if index not in done]
    done_texts = sum(min(size, len(texts) - index * size) for index in done)
    started, here = time.monotonic(), 0
    if progress is not None:
        progress(done_texts, len(texts), 0.0, 0)
    for index, shard in executor.map(calls):
        write_shard(spec.out, index, shard)
        count = min(size, len(texts) - index * size)
        done_texts += count
        here += count
        if progress is not None:
            progress(done_texts, len(texts), time.monotonic() - started, here)
    summary = reduce_shards(spec.out, manifest["batches"], facts["layers"], facts["heads"])
    arrays = write_results(Path(spec.out), summary, spec.model, ablate, texts)
    write_qk_map(spec.out, size, manifest["batches"], texts, tsne=spec.tsne)
    return JobResult(summary, manifest, len(calls), corpus.skipped_line(), arrays)
