"""The engine's own threads: tiles of the attention and shares of rows give the same numbers as a
plain float64 loop written here, whatever the thread count, and numpy's BLAS gets its thread
count back afterwards."""
import importlib
import math

import numpy as np
import pytest

from engine import AttentionConfig, compute
from engine.core import parallel
from engine.core.attention import FUSED_MIN_ELEMENTS, attend


def loop_attention(q, k, v, divisor, mask=None):
    """float64, one head and one query row at a time: the definition, nothing shared with attend()."""
    heads, n, _ = q.shape
    weights = np.zeros((heads, n, k.shape[1]))
    outputs = np.zeros((heads, n, v.shape[2]))
    for h in range(heads):
        keys, values = k[h].astype(float), v[h].astype(float)
        for i in range(n):
            row = keys @ q[h, i].astype(float) / divisor  # (n_keys,)
            if mask is not None:
                row[mask[i]] = -np.inf
            e = np.exp(row - row.max())
            weights[h, i] = e / e.sum()
            outputs[h, i] = weights[h, i] @ values
    return weights, outputs


@pytest.mark.parametrize("threads", [1, 2, 3])
@pytest.mark.parametrize("heads, n", [(4, 300), (2, 600)])  # whole-head tiles; row tiles
def test_tiles_equal_the_loop(monkeypatch, threads, heads, n):
    monkeypatch.setattr(parallel, "THREADS", threads)
    rng = np.random.default_rng(n + heads)
    q, k, v = (rng.standard_normal((heads, n, 16), dtype=np.float32) for _ in range(3))
    mask = np.triu(np.ones((n, n), dtype=bool), k=1)
    assert heads * n * n >= FUSED_MIN_ELEMENTS  # the tiled path
    stages = attend(q, k, v, divisor=4.0, mask=mask)
    weights, outputs = loop_attention(q, k, v, 4.0, mask)
    np.testing.assert_allclose(stages["weights"], weights, atol=2e-6)
    np.testing.assert_allclose(stages["head_outputs"], outputs, atol=2e-5)
    np.testing.assert_array_equal(stages["weights"][:, mask], 0.0)
    scores = np.einsum("hid,hjd->hij", q.astype(float), k.astype(float))
    np.testing.assert_allclose(stages["scores"], scores, atol=2e-4)
    np.testing.assert_allclose(stages["scaled"][:, ~mask], scores[:, ~mask] / 4.0, atol=5e-5)
    assert np.isneginf(stages["scaled"][:, mask]).all()


def test_thread_count_changes_no_number(monkeypatch):
    config = AttentionConfig(text=" ".join(f"w{i}" for i in range(300)), tokenizer="whitespace", d_model=64, heads=4)
    monkeypatch.setattr(parallel, "THREADS", 1)
    one = compute(config)
    monkeypatch.setattr(parallel, "THREADS", 2)
    monkeypatch.setattr(importlib.import_module("engine.toy.compute"), "THREADED_MIN_SCORES", 0)  # threaded at this size
    monkeypatch.setattr(parallel, "PARALLEL_MIN_PRODUCTS", 0)  # rows shared too, not only tiles
    calls = []
    real = parallel.run_parallel
    monkeypatch.setattr(parallel, "run_parallel", lambda work, items: (calls.append(len(items)), real(work, items)))
    two = compute(config)
    assert len(calls) >= 2 and min(calls) > 1  # the projections' and W_O's rows were shared
    for name, array in one.arrays().items():
        np.testing.assert_allclose(getattr(two, name), array, rtol=1e-5, atol=1e-5, err_msg=name)  # float32 rounding of other BLAS blockings


def test_vector_diffs_against_float64():
    result = compute(AttentionConfig(text=" ".join(f"w{i}" for i in range(200)), tokenizer="whitespace", d_model=64, heads=4))
    x, out = result.x.astype(float), result.output.astype(float)
    np.testing.assert_allclose(result.diff, out - x, atol=1e-6)
    np.testing.assert_allclose(result.norm_before, np.sqrt((x * x).sum(1)), rtol=1e-5)
    np.testing.assert_allclose(result.norm_after, np.sqrt((out * out).sum(1)), rtol=1e-5)
    cosine = [np.dot(a, b) / math.sqrt(np.dot(a, a) * np.dot(b, b)) for a, b in zip(x, out)]
    np.testing.assert_allclose(result.cosine, cosine, atol=1e-5)


def test_blas_thread_count_comes_back():
    if not parallel.blas_controllable():
        pytest.skip("numpy's BLAS is not an OpenBLAS this process can reach")
    setter, getter = parallel._blas_functions
    outside = getter()
    setter(2)  # as numpy starts on two cores (./run-tests starts it on one): a count to come back to
    try:
        before = getter()
        assert before == 2
        with parallel.blas_single_threaded():
            assert getter() == 1
            with parallel.blas_single_threaded():  # nested: still one, and the outer exit restores
                assert getter() == 1
            assert getter() == 1
        assert getter() == before
        compute(AttentionConfig(text="a b c", tokenizer="whitespace", d_model=8, heads=2))
        assert getter() == before
    finally:
        setter(outside)  # the process's own count for the tests after this one


def test_blas_core_name_is_the_kernel_openblas_runs():
    """The benchmarks' header names the kernels: OPENBLAS_CORETYPE (set on some machines, read when
    OpenBLAS loads) is what the library reports when it names a core this CPU can run."""
    import os

    if not parallel.blas_controllable():
        pytest.skip("numpy's BLAS is not an OpenBLAS this process can reach")
    name = parallel.blas_core_name()
    assert isinstance(name, str) and name.isidentifier(), name
    forced = os.environ.get("OPENBLAS_CORETYPE")
    if forced in ("Haswell", "Sandybridge", "Nehalem"):  # older cores every x86-64 CPU here runs
        assert name.lower() == forced.lower()


def test_an_error_in_a_share_reaches_the_caller():
    def work(rows):
        if rows.start >= 5:
            raise ValueError("share failed")

    with pytest.raises(ValueError, match="share failed"):
        parallel.run_parallel(work, parallel.chunks(10, 4))


def test_keep_freed_memory_reports_what_it_did():
    import platform

    from engine.core.memory import keep_freed_memory

    assert keep_freed_memory() is (platform.libc_ver()[0] == "glibc")
    # the process still computes normally afterwards
    result = compute(AttentionConfig(text="a b c", tokenizer="whitespace", d_model=8, heads=2))
    np.testing.assert_allclose(result.weights.sum(-1), 1.0, atol=1e-6)


def test_embedding_memo_is_bounded_and_changes_no_vector(monkeypatch):
    from engine.toy import embeddings

    embeddings.clear_memo()
    cap = 10 * embeddings._entry_bytes("t10", np.zeros(16, np.float32))  # room for 10 vectors of 16
    monkeypatch.setattr(embeddings, "MEMO_BYTES", cap)
    texts = [f"t{i}" for i in range(25)] + ["t3", "t3"]
    first = embeddings.static_embeddings(texts, 16, 7)
    assert 0 < embeddings._memo_bytes <= cap and sum(map(len, embeddings._memo.values())) == 10
    again = embeddings.static_embeddings(texts, 16, 7)  # some from the memo, some made anew
    np.testing.assert_array_equal(first, again)
    for text, row in zip(texts, first):
        np.testing.assert_array_equal(row, embeddings.token_vector(text, 16, 7))
    table = embeddings.static_embeddings(["t1", "x"], 16, 7, {"x": [1.0] * 16})
    np.testing.assert_array_equal(table[1], 1.0)
    np.testing.assert_array_equal(table[0], embeddings.token_vector("t1", 16, 7))
    embeddings.clear_memo()


def test_split_and_merge_heads_into_row_slices():
    from engine.core.attention import merge_heads, split_heads

    matrix = np.arange(5 * 12, dtype=np.float32).reshape(5, 12)
    heads = split_heads(matrix, 3)  # (3, 5, 4)
    assert heads[1, 2].tolist() == matrix[2, 4:8].tolist()
    into = np.zeros((3, 5, 4), np.float32)
    split_heads(matrix[1:4], 3, out=into[:, 1:4])  # rows 1-3 only
    np.testing.assert_array_equal(into[:, 1:4], heads[:, 1:4])
    np.testing.assert_array_equal(into[:, [0, 4]], 0)
    np.testing.assert_array_equal(merge_heads(heads), matrix)
    merged = np.zeros_like(matrix)
    merge_heads(heads[:, 2:], out=merged[2:])
    np.testing.assert_array_equal(merged[2:], matrix[2:])
    np.testing.assert_array_equal(merged[:2], 0)
