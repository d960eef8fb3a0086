"""The engine's own threads, and numpy's BLAS held to one thread while they run.

Why: numpy runs element-wise ufuncs on one core and OpenBLAS's threads keep spinning after a
matmul, so a large computation splits its work itself (rows, (head, row block) tiles) among
``THREADS`` threads calling BLAS single-threaded; a small one runs on the calling thread
(:class:`engine_threads`). Measurements: benchmarks/README.md ("Why the engine is shaped this way").

:func:`blas_single_threaded` finds numpy's OpenBLAS in the process (``/proc/self/maps``, then its
``openblas_set_num_threads`` under the names numpy's and other builds export) and sets it to one
thread for the duration, restoring the previous count afterwards; nested and concurrent callers
share one count. Where numpy uses another BLAS (MKL, Accelerate) or the library is not found, it
does nothing: the results are the same, only the cores may be oversubscribed.
"""
from __future__ import annotations

import ctypes
import os
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Callable, Sequence


def _usable_cpus() -> int:
    """CPUs this process may run on (its affinity mask where the OS has one, e.g. in a container)."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


THREADS = max(1, min(_usable_cpus(), 8))
# Inside engine_threads(True), row-wise work of fewer multiply-adds than this (~0.1 ms) runs in
# one call: a hand-off to a sleeping thread costs 100–180 µs here.
PARALLEL_MIN_PRODUCTS = 1 << 22
# A computation with at least this many attention scores (heads·n², e.g. 8 heads × 256²) runs
# inside engine_threads(True); a smaller one on the calling thread (engine/toy/compute.py, bert.py).
THREADED_MIN_SCORES = 1 << 19
# Row slices stay at least this long: each slice's matmul packs the whole weight matrix again.
MIN_ROWS_PER_SLICE = 256

_pool: ThreadPoolExecutor | None = None
_pool_pid = 0
_pool_lock = threading.Lock()

# Names under which OpenBLAS builds export their thread-count functions (numpy / scipy wheels
# add a "scipy_" prefix and a "64_" suffix for the 64-bit-integer build).
_SET_NAMES = (
    "scipy_openblas_set_num_threads64_", "scipy_openblas_set_num_threads",
    "openblas_set_num_threads64_", "openblas_set_num_threads",
)
_GET_NAMES = tuple(name.replace("set_", "get_") for name in _SET_NAMES)
_CORE_NAMES = tuple(name.replace("set_num_threads", "get_corename") for name in _SET_NAMES)

_blas_lock = threading.Lock()
_blas_users = 0
_blas_saved = 0
_blas_functions: tuple | None = None
_blas_searched = False


_exiting = False  # the interpreter is shutting down: blocks not yet taken are left undone


def _on_exit() -> None:
    """Run by threading._shutdown before it joins the pool's threads: they stop after
    the block in hand instead of finishing a 2048-token computation nobody will see."""
    global _exiting
    _exiting = True


threading._register_atexit(_on_exit)  # after concurrent.futures' own hook, so called before it


def _thread_pool() -> ThreadPoolExecutor:
    """The engine's workers, made on first use (and again in a forked child, which has none)."""
    global _pool, _pool_pid
    with _pool_lock:
        if _pool is None or _pool_pid != os.getpid():
            _pool = ThreadPoolExecutor(max_workers=8, thread_name_prefix="attention-blocks")
            _pool_pid = os.getpid()
        return _pool


def _openblas_libraries():
    """The OpenBLAS libraries numpy loaded into this process (``/proc/self/maps``; none off Linux)."""
    import numpy as np

    np.dot(np.ones((2, 2)), np.ones((2, 2)))  # make sure numpy's BLAS is loaded
    try:
        with open("/proc/self/maps", encoding="utf-8", errors="replace") as maps:
            paths = sorted({line.split(None, 5)[5].strip() for line in maps if "openblas" in line.lower() and len(line.split(None, 5)) == 6})
    except OSError:  # not Linux
        return
    for path in paths:
        try:
            yield ctypes.CDLL(path, mode=getattr(os, "RTLD_NOLOAD", 0) | ctypes.RTLD_GLOBAL)
        except OSError:
            continue


def _find_blas() -> tuple | None:
    """(set_num_threads, get_num_threads) of the OpenBLAS numpy loaded, or None."""
    for library in _openblas_libraries():
        for set_name, get_name in zip(_SET_NAMES, _GET_NAMES):
            setter, getter = getattr(library, set_name, None), getattr(library, get_name, None)
            if setter is not None and getter is not None:
                setter.argtypes, setter.restype = [ctypes.c_int], None
                getter.argtypes, getter.restype = [], ctypes.c_int
                return setter, getter
    return None


def blas_core_name() -> str | None:
    """The kernel family numpy's OpenBLAS runs here ("SkylakeX", "Haswell", …), or None where it is
    not found: OPENBLAS_CORETYPE may force an older one than the CPU's (benchmarks print it)."""
    for library in _openblas_libraries():
        for name in _CORE_NAMES:
            function = getattr(library, name, None)
            if function is not None:
                function.argtypes, function.restype = [], ctypes.c_char_p
                return function().decode()
    return None


def blas_controllable() -> bool:
    """Whether :func:`blas_single_threaded` can change numpy's BLAS thread count here."""
    global _blas_functions, _blas_searched
    with _blas_lock:
        if not _blas_searched:
            _blas_functions = _find_blas()
            _blas_searched = True
        return _blas_functions is not None


class _BlasSingleThreaded:
    """numpy's BLAS on one thread inside ``with`` (the caller's threads do the parallel work).
    A class rather than a generator-based context manager: ~1 µs a use instead of ~4."""

    __slots__ = ()

    def __enter__(self) -> None:
        global _blas_users, _blas_saved
        if not blas_controllable():
            return
        setter, getter = _blas_functions
        with _blas_lock:
            if _blas_users == 0:
                _blas_saved = getter()
                if _blas_saved != 1:
                    setter(1)
            _blas_users += 1

    def __exit__(self, *exc_info) -> None:
        global _blas_users
        if _blas_functions is None:
            return
        setter, _ = _blas_functions
        with _blas_lock:
            _blas_users -= 1
            if _blas_users == 0 and _blas_saved != 1:
                setter(_blas_saved)


_single = _BlasSingleThreaded()


def blas_single_threaded() -> _BlasSingleThreaded:
    """``with blas_single_threaded():`` numpy's BLAS runs on one thread inside; nested and
    concurrent uses share one count, and the previous thread count comes back after the last."""
    return _single


def thread_map(work: Callable, items: Sequence, name: str = "engine-map"):
    """work(item) for every item on THREADS threads, yielding the results in the items' order as
    they come (for NumPy passes that release the GIL: dequantizing, transposing weights). The
    first failure in that order is raised; the threads are joined when the iteration ends."""
    with ThreadPoolExecutor(max_workers=THREADS, thread_name_prefix=name) as pool:
        yield from pool.map(work, items)


def chunks(count: int, parts: int) -> list[slice]:
    """``parts`` contiguous slices (at most ``count``) covering range(count) as evenly as possible."""
    parts = max(1, min(parts, count))
    return [slice(count * i // parts, count * (i + 1) // parts) for i in range(parts)]


def run_parallel(work: Callable, items: Sequence) -> None:
    """work(item) for every item, on THREADS threads (this one included) with numpy's BLAS on one
    thread each. Threads take the next item as they come free, so a worker that wakes late
    (a hand-off costs 100–180 µs on this VM) takes fewer items instead of delaying the end.
    Exceptions are re-raised here after every thread has stopped."""
    threads = min(THREADS, len(items))
    with blas_single_threaded():
        if threads <= 1:
            for item in items:
                work(item)
            return
        queue = iter(items)  # shared: next() on a list iterator is atomic under the GIL
        failed: list[BaseException] = []

        def drain() -> None:
            try:
                for item in queue:
                    if failed:
                        return
                    if _exiting:
                        failed.append(SystemExit("the interpreter is exiting"))
                        return
                    work(item)
            except BaseException as error:  # noqa: BLE001 - re-raised by the caller
                failed.append(error)

        futures = []
        for _ in range(threads - 1):
            try:
                futures.append(_thread_pool().submit(drain))
            except RuntimeError:  # "cannot schedule new futures after (interpreter) shutdown": this thread does it all
                break
        drain()
        for future in futures:
            future.result()
    if failed:
        raise failed[0]


class _Mode(threading.local):
    threaded: bool | None = None  # None: no engine_threads() around the call


_mode = _Mode()


class engine_threads:
    """``with engine_threads(active):`` around one computation (compute(), BERT forward()).

    active: numpy's BLAS on one thread for the whole computation, and :func:`for_rows` and
    attend()'s tiles shared among THREADS threads. Not active: numpy calls only, on this thread,
    with numpy's BLAS using its own threads. Mixing the two inside one computation measured
    worst of all: OpenBLAS's threads keep spinning after each multi-threaded call (MiniLM at
    128 tokens: 82 ms mixed against ~40 ms either way), so the choice is made once, by size.
    """

    __slots__ = ("active", "previous")

    def __init__(self, active: bool) -> None:
        self.active = bool(active) and THREADS > 1

    def __enter__(self) -> "engine_threads":
        self.previous = _mode.threaded
        _mode.threaded = self.active
        if self.active:
            _single.__enter__()
        return self

    def __exit__(self, *exc_info) -> None:
        if self.active:
            _single.__exit__()
        _mode.threaded = self.previous


def threads_allowed(default: bool) -> bool:
    """Whether this computation shares work among threads: as engine_threads() chose, else ``default``."""
    chosen = _mode.threaded
    return default if chosen is None else chosen


def for_rows(count: int, work: Callable[[slice], None], *, numbers: int, min_numbers: int | None = None) -> None:
    """work(rows) over row slices covering range(count): 1 to 4 slices per thread shared by
    :func:`run_parallel` inside ``engine_threads(True)`` when the work has at least
    ``min_numbers`` (default PARALLEL_MIN_PRODUCTS) multiply-adds, else one call here."""
    if (
        threads_allowed(False)
        and numbers >= (PARALLEL_MIN_PRODUCTS if min_numbers is None else min_numbers)
        and count >= 2
    ):
        # Each slice's matmul packs the whole right-hand matrix again (OpenBLAS), so slices stay
        # ≥ MIN_ROWS_PER_SLICE rows: at 128 tokens, 8 slices of 16 rows made MiniLM 40 % slower.
        run_parallel(work, chunks(count, max(THREADS, min(4 * THREADS, count // MIN_ROWS_PER_SLICE))))
    else:
        work(slice(0, count))
