"""Estimate a trace's memory before allocating it, and refuse one over the budget; and the budget of
a model's float32 weights, which follows the machine (the larger of 4 GiB and half the memory
available), checked before a weights file is read."""
from __future__ import annotations

import functools
import math
import os

from .errors import EngineError

DEFAULT_MEMORY_BUDGET = 2 * 1024**3  # bytes: a whole trace (every model's, every analysis's) must fit in 2 GiB
BYTES_PER_NUMBER = 4  # float32
FIXED_BYTES = 64 * 1024**2  # the token-vector memo (32 MiB), the weights' 8 MiB drawing block, BLAS buffers


def estimate_trace_bytes(n: int, d_model: int, heads: int, rope: bool = False) -> int:
    """Bytes of every array in the trace plus the temporaries made on the way, for n tokens.

    embeddings, positional, x, concat, output, diff: 6·n·d; q, k, v, head_outputs: 4·n·d
    (+2·n·d unrotated q, k with RoPE); the (n, 3d) product x·[W_Q | W_K | W_V] before it is
    split into heads: 3·n·d; W_Q, W_K, W_V, W_O: 4·d² (one packed array, no copies); scores,
    scaled, weights: 3·heads·n², plus one heads·n² temporary while the softmax runs; and
    FIXED_BYTES. Checked against measured peaks (benchmarks/bench_memory.py): 1 token at d_model
    8192 peaks 1.09 GB over the interpreter, estimate 1.14 GB; 2700 × 8192 × 1: 2.12 GB, 2.41 GB.
    """
    per_token = (13 + (2 if rope else 0)) * n * d_model
    matrices = 4 * d_model * d_model
    square = 4 * heads * n * n
    return BYTES_PER_NUMBER * (per_token + matrices + square) + FIXED_BYTES


# An export (engine.files.export) beside the trace: the token and word names, spans and word index
# ((n,)-sized), the zip writer's buffers and NumPy's write chunk (16 MiB, for strings only: numbers go
# out as views of their own memory).
EXPORT_FIXED_BYTES = 16 * 1024**2


def word_view_bytes(n: int, words: int, heads: int) -> int:
    """Bytes the word view of an export holds while it is written one layer at a time
    (engine.text.words.roll_up_blocks): the membership matrix M (n, w) and the query averages
    (w, n) (8·n·w); one layer's A·M (heads, n, w) and its averaged result (heads, w, w); all
    float32. Nothing of (layers, heads, …) size: the layers are written as they are made."""
    return 2 * BYTES_PER_NUMBER * n * words + BYTES_PER_NUMBER * heads * (n * words + words * words)


def check_export_budget(n: int, trace_bytes: int, words: int, heads: int, budget: int) -> int:
    """The bytes an export holds at once: the trace (``trace_bytes``, what the forward pass keeps)
    plus its word view (:func:`word_view_bytes`) and EXPORT_FIXED_BYTES. EngineError naming both
    parts when that exceeds ``budget``; returns the total. Checked before computing anything."""
    extra = word_view_bytes(n, words, heads) + EXPORT_FIXED_BYTES
    total = trace_bytes + extra
    if total > budget:
        raise EngineError(
            "exporting {n} tokens needs about {need} (the trace {trace} and {extra} to write it with its {words} "
            "words), over the {budget} memory budget: shorten the text", field="text", n=n, need=format_bytes(total),
            trace=format_bytes(trace_bytes), extra=format_bytes(extra), words=words, budget=format_bytes(budget))
    return total


WINDOW_TRACES = 2  # the window holds the trace on screen while it computes the next one


def check_window_budget(n: int, each: int, budget: int, longest=None) -> int:
    """The window's memory check: ``each`` bytes for one computation of ``n`` tokens (its trace,
    temporaries and the view made of it), held WINDOW_TRACES times at once (the snapshot on
    screen stays until the next one arrives, and every edit makes a new trace, reusing the old
    one's prefix). EngineError naming the sizes and, given ``longest()``, the most tokens that fit
    in the window; returns the total."""
    need = WINDOW_TRACES * each
    if need > budget:
        if longest is None:
            raise EngineError("{n} tokens need about {need} in the window (the trace on screen and the next one, "
                              "{each} each), over the {budget} memory budget: shorten the text", field="text", n=n,
                              need=format_bytes(need), each=format_bytes(each), budget=format_bytes(budget))
        raise EngineError("{n} tokens need about {need} in the window (the trace on screen and the next one, "
                          "{each} each), over the {budget} memory budget: shorten the text (at most about {longest} "
                          "tokens fit in the window)", field="text", n=n, need=format_bytes(need),
                          each=format_bytes(each), budget=format_bytes(budget), longest=longest())
    return need


def format_bytes(count: float) -> str:
    """1536 → '1.5 KiB'."""
    for unit in ("B", "KiB", "MiB", "GiB"):
        if count < 1024 or unit == "GiB":
            return f"{count:.0f} {unit}" if unit == "B" else f"{count:.1f} {unit}"
        count /= 1024
    return f"{count:.1f} GiB"  # pragma: no cover


def check_budget(n: int, d_model: int, heads: int, rope: bool, budget: int) -> int:
    """The estimate in bytes; raises EngineError when it exceeds ``budget``."""
    estimate = estimate_trace_bytes(n, d_model, heads, rope)
    if estimate > budget:
        raise EngineError(
            "{n} tokens at d_model {d_model} with {heads} heads need about {needed}, over the {budget} memory "
            "budget: shorten the text, or use fewer heads or a smaller d_model",
            n=n, d_model=d_model, heads=heads, needed=format_bytes(estimate), budget=format_bytes(budget)
        )
    return estimate


def check_trace_budget(n: int, estimate: int, budget: int, longest=None) -> int:
    """A pretrained model's memory check: ``estimate`` bytes for the trace of ``n`` tokens
    against ``budget``; EngineError naming both (and, given ``longest()``, the most tokens that
    fit). Returns the estimate. The toy's own check (:func:`check_budget`) names its settings."""
    if estimate > budget:
        if longest is None:
            raise EngineError("{n} tokens need about {need} for the full trace, over the {budget} memory budget: "
                              "shorten the text", field="text", n=n, need=format_bytes(estimate),
                              budget=format_bytes(budget))
        raise EngineError("{n} tokens need about {need} for the full trace, over the {budget} memory budget: "
                          "shorten the text (at most about {longest} tokens fit)", field="text", n=n,
                          need=format_bytes(estimate), budget=format_bytes(budget), longest=longest())
    return estimate


class OutOfMemory(EngineError, MemoryError):
    """The system ran out of memory within the budget: says what was too big and what to do.

    Both an EngineError (the window and the command line show it as any bad input) and a
    MemoryError (code that handles running out of memory still catches it).
    """


def explain_memory_error(compute_function):
    """Decorate ``compute(config)`` so that a bare MemoryError ("MemoryError: MemoryError")
    becomes an :class:`OutOfMemory` naming the sizes and the way out."""
    @functools.wraps(compute_function)
    def wrapper(config, *args, **kwargs):
        try:
            return compute_function(config, *args, **kwargs)
        except OutOfMemory:
            raise
        except MemoryError:
            pass  # out of the except block, so the arrays of the failed attempt can be freed first
        raise OutOfMemory(
            "not enough memory for {chars} characters of text at d_model {d_model} with {heads} heads "
            "(within the {budget} budget, but the system has less free): shorten the text, use a smaller "
            "d_model or fewer heads, or close other programs",
            chars=len(config.text), d_model=config.d_model, heads=config.heads,
            budget=format_bytes(config.memory_budget))
    return wrapper


# glibc's mallopt() parameters (malloc.h).
_M_TRIM_THRESHOLD = -1
_M_MMAP_THRESHOLD = -3


def keep_freed_memory(mmap_threshold: int = 256 * 1024**2, trim_threshold: int = 512 * 1024**2) -> bool:
    """Ask glibc to keep freed memory for the next trace instead of giving it back to the kernel.

    Why: every computation allocates its arrays afresh, and a page the kernel hands out again must
    be faulted in and zeroed. Measured here at 128 tokens, 8 heads: attend() 2.6 ms with glibc's
    defaults, 1.1 ms keeping freed memory (the kernel time was 1.9 ms a call). Arrays up to
    ``mmap_threshold`` bytes then come from the heap, which keeps up to ``trim_threshold`` bytes
    freed at its top for reuse. The cost: after a long text the process keeps that memory.

    Called once by the program (main.py) and the benchmarks, not by the engine on import: it
    changes the whole process. Returns False where there is no glibc (macOS, Windows, musl).
    """
    import ctypes
    import platform

    if platform.libc_ver()[0] != "glibc":
        return False
    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):
        return False
    mallopt.argtypes, mallopt.restype = [ctypes.c_int, ctypes.c_int], ctypes.c_int
    return bool(mallopt(_M_MMAP_THRESHOLD, int(mmap_threshold)) and mallopt(_M_TRIM_THRESHOLD, int(trim_threshold)))


def give_back_freed_memory() -> bool:
    """Hand the memory glibc keeps after frees back to the kernel (malloc_trim), once something
    large is released for good (a model): keep_freed_memory() keeps up to 512 MiB at the heap's top
    and a model's arrays leave holes below it. Measured (benchmarks/bench_memory.py): three SmolLM2
    copies opened in turn, back on the toy engine, 1,417 MB resident with one copy kept; 660 MB after
    the trim. False where there is no glibc."""
    import ctypes
    import platform

    if platform.libc_ver()[0] != "glibc":
        return False
    try:
        return bool(ctypes.CDLL(None).malloc_trim(0))
    except (OSError, AttributeError):
        return False


# ---------------------------------------------------------------- the weights budget

WEIGHTS_BUDGET_ENV = "ATTENTION_EXPLORER_WEIGHTS_GIB"
DEFAULT_WEIGHTS_BUDGET = 4 * 1024**3  # the least default: float32 weights of 1 B parameters; GGUF's too


def weights_budget() -> int:
    """Bytes the float32 weights may take: the env variable (GiB) when set, else the larger of
    DEFAULT_WEIGHTS_BUDGET and half the memory available now (a 3 B model opens on a 32 GB laptop;
    the other half stays for the traces, the window and the rest of the machine)."""
    value = os.environ.get(WEIGHTS_BUDGET_ENV, "")
    try:
        gib = float(value)
    except ValueError:
        gib = math.nan
    if math.isfinite(gib) and gib > 0:
        return int(gib * 1024**3)
    return max(DEFAULT_WEIGHTS_BUDGET, available_memory() // 2)


def available_memory() -> int:
    """Bytes of memory available to a new allocation now (Linux: MemAvailable; elsewhere the physical
    pages free, via os.sysconf); 0 when the system does not say."""
    try:
        with open("/proc/meminfo", "rb") as file:
            for line in file.read(1 << 16).splitlines():
                if line.startswith(b"MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (AttributeError, ValueError, OSError):
        return 0
