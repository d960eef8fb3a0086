"""app.jobs.snapshot.block_mean (the heatmaps' and thumbnails' block averages, now by strided adds)
against a float64 loop over the blocks written here."""
from __future__ import annotations

import numpy as np
import pytest

from app.jobs.snapshot import block_mean


def loop_block_mean(array, max_rows, max_columns):
    rows, columns = array.shape[-2:]
    rf, cf = -(-rows // max_rows), -(-columns // max_columns)
    out_rows, out_columns = -(-rows // rf), -(-columns // cf)
    flat = np.asarray(array, np.float64).reshape(-1, rows, columns)
    out = np.zeros((flat.shape[0], out_rows, out_columns))
    for m in range(flat.shape[0]):
        for i in range(out_rows):
            for j in range(out_columns):
                out[m, i, j] = flat[m, i * rf:(i + 1) * rf, j * cf:(j + 1) * cf].mean()
    return out.reshape(array.shape[:-2] + (out_rows, out_columns))


@pytest.mark.parametrize("shape, max_rows, max_columns", [
    ((3, 128, 128), 96, 96),  # the toy's 128-token thumbnails: blocks of 2
    ((2, 97, 201), 10, 7),  # uneven: the last block of each axis is smaller
    ((300, 40), 256, 30),  # a token × dimension heatmap
    ((4, 5, 5), 96, 96),  # small enough: returned as it is
])
def test_block_mean_matches_a_loop_over_blocks(shape, max_rows, max_columns):
    array = np.random.default_rng(sum(shape)).random(shape, dtype=np.float32)
    got = block_mean(array, max_rows, max_columns)
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, loop_block_mean(array, max_rows, max_columns), rtol=2e-6, atol=1e-7)
