"""engine.core.positional.rope_tables, now views of a kept table grown by doubling: the same numbers
as cos / sin of the angles computed for exactly those positions (float64 angles, float32 tables)."""
from __future__ import annotations

import math

import numpy as np
import pytest

from engine.core.positional import inverse_frequencies, rope_tables


@pytest.mark.parametrize("base", [10000.0, 123456.0])
def test_rope_tables_equal_the_direct_calculation_whatever_was_asked_before(base):
    inverse = inverse_frequencies(16, base)
    for start, n in [(0, 3), (0, 200), (7, 1), (150, 300), (0, 1)]:  # small, then growing, then inside
        cos, sin = rope_tables(inverse, start, n)
        assert cos.shape == sin.shape == (n, 8) and cos.dtype == np.float32
        assert not cos.flags.writeable and not sin.flags.writeable  # shared: nobody may edit them
        for i in (0, n - 1):
            for j in range(8):
                angle = (start + i) * (base ** (-2 * j / 16))
                assert cos[i, j] == np.float32(math.cos(angle)) or abs(cos[i, j] - math.cos(angle)) < 1e-7
                assert sin[i, j] == np.float32(math.sin(angle)) or abs(sin[i, j] - math.sin(angle)) < 1e-7
