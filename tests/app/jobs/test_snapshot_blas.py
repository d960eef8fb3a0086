"""The toy engine's snapshot runs numpy's BLAS on the worker's thread alone: its second
thread spins after every small matmul on the core the window paints with."""
from __future__ import annotations

import pytest


def test_the_toy_snapshot_computes_with_one_blas_thread_and_gives_the_count_back(monkeypatch):
    from app.jobs import snapshot
    from engine import AttentionConfig
    from engine.core import parallel

    if not parallel.blas_controllable():
        pytest.skip("this numpy's BLAS thread count cannot be set")
    setter, getter = parallel._blas_functions
    outside = getter()
    setter(2)  # as numpy starts on two cores (the tests run it on one: ./run-tests)
    seen = []
    real = snapshot.compute

    def counted(*args, **kwargs):
        seen.append(getter())
        return real(*args, **kwargs)

    monkeypatch.setattr(snapshot, "compute", counted)
    try:
        shot = snapshot.take_snapshot(AttentionConfig(text="a b c d e", d_model=16, heads=2))
        shot_off = snapshot.take_snapshot(AttentionConfig(text="a b c d e", d_model=16, heads=2), False,
                                          frozenset({(0, 1)}))
        after = getter()
    finally:
        setter(outside)
    assert seen == [1, 1, 1]  # the plain run; the ablated run and its baseline
    assert after == 2
    assert shot.result.n == shot_off.result.n == 5
