"""What the model benchmarks share: the English text they cut their inputs from, and the CPU's name
for the figures' header line. Imported as ``bench_common`` (a script's own folder is on sys.path)."""
from __future__ import annotations

import os
import platform
from pathlib import Path

# cut to the token counts a benchmark needs (repeated as often as it must be)
TEXT = (
    "Attention lets every word in a sentence look at every other word and decide how much "
    "each one matters for its own meaning. A query asks a question, the keys answer how well "
    "they match, and the values carry what is passed on. "
)


def blas_kernels() -> str:
    """The kernels numpy's OpenBLAS runs here, e.g. "OpenBLAS SkylakeX kernels". Some machines set
    OPENBLAS_CORETYPE (with OPENBLAS_L2_SIZE) to an older core than the CPU's; the figure then says so:
    on this project's AVX-512 VMs "Haswell" halves the GEMMs' speed (benchmarks/README.md)."""
    import ctypes

    import numpy as np

    np.dot(np.ones((2, 2)), np.ones((2, 2)))  # numpy's BLAS loaded
    core = "unknown"
    try:
        with open("/proc/self/maps", encoding="utf-8", errors="replace") as maps:
            paths = sorted({line.split(None, 5)[5].strip() for line in maps
                            if "openblas" in line.lower() and len(line.split(None, 5)) == 6})
    except OSError:
        paths = []
    for path in paths:
        try:
            library = ctypes.CDLL(path)
        except OSError:
            continue
        for name in ("scipy_openblas_get_corename64_", "scipy_openblas_get_corename",
                     "openblas_get_corename64_", "openblas_get_corename"):
            function = getattr(library, name, None)
            if function is not None:
                function.restype = ctypes.c_char_p
                core = function().decode()
                break
    forced = os.environ.get("OPENBLAS_CORETYPE")
    return f"OpenBLAS {core} kernels" + (f" (OPENBLAS_CORETYPE={forced} set)" if forced else "")


def cpu_name() -> str:
    """The CPU's model name from /proc/cpuinfo (platform.processor() is empty on most Linux)."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine() or "unknown CPU"
