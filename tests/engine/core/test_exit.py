"""The engine's thread pool at interpreter exit never fails a computation or delays the exit."""
from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import engine.core.parallel as parallel


def test_a_pool_that_refuses_new_work_leaves_the_work_to_this_thread(monkeypatch):
    """After concurrent.futures' exit hook the pool says "cannot schedule new futures after shutdown"."""
    closed = ThreadPoolExecutor(max_workers=2)
    closed.shutdown()
    monkeypatch.setattr(parallel, "_thread_pool", lambda: closed)
    monkeypatch.setattr(parallel, "THREADS", 4)
    done = []
    parallel.run_parallel(done.append, list(range(40)))
    assert sorted(done) == list(range(40))


def test_at_exit_the_blocks_not_taken_are_left(monkeypatch):
    """The exit hook stops every thread after the block in hand (the pool's threads are joined at exit)."""
    monkeypatch.setattr(parallel, "THREADS", 2)
    done = []

    def work(item):
        done.append(item)
        if item == 3:
            parallel._on_exit()

    monkeypatch.setattr(parallel, "_exiting", False)
    try:
        parallel.run_parallel(work, list(range(1000)))
    except SystemExit:
        pass
    assert len(done) < 20
