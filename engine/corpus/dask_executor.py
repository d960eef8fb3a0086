"""A corpus job's batches on a Dask cluster: one started here, or a user's scheduler.

``DaskExecutor("local")`` starts ``LocalCluster(n_workers=2, processes=True, threads_per_worker=1,
dashboard_address=None)``: a real scheduler and worker processes on this machine, nothing to set
up. ``DaskExecutor("tcp://HOST:8786")`` connects to a running scheduler within
:data:`CONNECT_SECONDS` (an address nobody answers is one EngineError, the job not started) and
uploads the project's ``engine`` package to its workers as a zip, so they import the same code
(the workers still need NumPy, tokenizers, safetensors and the model: a bundled model's package,
or a gguf:/hf: path that exists on every worker).

Batches are submitted a few at a time (twice the workers' threads, plus two), so the job's memory
does not grow with the corpus. A worker lost mid-batch is Dask's business: the scheduler runs the
batch again elsewhere, and its one result arrives here once.
"""
from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import os
import re
import signal
import socket
import tempfile
import warnings
import zipfile
from pathlib import Path
from typing import Iterator

from ..core.errors import EngineError
from .batch import measure_batch, model_facts

CONNECT_SECONDS = 5
WORKER_SECONDS = 30  # a scheduler with no worker yet (one starting beside it) gets this long
ENGINE_DIR = Path(__file__).resolve().parent.parent  # the engine package the workers import
ADDRESS = re.compile(r"(?:tcp|tls)://[^\s/]+:[0-9]{1,5}")  # what --scheduler accepts
_LOST = (OSError, TimeoutError, asyncio.CancelledError, concurrent.futures.CancelledError)


def _distributed():
    try:
        import distributed
    except ModuleNotFoundError:
        raise EngineError("running on a Dask cluster needs the dask[distributed] package, which this Python lacks: "
                          "use `./run corpus …` (it installs requirements.txt) or pip install 'dask[distributed]'",
                          field="scheduler") from None
    return distributed


@contextlib.contextmanager
def _workers_ignore_sigint():
    """Start worker processes with SIGINT ignored (an ignored signal stays ignored across exec):
    Ctrl+C in a terminal reaches the whole process group, and the job, not each worker, answers it
    (it closes the cluster), instead of every worker printing its KeyboardInterrupt traceback."""
    try:
        previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    except ValueError:  # not the main thread: nothing to change
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


def _reachable(address: str) -> None:
    """OSError unless something accepts a TCP connection at ``address`` within CONNECT_SECONDS:
    a refused port is said at once, before Dask's client retries it for the whole timeout."""
    host, port = address.split("://", 1)[1].rsplit(":", 1)
    with socket.create_connection((host.strip("[]"), int(port)), timeout=CONNECT_SECONDS):
        pass


class DaskExecutor:
    """A ``distributed.Client`` on a local cluster or at a scheduler's address."""

    def __init__(self, scheduler: str = "local", workers: int = 2) -> None:
        distributed = _distributed()  # ~1 s to import: a missing package is said before anything else
        self.cluster = None
        self.address = scheduler
        if scheduler == "local":
            with _workers_ignore_sigint(), warnings.catch_warnings():
                # its HTTP server moves off a port another cluster holds, with a warning on stderr
                warnings.filterwarnings("ignore", message="Port .* is already in use", category=UserWarning)
                self.cluster = distributed.LocalCluster(n_workers=workers, processes=True, threads_per_worker=1,
                                                        dashboard_address=None)
            self.client = distributed.Client(self.cluster)
            self.name = f"a local Dask cluster of {workers} processes"
            return
        if not ADDRESS.fullmatch(scheduler):  # Dask would spend twice the timeout before saying so
            raise EngineError("--scheduler takes a Dask scheduler's address such as tcp://HOST:8786, not {address!r}",
                              field="scheduler", address=scheduler)
        try:
            _reachable(scheduler)
            self.client = distributed.Client(scheduler, timeout=CONNECT_SECONDS)
        except Exception as error:  # noqa: BLE001 - refused, timed out, a bad address, a non-Dask server answering garbage
            raise EngineError("cannot reach the Dask scheduler at {address} within {seconds} s ({reason}): check the "
                              "address (tcp://HOST:8786) and that `dask scheduler` runs there", field="scheduler",
                              address=scheduler, seconds=CONNECT_SECONDS,
                              reason=" ".join(str(error).split())[:200] or type(error).__name__) from None
        self.name = f"the Dask scheduler at {scheduler}"
        self._upload_engine()

    def _upload_engine(self) -> None:
        """Ship engine/*.py to the workers (Client.upload_file puts a zip on their sys.path)."""
        with tempfile.TemporaryDirectory() as folder:
            archive = os.path.join(folder, "attention_explorer_engine.zip")
            with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as packed:
                for path in sorted(ENGINE_DIR.rglob("*.py")):
                    packed.write(path, path.relative_to(ENGINE_DIR.parent).as_posix())
            self.client.upload_file(archive)

    def facts(self, model: str) -> dict:
        """The model's shape, from a worker: it imports the project and loads the model, or says why not.
        A scheduler without workers is waited for WORKER_SECONDS, then said (a job would wait forever)."""
        try:
            self.client.wait_for_workers(1, timeout=WORKER_SECONDS)
        except TimeoutError:
            raise EngineError("the Dask scheduler at {address} has no workers (waited {seconds} s): start some with "
                              "`dask worker {address}`", field="scheduler", address=self.address,
                              seconds=WORKER_SECONDS) from None
        try:
            return self.client.submit(model_facts, model, pure=False).result()
        except _LOST as error:
            raise self._lost(0, error) from None

    def map(self, calls: list) -> Iterator[tuple[int, dict]]:
        """(batch index, shard) as each batch finishes, in any order."""
        distributed = _distributed()
        threads = sum(self.client.nthreads().values()) or 1
        waiting = iter(calls)
        running = distributed.as_completed()
        index_of = {}

        def submit_next() -> None:
            call = next(waiting, None)
            if call is not None:
                future = self.client.submit(measure_batch, *call[1], pure=False)
                index_of[future.key] = call[0]
                running.add(future)

        for _ in range(2 * threads + 2):
            submit_next()
        finished = 0
        try:
            for future in running:
                shard = future.result()
                index = index_of.pop(future.key)
                future.release()
                finished += 1
                yield index, shard
                submit_next()
        except _LOST as error:
            raise self._lost(finished, error) from None

    def _lost(self, finished: int, error: BaseException) -> EngineError:
        return EngineError("the Dask cluster ({name}) stopped answering ({reason}); the {finished} batches it "
                           "finished are saved: run the same command again to resume", field="scheduler",
                           name=self.name, finished=finished,
                           reason=" ".join(str(error).split())[:200] or type(error).__name__)

    def close(self) -> None:
        try:
            self.client.close(timeout=CONNECT_SECONDS)
        except Exception:  # a scheduler already gone: nothing to close  # noqa: BLE001
            pass
        if self.cluster is not None:
            try:
                self.cluster.close(timeout=10)
            except Exception:  # noqa: BLE001 - a worker that will not stop is killed with its nanny
                pass

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()
