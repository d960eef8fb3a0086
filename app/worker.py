"""The one background thread that computes, and the generation rule that drops stale results.

Each request carries a generation number. A new request in a lane replaces the pending one
(so 200 rapid edits compute a handful of times, never 200), and the main thread drops any
result whose generation is not the latest it asked for. Results reach the main thread
through Qt signals of a QObject that lives there (queued across threads).

The thread is a daemon: closing the window while a long NumPy call runs does not wait for it.
"""
from __future__ import annotations

import threading
import time
import traceback
from dataclasses import dataclass
from typing import Any, Callable

from PySide6.QtCore import QObject, Signal


@dataclass(frozen=True)
class Job:
    """A unit of work: ``function(*args)`` in ``lane``, tagged with a generation number."""

    lane: str
    generation: int
    function: Callable[..., Any]
    args: tuple = ()


class Worker(QObject):
    """Runs the latest job of each lane on one daemon thread; reports through signals."""

    finished = Signal(str, int, object, float)  # lane, generation, value, seconds
    failed = Signal(str, int, str)  # lane, generation, message
    started = Signal(str, int)  # lane, generation

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._condition = threading.Condition()
        self._pending: dict[str, Job] = {}
        self._running: Job | None = None
        self._stopping = False
        self._thread = threading.Thread(target=self._loop, name="attention-worker", daemon=True)
        self._thread.start()

    def submit(self, lane: str, generation: int, function: Callable[..., Any], *args) -> None:
        """Queue ``function(*args)``; it replaces any job of the same lane not yet started."""
        with self._condition:
            self._pending[lane] = Job(lane, generation, function, args)
            self._condition.notify()

    def cancel(self, lane: str) -> None:
        """Forget the lane's pending job (a running one finishes, and its result is dropped)."""
        with self._condition:
            self._pending.pop(lane, None)

    def is_idle(self) -> bool:
        with self._condition:
            return not self._pending and self._running is None

    def wait_until_idle(self, timeout: float = 10.0) -> bool:
        """Block until no job is pending or running (tests; never on the GUI thread in the app)."""
        deadline = time.monotonic() + timeout
        with self._condition:
            while self._pending or self._running is not None:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return False
                self._condition.wait(remaining)
        return True

    def shutdown(self, timeout: float = 0.5) -> bool:
        """Stop the thread; wait at most ``timeout`` s. True when the thread has ended."""
        with self._condition:
            self._stopping = True
            self._pending.clear()
            self._condition.notify_all()
        self._thread.join(timeout)
        return not self._thread.is_alive()

    def is_alive(self) -> bool:
        return self._thread.is_alive()

    def _loop(self) -> None:
        while True:
            with self._condition:
                while not self._pending and not self._stopping:
                    self._condition.wait()
                if self._stopping:
                    return
                # compute before anything else: it is what the user is waiting for
                lane = "compute" if "compute" in self._pending else next(iter(self._pending))
                job = self._running = self._pending.pop(lane)
            self._run(job)
            with self._condition:
                self._running = None
                self._condition.notify_all()

    def _emit(self, signal, *args) -> None:
        """Emit unless the window is gone (the QObject deleted while this thread ran)."""
        if self._stopping:
            return
        try:
            signal.emit(*args)
        except RuntimeError:  # "Signal source has been deleted": nobody is listening any more
            self._stopping = True

    def _run(self, job: Job) -> None:
        try:
            self._emit(self.started, job.lane, job.generation)
            started = time.perf_counter()
            value = job.function(*job.args)
            seconds = time.perf_counter() - started
        except Exception as error:  # noqa: BLE001 - every failure becomes a message
            message = str(error) or type(error).__name__
            if not isinstance(error, ValueError):
                message = f"{type(error).__name__}: {message}"
                traceback.print_exc()
            self._emit(self.failed, job.lane, job.generation, message)
            return
        self._emit(self.finished, job.lane, job.generation, value, seconds)
