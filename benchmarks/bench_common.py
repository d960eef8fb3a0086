"""What the model benchmarks share: the English text they cut their inputs from (and the cut to a
token count), and the CPU's name for the figures' header line. Imported as ``bench_common`` (a script's own folder is on sys.path)."""
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



def text_of(model, tokens: int) -> str:
    """The prefix of TEXT (repeated) that ``model`` reads as ``tokens`` tokens, specials included."""
    words = (TEXT * 8).split()
    for count in range(1, len(words) + 1):
        text = " ".join(words[:count])
        if len(model.tokenize(text).tokens) >= tokens:
            return text
    return " ".join(words)


def blas_kernels() -> str:
    """The kernels numpy's OpenBLAS runs here, e.g. "OpenBLAS SkylakeX kernels". Some machines set
    OPENBLAS_CORETYPE (with OPENBLAS_L2_SIZE) to an older core than the CPU's; the figure then says so:
    on this project's AVX-512 VMs "Haswell" halves the GEMMs' speed (benchmarks/README.md)."""
    from engine.core.parallel import blas_core_name

    forced = os.environ.get("OPENBLAS_CORETYPE")
    return (f"OpenBLAS {blas_core_name() or 'unknown'} kernels"
            + (f" (OPENBLAS_CORETYPE={forced} set)" if forced else ""))


def cpu_name() -> str:
    """The CPU's model name from /proc/cpuinfo (platform.processor() is empty on most Linux)."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine() or "unknown CPU"
