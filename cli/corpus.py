"""``./run corpus``: what each head does over a corpus of texts, on this machine's cores or a Dask cluster.

    ./run corpus --model minilm --texts sentences.txt --out minilm-heads
    ./run corpus --model smollm2 --texts data.jsonl --field text --out smol --scheduler tcp://HOST:8786
    ./run corpus --model minilm --texts sentences.txt --out off-3 --ablate 0.3 --limit 1000

Writes into the --out folder the per-head table (head_stats.npz, head_stats.csv), the head-pair
distances and the heads' 2-D map (head_clusters.npz, head_distances.csv, head_map.csv), every
head's joint query-key map over the first texts (qk_map.npz) and one shard a batch (engine/corpus/ says what each holds). Progress goes to stderr. Interrupted (Ctrl+C,
SIGTERM, a lost scheduler), the folder keeps every finished batch: the same command resumes it.
Bad input is one ``error: …`` line and exit code 2; an interruption exits with 128 + the signal.
"""
from __future__ import annotations

import argparse
import os
import signal
import sys
import time

from .options import parse_ablate as shared_parse_ablate

PROGRESS_SECONDS = 1.0  # a terminal's progress line is redrawn at most this often
PROGRESS_SECONDS_LOGGED = 15.0  # one line this often when stderr is a file (a cluster job's log)


class UsageError(Exception):
    """Bad input on the command line: exit code 2."""


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # one line, not argparse's usage and exit
        raise UsageError(message)


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="./run corpus", allow_abbrev=False, formatter_class=argparse.RawDescriptionHelpFormatter,
                     description="Run a model over a corpus of texts and summarise what each head does: its mean "
                                 "measures, their spread, and a map of the heads by the distance between their "
                                 "patterns (Clark et al. 2019). Resumable: the same command continues a folder.",
                     epilog="examples:\n" + "\n".join("  " + line.strip() for line in __doc__.split("\n\n")[1]
                                                      .splitlines()))
    parser.add_argument("--model", required=True, metavar="NAME|FILE.gguf|FOLDER",
                        help="a registry name (toy, minilm, smollm2, e5), a GGUF file or a Hugging Face model folder")
    parser.add_argument("--texts", required=True, metavar="FILE",
                        help="the corpus: one text a line in UTF-8 (or JSON lines with --field)")
    parser.add_argument("--out", required=True, metavar="DIR", help="the job's folder (created; resumed if it is "
                                                                    "this job's)")
    parser.add_argument("--field", metavar="NAME", help="read FILE as JSON lines, the text in this field")
    where = parser.add_mutually_exclusive_group()
    where.add_argument("--scheduler", metavar="ADDR", help="a Dask scheduler's address (tcp://HOST:8786); default: "
                                                           "a local cluster of --workers processes")
    where.add_argument("--in-process", action="store_true", help="no Dask: compute every batch in this process")
    parser.add_argument("--workers", type=int, default=2, metavar="N", help="processes of the local cluster "
                                                                           "(default 2)")
    parser.add_argument("--limit", type=int, metavar="N", help="the first N texts only")
    parser.add_argument("--ablate", metavar="L.H,…", help="switch these heads off, e.g. 0.1,3.5")
    parser.add_argument("--batch-size", type=int, default=None, metavar="N",
                        help="texts a shard (default 16): an interrupted job loses at most the batches in flight")
    parser.add_argument("--max-tokens", type=int, default=None, metavar="N",
                        help="skip (and count) texts of more tokens (default 512, or the model's limit)")
    parser.add_argument("--no-tsne", action="store_true",
                        help="write the heads' query-key maps by PCA only: no t-SNE view (it takes about 0.3 s a "
                             "head at the end of the job; the same command without it adds the view to a finished "
                             "folder)")
    return parser


def parse_ablate(text: str | None) -> frozenset:
    """``0.1,3.5`` → {(0, 1), (3, 5)} (cli/options.py's, as export and patch read it)."""
    try:
        return shared_parse_ablate(text)
    except ValueError as error:
        raise UsageError(str(error)) from None


def model_name(value: str) -> str:
    """The registry name of --model: a bundled name, gguf:/hf: names, a .gguf file or a model folder."""
    from engine.core.safe_io import check_model_path
    from engine.models import MODELS, model_info, register_folder, register_gguf

    if value in MODELS:
        return value
    if value.startswith(("gguf:", "hf:")):
        return model_info(value).name
    if os.path.isdir(os.path.expanduser(value)) and not value.lower().endswith(".gguf"):
        return register_folder(value)
    if value.lower().endswith(".gguf"):
        path, _ = check_model_path(value)
        return register_gguf(path)
    raise UsageError(f"--model {value!r} is not a model: choose one of {', '.join(MODELS)}, a .gguf file or a "
                     f"Hugging Face model folder")


class Progress:
    """``corpus: 320 / 1,000 texts · 12.3 texts/s · about 55 s left`` on stderr."""

    def __init__(self, stream=None) -> None:
        self.stream = stream or sys.stderr
        self.tty = hasattr(self.stream, "isatty") and self.stream.isatty()
        self.shown = -1e9
        self.last = ""

    def __call__(self, done: int, total: int, elapsed: float, done_here: int) -> None:
        now = time.monotonic()
        if done < total and now - self.shown < (PROGRESS_SECONDS if self.tty else PROGRESS_SECONDS_LOGGED):
            return
        self.shown = now
        line = f"corpus: {done:,} / {total:,} texts"
        if done_here and elapsed > 0:
            rate = done_here / elapsed
            line += f" · {rate:.1f} texts/s"
            if done < total:
                line += f" · about {format_seconds((total - done) / rate)} left"
        self.write(line)

    def write(self, line: str) -> None:
        try:
            if self.tty:
                self.stream.write("\r" + line.ljust(len(self.last)))
            else:
                self.stream.write(line + "\n")
            self.stream.flush()
            self.last = line
        except (OSError, ValueError, AttributeError):  # stderr closed: the job goes on
            pass

    def end(self) -> None:
        if self.tty and self.last:
            self.write(self.last)
            self.stream.write("\n")
            self.last = ""


def format_seconds(seconds: float) -> str:
    seconds = int(round(seconds))
    if seconds < 90:
        return f"{seconds} s"
    if seconds < 5400:
        return f"{round(seconds / 60)} min"
    return f"{seconds / 3600:.1f} h"


def run(args: list[str]) -> None:
    """Parse ``args``, run the job, print the line that says what was written."""
    options = build_parser().parse_args(args)
    from engine.corpus.outputs import RESULT_FILES
    from engine.corpus.runner import DEFAULT_BATCH, DEFAULT_MAX_TOKENS, JobSpec, check_job, open_executor, run_job

    for flag, value in (("--workers", options.workers), ("--limit", options.limit),
                        ("--batch-size", options.batch_size), ("--max-tokens", options.max_tokens)):
        if value is not None and value < 1:
            raise UsageError(f"{flag} must be at least 1, not {value}")
    spec = JobSpec(model=model_name(options.model), texts=options.texts, out=options.out, field=options.field,
                   ablate=parse_ablate(options.ablate), batch_size=options.batch_size or DEFAULT_BATCH,
                   limit=options.limit, max_tokens=options.max_tokens or DEFAULT_MAX_TOKENS, tsne=not options.no_tsne)
    corpus = check_job(spec)  # a bad corpus or another job's folder: said before a cluster starts
    # Dask logs a lost scheduler as a traceback; the job's own line says it (and what to do)
    os.environ.setdefault("DASK_LOGGING__DISTRIBUTED", "critical")
    progress = Progress()
    scheduler = None if options.in_process else (options.scheduler or "local")
    try:
        with open_executor(scheduler, options.workers) as executor:
            result = run_job(spec, executor, progress, corpus)
    finally:
        progress.end()
    summary, manifest = result.summary, result.manifest
    skipped = f" ({summary.skipped:,} over {manifest['max_tokens']:,} tokens skipped)" if summary.skipped else ""
    written = [name for name in RESULT_FILES if os.path.exists(os.path.join(options.out, name))]
    print(f"wrote {options.out}: {summary.texts:,} texts{skipped}, {manifest['layers']} layers × "
          f"{manifest['heads']} heads: {', '.join(written)}", flush=True)
    if result.skipped_lines:
        sys.stderr.write(f"note: {result.skipped_lines} of {options.texts}\n")


def _interrupted(signum, frame):
    raise KeyboardInterrupt(signum)


def main(args: list[str]) -> int:
    """``./run corpus …`` (``args`` after the command's name): the exit code."""
    from engine.core.errors import EngineError

    previous = {}
    for name in ("SIGTERM", "SIGHUP"):  # like Ctrl+C: the finished batches stay, the folder resumes
        number = getattr(signal, name, None)
        if number is not None:
            try:
                previous[number] = signal.signal(number, _interrupted)
            except (ValueError, OSError):  # not the main thread
                pass
    try:
        if args[:1] in (["-h"], ["--help"]):
            print(build_parser().format_help(), end="")
            return 0
        run(args)
        return 0
    except (UsageError, EngineError) as error:
        return fail(str(error), 2)
    except KeyboardInterrupt as interruption:
        number = interruption.args[0] if interruption.args and isinstance(interruption.args[0], int) else signal.SIGINT
        return fail(f"interrupted by {signal.Signals(number).name}: the finished batches are saved; the same command "
                    f"resumes the job", 128 + number)
    except MemoryError:
        return fail("not enough memory for this corpus job: use --max-tokens to skip long texts, or fewer --workers", 2)
    except Exception as error:  # noqa: BLE001 - one line, never a traceback
        return fail(f"unexpected {type(error).__name__}: {error}", 2)
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)


def fail(message: str, code: int) -> int:
    try:
        sys.stderr.write("error: " + " ".join(message.splitlines()).strip() + "\n")
        sys.stderr.flush()
    except (AttributeError, OSError, ValueError):
        pass
    return code
