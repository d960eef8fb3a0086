"""The one background thread that computes, and the lanes that bring its results back.

A :class:`Lane` belongs to the code that uses it (a panel, the controller, the window). Its
``submit(fn, *args)`` replaces the lane's pending job (so 200 rapid edits compute a handful of
times, never 200), and only the latest submission's answer arrives, as ``done(value)`` or
``failed(error)`` emitted on the GUI thread: the lane owns its generation counter, so no user
filters stale results. Answers cross threads through a queued signal of the lane itself.

The thread is a daemon: closing the window while a long NumPy call runs does not wait for it.
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

    def __init__(self, worker: "Worker", name: str, parent: QObject | None = None, *, first: bool = False) -> None:
        super().__init__(parent)
        self.name = name
        self.first = first  # run before other lanes' jobs (the picture the user waits for)
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
    """Runs the latest job of each lane on one daemon thread."""

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._condition = threading.Condition()
        self._pending: dict[int, tuple[Lane, int, Callable[..., Any], tuple]] = {}  # id(lane) → job
        self._running = False
        self._stopping = False
        self._thread = threading.Thread(target=self._loop, name="attention-worker", daemon=True)
        self._thread.start()

    def lane(self, name: str, parent: QObject | None = None, *, first: bool = False) -> Lane:
        """A new lane; ``parent`` (its user) owns it. ``first``: its jobs run before the others'."""
        return Lane(self, name, parent, first=first)

    def _enqueue(self, lane: Lane, generation: int, function: Callable[..., Any], args: tuple) -> None:
        with self._condition:
            if self._stopping:
                return  # no thread will run it: kept, it would stay pending for ever (and hold its arrays)
            self._pending[id(lane)] = (lane, generation, function, args)
            self._condition.notify()

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
                key = next((k for k, job in self._pending.items() if job[0].first), next(iter(self._pending)))
                job = self._pending.pop(key)
                self._running = True
            self._run(*job)
            del job  # the lane and the arguments are not kept alive by an idle thread
            with self._condition:
                self._running = False
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
