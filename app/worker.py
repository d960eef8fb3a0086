"""The background threads that compute, and the lanes that bring their results back.

A :class:`Lane` belongs to the code that uses it (a panel, the controller, the window). Its
``submit(fn, *args)`` replaces the lane's pending job (so 200 rapid edits compute a handful of
times, never 200), and only the latest submission's answer arrives, as ``done(value)`` or
``failed(error)`` emitted on the GUI thread: the lane owns its generation counter, so no user
filters stale results. Answers cross threads through a queued signal of the lane itself.

A long job is a *task* (Orange3's ``ConcurrentMixin`` / ``TaskState``): ``lane.start(task, *args)``
runs ``task(state, *args)``, where the :class:`TaskState` reports ``set_progress(done, total)`` and
``set_partial_result(value)`` (arriving as the lane's ``progressed`` and ``partial`` signals on the
GUI thread, dropped when stale like answers) and answers ``is_interruption_requested()``: True once
the lane is cancelled, started again, given a new job, or the window closes. The task returns what
it has; the GUI thread never drives a job's loop (one task runs the whole patching grid, and its
rows arrive as partial results), and no panel keeps a relay object or a stop flag of its own.

The threads are daemons: closing the window while a long NumPy call runs does not wait for it, and
a task stops at its next check. Jobs run on one thread, except those of a ``long`` lane (the head
ranking, patching: a minute on a decoder), which run on a second thread started on first use, so a
long analysis never holds the thread that computes edits. At most two threads per window.
"""
from __future__ import annotations

import sys
import threading
import time
import traceback
from typing import Any, Callable

from PySide6.QtCore import QObject, Signal


class TaskState:
    """What a running task sees (Orange3's ``TaskState``); made by :meth:`Lane.start`, used in the
    worker thread. Reports of a task whose lane has moved on are never emitted."""

    def __init__(self, lane: "Lane", generation: int) -> None:
        self._lane, self._generation, self._worker = lane, generation, lane._worker
        self._interrupted = threading.Event()
        self._taken = threading.Event()  # the GUI thread has handled the latest partial result

    def is_interruption_requested(self) -> bool:
        """True once the lane was cancelled or given another job, or the window is closing."""
        return self._interrupted.is_set() or self._worker._stopping

    def set_progress(self, done: int, total: int) -> None:
        """``done`` of ``total`` steps: the lane's ``progressed(done, total)`` on the GUI thread."""
        self._emit(self._lane._progress_arrived, int(done), int(total))

    def set_partial_result(self, value, *, wait: float = 0.0) -> None:
        """A result so far (read-only: the GUI thread draws it while the task goes on): the
        lane's ``partial(value)`` on the GUI thread. ``wait``: block at most this many seconds
        until its slots have run (or the task is interrupted) — the GIL stays free while the GUI
        thread draws, instead of every Python callback of the drawing waiting for it."""
        self._taken.clear()
        self._emit(self._lane._partial_arrived, value)
        if wait > 0 and not self.is_interruption_requested():
            self._taken.wait(wait)

    def _emit(self, signal_of, *values) -> None:
        if self.is_interruption_requested():
            return
        try:
            signal_of.emit(self._generation, *values)
        except RuntimeError:  # the lane (or its window) was deleted while the task ran: nobody listens
            self._interrupted.set()


# How long a thread running Python code keeps the GIL while another asks for it. The default
# (5 ms) is paid once per competing thread, and a worker's NumPy work on small arrays is mostly
# Python-level calls that hold the GIL: with two worker threads busy and the machine loaded, the GUI
# thread's timer showed gaps of 70–110 ms (99th percentile 71 ms) at 5 ms and 30–50 ms (32 ms)
# at 1 ms (benchmarks/README.md, "The GUI thread during a patching grid").
SWITCH_INTERVAL = 0.001


class Lane(QObject):
    """One stream of jobs; only the answer to the latest ``submit`` or ``start`` is emitted (GUI thread)."""

    done = Signal(object)  # the job's return value
    failed = Signal(object)  # the exception object the job raised
    progressed = Signal(int, int)  # a task's (done, total)
    partial = Signal(object)  # a task's result so far
    _arrived = Signal(int, object, float, bool)  # generation, value or error, seconds, ok (from the thread)
    _progress_arrived = Signal(int, int, int)  # generation, done, total (from the thread)
    _partial_arrived = Signal(int, object)  # generation, value (from the thread)

    def __init__(self, worker: "Worker", name: str, parent: QObject | None = None, *, first: bool = False,
                 long: bool = False) -> None:
        super().__init__(parent)
        self.name = name
        self.first = first  # run before other lanes' jobs (the picture the user waits for)
        self.long = long  # its jobs run on the second thread (long analyses)
        self.generation = 0  # of the latest submission
        self.seconds = 0.0  # how long the job behind the last emitted answer took
        self.busy = False  # a job was submitted or started and its answer has not arrived
        self._worker = worker
        self._state: TaskState | None = None  # the latest task's
        self._arrived.connect(self._on_arrived)  # queued: emitted from the worker thread
        self._progress_arrived.connect(self._on_progress)
        self._partial_arrived.connect(self._on_partial)

    def submit(self, function: Callable[..., Any], *args) -> int:
        """Run ``function(*args)`` in the worker; replaces this lane's job not yet started (and
        asks a task still running to stop)."""
        self._interrupt()
        self.generation += 1
        self.busy = True
        self._worker._enqueue(self, self.generation, function, args)
        return self.generation

    def start(self, task: Callable[..., Any], *args) -> TaskState:
        """Run ``task(state, *args)`` in the worker, ``state`` a new :class:`TaskState`; as
        :meth:`submit` otherwise (the previous task is asked to stop, its reports are dropped)."""
        self._interrupt()
        self.generation += 1
        self.busy = True
        self._state = TaskState(self, self.generation)
        self._worker._enqueue(self, self.generation, task, (self._state, *args))
        return self._state

    def cancel(self) -> None:
        """Forget the pending job, ask a running task to stop; no answer or report arrives after this."""
        self._interrupt()
        self.generation += 1
        self.busy = False
        self._worker._forget(self)

    def _interrupt(self) -> None:
        if self._state is not None:
            self._state._interrupted.set()
            self._state._taken.set()  # a task waiting for its partial result to be drawn goes on (and stops)
            self._state = None

    def _current(self, generation: int) -> bool:
        # stale: a newer submission exists (or the lane was cancelled); closing: a closed window must
        # not react (and chain new jobs)
        return generation == self.generation and not self._worker._stopping

    def _on_arrived(self, generation: int, payload, seconds: float, ok: bool) -> None:
        if not self._current(generation):
            return
        self.seconds = seconds
        self.busy = False
        self._state = None
        (self.done if ok else self.failed).emit(payload)

    def _on_progress(self, generation: int, done: int, total: int) -> None:
        if self._current(generation):
            self.progressed.emit(done, total)

    def _on_partial(self, generation: int, value) -> None:
        if self._current(generation):
            state = self._state
            self.partial.emit(value)
            if state is not None:
                state._taken.set()


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
        sys.setswitchinterval(min(sys.getswitchinterval(), SWITCH_INTERVAL))  # process-wide; never raised
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


FRACTION_STEPS = 1000  # the steps a task reports for the engine's fractions of work done


def engine_task(state: TaskState, function: Callable[..., Any], *args):
    """``function(*args, progress=…, cancelled=…)`` as a task: the engine's progress convention
    (``progress(fraction, message)``, ``cancelled()``) reported through ``state`` — for an engine
    job that takes those two callables (the head ranking, a scan)."""
    def progress(fraction: float, _message: str = "") -> None:
        state.set_progress(int(round(FRACTION_STEPS * fraction)), FRACTION_STEPS)

    return function(*args, progress=progress, cancelled=state.is_interruption_requested)
