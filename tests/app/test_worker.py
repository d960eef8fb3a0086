"""Lanes without a window: the latest submission wins, stale answers never arrive, failures arrive
as the exception object, nothing grows across many submissions, a job cannot kill the thread."""
import threading
import time

import pytest
from PySide6.QtCore import QObject, SIGNAL

from app.worker import Worker
from engine.core.errors import EngineError


@pytest.fixture
def worker(qapp):
    owner = QObject()
    worker = Worker(owner)
    yield worker
    worker.shutdown(2)
    owner.deleteLater()


def collect(lane):
    done, failed = [], []
    lane.done.connect(done.append)
    lane.failed.connect(failed.append)
    return done, failed


def settle(qtbot, worker):
    assert worker.wait_until_idle(60)
    qtbot.wait(20)  # the queued answers are delivered by the event loop


def slow(value, release: threading.Event):
    release.wait(5)
    return value


def test_a_stale_slow_answer_never_arrives_after_a_fast_one(qtbot, worker):
    lane = worker.lane("test")
    done, failed = collect(lane)
    release = threading.Event()
    lane.submit(slow, "slow", release)
    qtbot.waitUntil(lambda: not worker.is_idle() and not worker._pending, timeout=30_000)  # the slow job runs
    lane.submit(str.upper, "fast")
    release.set()
    settle(qtbot, worker)
    assert done == ["FAST"] and failed == []


def test_pending_jobs_are_replaced_and_only_the_latest_runs(qtbot, worker):
    blocker, release = worker.lane("block"), threading.Event()
    blocker.submit(slow, None, release)
    qtbot.waitUntil(lambda: not worker._pending, timeout=30_000)
    lane = worker.lane("test")
    done, _ = collect(lane)
    ran = []
    for i in range(50):
        lane.submit(ran.append, i)  # queued behind the blocker: each replaces the previous one
    release.set()
    settle(qtbot, worker)
    assert ran == [49] and done == [None]


def test_lanes_do_not_see_each_others_answers(qtbot, worker):
    a, b = worker.lane("a"), worker.lane("b")
    done_a, _ = collect(a)
    done_b, _ = collect(b)
    a.submit(lambda: "from a")
    b.submit(lambda: "from b")
    settle(qtbot, worker)
    assert done_a == ["from a"] and done_b == ["from b"]


def test_a_failure_arrives_as_the_exception_object(qtbot, worker):
    lane = worker.lane("test")
    done, failed = collect(lane)
    error = EngineError("d_model must be at least {minimum}, not {value}", field="d_model", minimum=1, value=0)

    def fail():
        raise error

    lane.submit(fail)
    settle(qtbot, worker)
    assert done == [] and failed == [error]
    assert failed[0].field == "d_model" and failed[0].values == {"minimum": 1, "value": 0}


def test_system_exit_in_a_job_is_a_failure_and_the_thread_lives_on(qtbot, worker, capsys):
    lane = worker.lane("test")
    done, failed = collect(lane)
    lane.submit(lambda: (_ for _ in ()).throw(SystemExit(3)))
    settle(qtbot, worker)
    assert len(failed) == 1 and isinstance(failed[0], SystemExit)
    lane.submit(lambda: 7)
    settle(qtbot, worker)
    assert worker.is_alive() and done == [7]


def test_cancel_drops_the_running_answer(qtbot, worker):
    lane = worker.lane("test")
    done, failed = collect(lane)
    release = threading.Event()
    lane.submit(slow, "late", release)
    qtbot.waitUntil(lambda: not worker._pending, timeout=30_000)
    lane.cancel()
    release.set()
    settle(qtbot, worker)
    assert done == [] and failed == []


def test_nothing_grows_across_1000_submissions(qtbot, worker):
    lane = worker.lane("test")
    done, failed = collect(lane)
    threads = threading.active_count()
    receivers = (lane.receivers(SIGNAL("done(PyObject)")), lane.receivers(SIGNAL("failed(PyObject)")))
    assert receivers == (1, 1)
    for i in range(1000):
        lane.submit(int, i)
        if i % 100 == 99:
            settle(qtbot, worker)
    settle(qtbot, worker)
    assert done[-1] == 999 and failed == []
    assert threading.active_count() == threads
    assert (lane.receivers(SIGNAL("done(PyObject)")), lane.receivers(SIGNAL("failed(PyObject)"))) == receivers
    assert worker._pending == {}


def test_an_answer_for_a_deleted_lane_is_dropped_quietly(qtbot, worker):
    owner = QObject()
    lane = worker.lane("test", owner)
    release = threading.Event()
    lane.submit(slow, 1, release)
    qtbot.waitUntil(lambda: not worker._pending, timeout=30_000)
    import shiboken6

    shiboken6.delete(owner)  # the panel is gone while its job runs
    release.set()
    settle(qtbot, worker)
    time.sleep(0.01)
    assert worker.is_alive()


# ---------------------------------------------------------------------- after shutdown
# A closed window's lanes used to keep working: an answer already in Qt's event queue when the
# window closed was delivered afterwards, its panel chained a follow-up job (the arithmetic panel's
# value cell, the scaling sweep's next point) onto the stopped worker, and that job stayed pending
# for ever: ``wait_until_idle`` waited its full timeout (seven window tests spent 60 s each in
# teardown) and the closed window kept its arrays alive in the dead queue.


def test_a_job_submitted_after_shutdown_is_dropped_not_left_pending(qtbot, worker):
    lane = worker.lane("late")
    done, failed = collect(lane)
    assert worker.shutdown(2)
    lane.submit(str.upper, "never")
    assert worker.is_idle(), "a job no thread will ever run must not count as pending"
    started = time.monotonic()
    assert worker.wait_until_idle(5)
    assert time.monotonic() - started < 1
    qtbot.wait(20)
    assert done == [] and failed == []


def test_an_answer_in_flight_at_shutdown_is_not_delivered(qtbot, worker):
    """The answer was emitted (queued) before the shutdown; the event loop runs only after it."""
    lane = worker.lane("in-flight")
    done, failed = collect(lane)
    lane.submit(str.upper, "late")
    assert worker.wait_until_idle(10)  # emitted from the thread: waiting in the GUI thread's queue
    assert worker.shutdown(2)
    qtbot.wait(20)
    assert done == [] and failed == [], "a stopped worker's answer reached its (closed) user"


# ---------------------------------------------------------------------- tasks (lane.start)
def counting(state, stop_at: int | None, step_seconds: float = 0.0):
    """A task: one partial result and one progress report a step, until interrupted (or ``stop_at``)."""
    done = 0
    while not state.is_interruption_requested() and (stop_at is None or done < stop_at):
        done += 1
        time.sleep(step_seconds)
        state.set_progress(done, stop_at or 0)
        state.set_partial_result(done)
    return done


def test_a_task_reports_progress_and_partial_results_in_order_then_its_answer(qtbot, worker):
    lane = worker.lane("task")
    done, failed = collect(lane)
    partial, progress = [], []
    lane.partial.connect(partial.append)
    lane.progressed.connect(lambda d, t: progress.append((d, t)))
    lane.start(counting, 5)
    assert lane.busy
    settle(qtbot, worker)
    assert partial == [1, 2, 3, 4, 5] and progress == [(d, 5) for d in range(1, 6)]
    assert done == [5] and failed == [] and not lane.busy


def test_cancel_stops_a_running_task_and_nothing_of_it_arrives_after(qtbot, worker):
    lane = worker.lane("task")
    done, failed = collect(lane)
    partial = []
    lane.partial.connect(partial.append)
    state = lane.start(counting, None, 0.002)
    qtbot.waitUntil(lambda: len(partial) >= 3, timeout=30_000)  # it runs, and its rows reach the GUI thread
    lane.cancel()
    seen = len(partial)
    assert state.is_interruption_requested() and not lane.busy
    assert worker.wait_until_idle(30), "the task did not stop when asked"  # it never ends by itself
    qtbot.wait(30)
    assert len(partial) == seen and done == [] and failed == []


def test_a_new_start_interrupts_the_previous_task(qtbot, worker):
    lane = worker.lane("task", long=True)
    done, _ = collect(lane)
    first = lane.start(counting, None, 0.002)
    qtbot.waitUntil(lambda: not worker._pending, timeout=30_000)
    lane.start(counting, 2)
    assert first.is_interruption_requested()
    settle(qtbot, worker)
    assert done == [2]


def test_closing_stops_a_running_task_within_a_second(qtbot, worker):
    lane = worker.lane("task", long=True)
    partial = []
    lane.partial.connect(partial.append)
    lane.start(counting, None, 0.01)
    qtbot.waitUntil(lambda: bool(partial), timeout=30_000)
    started = time.monotonic()
    assert worker.shutdown(1.0) and not worker.is_alive()
    assert time.monotonic() - started < 1.0


def handing_over(state, rows: int, waited: list):
    """A task that hands each row over and waits (at most 5 s) until the GUI thread has taken it."""
    for row in range(rows):
        if state.is_interruption_requested():
            break
        started = time.monotonic()
        state.set_partial_result(row, wait=5.0)
        waited.append(time.monotonic() - started)
    return rows


def test_a_task_waits_for_its_partial_result_to_be_taken_and_cancel_ends_the_wait(qtbot, worker):
    lane = worker.lane("task")
    done, _ = collect(lane)
    taken, waited = [], []
    lane.partial.connect(taken.append)
    lane.start(handing_over, 3, waited)
    qtbot.waitUntil(lambda: done == [3], timeout=30_000)  # the event loop runs: each row is taken at once
    assert taken == [0, 1, 2] and done == [3] and max(waited) < 1.0
    waited.clear()
    lane.start(handing_over, 3, waited)
    deadline = time.monotonic() + 5
    while not worker._running and time.monotonic() < deadline:  # no event loop: nobody takes the row
        time.sleep(0.005)
    time.sleep(0.05)
    lane.cancel()
    # a task still waiting for its row waits 5 s: 3 s tells it from one that ends when cancelled, under load too
    assert worker.wait_until_idle(3.0), "a cancelled task kept waiting for its row to be taken"
    assert len(waited) == 1
