"""The background threads that compute, and the lanes that bring their results back.

A :class:`Lane` belongs to the code that uses it (a panel, the controller, the window). Its
``submit(fn, *args)`` replaces the lane's pending job (so 200 rapid edits compute a handful of
times, never 200), and only the latest submission's answer arrives, as ``done(value)`` or
``failed(error)`` emitted on the GUI thread: the lane owns its generation counter, so no user
filters stale results. Answers cross threads through a queued signal of the lane itself.

The threads are daemons: closing the window while a long NumPy call runs does not wait for it.
Jobs run on one thread, except those of a ``long`` lane (the head ranking: a minute on a decoder),
which run on a second thread started on first use, so a long analysis never holds the thread that
computes edits (issue 26 #14). At most two threads per window.
"""
from __future__ import annotations

import threading
import time
import traceback
from typing import Any, Callable

from PySide6.QtCore import QObject, Signal


class Lane(QObject):
    """One stream of jobs; only the answer to the latest ``submit`` is emitted (GUI thread)."""

    done = Signal(object)  # the job's return value
    failed = Signal(object)  # the exception object the job raised
    _arrived = Signal(int, object, float, bool)  # generation, value or error, seconds, ok (from the thread)

    def __init__(self, worker: "Worker", name: str, parent: QObject | None = None, *, first: bool = False,
                 long: bool = False) -> None:
        super().__init__(parent)
        self.name = name
        self.first = first  # run before other lanes' jobs (the picture the user waits for)
        self.long = long  # its jobs run on the second thread (long analyses)
        self.generation = 0  # of the latest submission
        self.seconds = 0.0  # how long the job behind the last emitted answer took
        self._worker = worker
        self._arrived.connect(self._on_arrived)  # queued: emitted from the worker thread

    def submit(self, function: Callable[..., Any], *args) -> int:
        """Run ``function(*args)`` in the worker; replaces this lane's job not yet started."""
        self.generation += 1
        self._worker._enqueue(self, self.generation, function, args)
        return self.generation

    def cancel(self) -> None:
        """Forget the pending job; a running one finishes and its answer is dropped."""
        self.generation += 1
        self._worker._forget(self)

    def _on_arrived(self, generation: int, payload, seconds: float, ok: bool) -> None:
        if generation != self.generation:
            return  # stale: a newer submission exists (or the lane was cancelled)
        if self._worker._stopping:
            return  # queued before the window closed: a closed window must not react (and chain new jobs)
        self.seconds = seconds
        (self.done if ok else self.failed).emit(payload)


class Worker(QObject):
    """Runs the latest job of each lane: one daemon thread, and a second one for ``long`` lanes."""

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._condition = threading.Condition()
        self._pending: dict[int, tuple[Lane, int, Callable[..., Any], tuple]] = {}  # id(lane) → job
        self._running = 0  # jobs running now (0, 1 or 2)
        self._stopping = False
        self._thread = threading.Thread(target=self._loop, args=(False,), name="attention-worker", daemon=True)
        self._long_thread: threading.Thread | None = None  # started by the first long job
        self._thread.start()

    def lane(self, name: str, parent: QObject | None = None, *, first: bool = False, long: bool = False) -> Lane:
        """A new lane; ``parent`` (its user) owns it. ``first``: its jobs run before the others';
        ``long``: they run on the second thread, beside the computations."""
        return Lane(self, name, parent, first=first, long=long)

    def _enqueue(self, lane: Lane, generation: int, function: Callable[..., Any], args: tuple) -> None:
        with self._condition:
            if self._stopping:
                return  # no thread will run it: kept, it would stay pending for ever (and hold its arrays)
            self._pending[id(lane)] = (lane, generation, function, args)
            if lane.long and self._long_thread is None:
                self._long_thread = threading.Thread(target=self._loop, args=(True,), name="attention-worker",
                                                     daemon=True)
                self._long_thread.start()
            self._condition.notify_all()  # two threads wait, each for its own kind of job

    def _forget(self, lane: Lane) -> None:
        with self._condition:
            self._pending.pop(id(lane), None)

    def is_idle(self) -> bool:
        with self._condition:
            return not self._pending and not self._running

    def wait_until_idle(self, timeout: float = 10.0) -> bool:
        """Block until no job is pending or running (tests; never on the GUI thread in the app)."""
        deadline = time.monotonic() + timeout
        with self._condition:
            while self._pending or self._running:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return False
                self._condition.wait(remaining)
        return True

    def shutdown(self, timeout: float = 0.5) -> bool:
        """Stop the threads; wait at most ``timeout`` s in all. True when they have ended."""
        with self._condition:
            self._stopping = True
            self._pending.clear()
            self._condition.notify_all()
        deadline = time.monotonic() + timeout
        for thread in self._threads():
            thread.join(max(0.0, deadline - time.monotonic()))
        return not self.is_alive()

    def _threads(self) -> list[threading.Thread]:
        return [t for t in (self._thread, self._long_thread) if t is not None]

    def is_alive(self) -> bool:
        return any(t.is_alive() for t in self._threads())

    def _loop(self, long: bool) -> None:
        while True:
            with self._condition:
                while not self._stopping and not any(job[0].long == long for job in self._pending.values()):
                    self._condition.wait()
                if self._stopping:
                    return
                keys = [k for k, job in self._pending.items() if job[0].long == long]
                key = next((k for k in keys if self._pending[k][0].first), keys[0])
                job = self._pending.pop(key)
                self._running += 1
            self._run(*job)
            del job  # the lane and the arguments are not kept alive by an idle thread
            with self._condition:
                self._running -= 1
                self._condition.notify_all()

    def _run(self, lane: Lane, generation: int, function: Callable[..., Any], args: tuple) -> None:
        started = time.perf_counter()
        try:
            payload, ok = function(*args), True
        except BaseException as error:  # noqa: BLE001 - even SystemExit in a job must not kill the thread
            if not isinstance(error, ValueError) and not self._stopping:  # closing: nobody waits for the answer
                traceback.print_exc()
            payload, ok = error, False
        if self._stopping:
            return
        try:
            lane._arrived.emit(generation, payload, time.perf_counter() - started, ok)
        except RuntimeError:  # the lane (or its window) was deleted while the job ran: nobody listens
            pass
