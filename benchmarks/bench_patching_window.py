"""The patching grid in the window: SmolLM2, 16-token prompts, the residual-stream grid and the
head grid, run by the Patching dock as one worker task (rows arrive as partial results).

Prints the seconds from Patch to the full grids on screen, the GUI thread's longest stall
meanwhile (a 2 ms QTimer records the gaps between its ticks; a stall is a gap minus the interval;
target ≤ 50 ms), the GUI thread's own CPU time in its longest stall and the most it used between
two ticks (``time.thread_time``: what the window's code costs, without the waits for a core or the GIL
that a loaded machine adds), the dock's height before and after each round, and the largest
difference between the grids on screen and the engine's own
engine.analysis.patching.activation_patching (what `./run patch` writes; target 0). Then Esc
half-way: the rows done stay on screen, marked partial.

    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE xvfb-run -a python benchmarks/bench_patching_window.py [--rounds 3]
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen" if not os.environ.get("DISPLAY") else "xcb")

from PySide6.QtCore import QTimer  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402

from bench_common import blas_kernels, cpu_name  # noqa: E402

CLEAN = "The famous Eiffel Tower, built long ago, is found in the city of"  # 16 tokens
CORRUPT = "The famous Colosseum, built long ago, is found in the city of"  # 16 tokens
ANSWER = " Paris"
TICK_MS = 2


def _tick(ticks: list) -> None:
    ticks.append((time.perf_counter(), time.thread_time()))


def _stalls(ticks: list) -> tuple[float, float, float]:
    """(longest gap − the interval, the GUI thread's CPU in that gap, its most CPU in any gap), in ms."""
    gaps = [(b[0] - a[0], b[1] - a[1]) for a, b in zip(ticks, ticks[1:])]
    if not gaps:
        return 0.0, 0.0, 0.0
    wall, cpu = max(gaps)
    return wall * 1000 - TICK_MS, cpu * 1000, max(c for _w, c in gaps) * 1000


def _run(app, panel, ticks, timer, until) -> tuple[float, tuple]:
    """(seconds, _stalls) from Patch until ``until()``."""
    ticks.clear()
    timer.start()
    wall = time.perf_counter()
    panel.start()
    while not until():
        app.processEvents()
        time.sleep(0.0005)
    seconds = time.perf_counter() - wall
    app.processEvents()
    timer.stop()
    return seconds, _stalls(ticks)


def _idle(app, ticks, timer, seconds: float = 5.0) -> float:
    """The longest stall with no job running (the machine's own share of the figure, in ms)."""
    ticks.clear()
    timer.start()
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        app.processEvents()
        time.sleep(0.0005)
    timer.stop()
    return _stalls(ticks)[0]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=3)
    options = parser.parse_args()
    app = QApplication.instance() or QApplication(sys.argv)
    from app.window import MainWindow
    from engine.analysis import patching
    from engine.analysis.request import RunRequest
    from engine.models import load_model

    window = MainWindow(restore=False)
    window.resize(1366, 768)
    window.show()
    window.wait_until_idle(60)
    c = window.controller
    c.set_model("smollm2")
    window.wait_until_idle(300)
    window.docks["patching"].show()
    window.docks["patching"].raise_()
    panel = window.panel("patching")
    panel.clean.setText(CLEAN)
    panel.corrupt.setText(CORRUPT)
    panel.answer.setText(ANSWER)
    panel.grid.setCurrentIndex(panel.grid.findData("resid_pre"))
    ticks: list[tuple[float, float]] = []  # (wall, GUI thread CPU) seconds at each tick
    timer = QTimer()
    timer.setInterval(TICK_MS)
    timer.timeout.connect(lambda: _tick(ticks))
    walls, stalls, cpus, most = [], [], [], []
    idle = _idle(app, ticks, timer)
    dock = window.docks["patching"]
    heights = [dock.height()]
    for _ in range(options.rounds):
        seconds, (stall, cpu, busiest) = _run(app, panel, ticks, timer, lambda: not panel.running)
        walls.append(seconds)
        stalls.append(stall)
        cpus.append(cpu)
        most.append(busiest)
        heights.append(dock.height())
    assert panel.setup.n == 16 and not panel.is_partial(), panel.caption.text()
    shown = {"resid_pre": panel.token_map.matrix(), "head_z": panel.head_map.matrix()}
    expected = patching.activation_patching(load_model("smollm2"), RunRequest(text=CLEAN, answer=ANSWER), CORRUPT,
                                            grids=("resid_pre", "head_z"))
    difference = max(float(np.abs(shown[g] - expected.grids[g]).max()) for g in shown)
    # Esc half-way through the residual grid: the rows done stay on screen, marked partial
    layers = panel.setup.layers
    half, (stall, _cpu, _most) = _run(
        app, panel, ticks, timer,
        lambda: panel.setup is not None and np.isfinite(panel.grids["resid_pre"]).all(axis=1).sum() >= layers // 2)
    c.cancel()
    app.processEvents()
    kept = int(np.isfinite(panel.token_map.matrix()).all(axis=1).sum())
    print(f"patching in the window: SmolLM2, 16 tokens, residual grid {layers} × 16 + head grid {layers} × "
          f"{panel.setup.heads}, {options.rounds} rounds")
    print(f"  {cpu_name()}, {blas_kernels()}, load average {os.getloadavg()[0]:.1f}")
    print(f"  Patch to both grids on screen: median {statistics.median(walls):.2f} s "
          f"({min(walls):.2f} … {max(walls):.2f})")
    print(f"  longest GUI stall: median {statistics.median(stalls):.1f} ms (rounds: "
          f"{', '.join(f'{x:.0f}' for x in stalls)}); target ≤ 50 ms; with no job running {idle:.1f} ms")
    print(f"  the GUI thread's CPU in that stall: rounds {', '.join(f'{x:.0f}' for x in cpus)} ms; its most "
          f"between two ticks: {', '.join(f'{x:.0f}' for x in most)} ms")
    print(f"  the dock's height before and after each round: {' → '.join(str(h) for h in heights)} px")
    print(f"  largest difference from activation_patching (./run patch): {difference:.2e}")
    print(f"  Esc after {half:.2f} s (stall {stall:.1f} ms): {kept} of {layers} rows kept on screen, "
          f"partial={panel.is_partial()}, caption says PARTIAL: {'PARTIAL' in panel.caption.text()}")
    window.close()


if __name__ == "__main__":
    main()
