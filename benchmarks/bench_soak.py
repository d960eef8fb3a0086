"""Soak of the window (a benchmark, not a timed test).

1. In one process (offscreen): 1000 computations, then 500 rapid edits (a keystroke every 2 ms,
   the debounce and the lanes in charge); resident memory (VmRSS) and thread count before and after.
2. Closing during a 2048-token computation (d_model 512, 8 heads), 20 times, each in a fresh
   process: the time from close() to the process's exit (target ≤ 1 s) and whether any traceback
   was printed ("cannot schedule new futures after shutdown" was the usual one).

    python benchmarks/bench_soak.py [--quick]
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

CHILD = r"""
import os, sys, time
sys.path.insert(0, {root!r})
os.environ["QT_QPA_PLATFORM"] = "offscreen"
from PySide6.QtWidgets import QApplication
from app.window import MainWindow
from app.shell.identity import use_settings_folder
from engine import AttentionConfig
use_settings_folder({settings!r})
app = QApplication([])
win = MainWindow(restore=False)
win.show()
win.wait_until_idle(60)
text = " ".join(f"w{{i}}" for i in range(2048))
win.controller.set_config(AttentionConfig(text=text, tokenizer="whitespace", d_model=512, heads=8), immediate=True)
deadline = time.monotonic() + 10
while win.controller.worker.is_idle() and time.monotonic() < deadline:
    app.processEvents(); time.sleep(0.005)
time.sleep(0.3)  # well inside the computation
print("closing", time.time(), flush=True)
win.close()
app.quit()
"""


def status(field: str) -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    return -1


def soak(computations: int, edits: int) -> None:
    from PySide6.QtWidgets import QApplication

    from app.window import MainWindow
    from app.shell.identity import use_settings_folder
    from engine import AttentionConfig

    use_settings_folder(tempfile.mkdtemp())
    app = QApplication.instance() or QApplication([])
    win = MainWindow(restore=False)
    win.show()
    win.wait_until_idle(60)
    for i in range(20):  # warm: every panel's first use, caches
        win.controller.set_config(AttentionConfig(text=f"warm up {i} the cat sat"), immediate=True)
        win.wait_until_idle(60)
    rss0, threads0 = status("VmRSS"), status("Threads")
    started = time.perf_counter()
    for i in range(computations):
        win.controller.set_config(AttentionConfig(text=f"sentence {i} the cat sat on the mat {i % 7}",
                                                  heads=(1, 2, 4, 8)[i % 4], d_model=64), immediate=True)
        win.wait_until_idle(60)
    middle = time.perf_counter()
    rss1, threads1 = status("VmRSS"), status("Threads")
    for i in range(edits):
        win.controller.set_config(win.controller.config.replace(text=f"rapid edit {i} of the sentence"))
        deadline = time.monotonic() + 0.002
        while time.monotonic() < deadline:
            app.processEvents()
    win.wait_until_idle(60)
    rss2, threads2 = status("VmRSS"), status("Threads")
    print(f"{computations} computations: {middle - started:.1f} s; {edits} rapid edits: {time.perf_counter() - middle:.1f} s")
    print(f"resident memory  before {rss0 / 1024:.1f} MiB · after computations {rss1 / 1024:.1f} MiB · "
          f"after edits {rss2 / 1024:.1f} MiB")
    print(f"threads          before {threads0} · after computations {threads1} · after edits {threads2}")
    win.controller.worker.wait_until_idle(60)
    win.close()


def closing(times: int) -> None:
    exits, tracebacks = [], 0
    for _ in range(times):
        settings = tempfile.mkdtemp()
        child = subprocess.Popen([sys.executable, "-c", CHILD.format(root=str(ROOT), settings=settings)],
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        closed = None
        for line in child.stdout:
            if line.startswith("closing"):
                closed = float(line.split()[1])
                break
        child.wait(120)
        ended = time.time()
        stderr = child.stderr.read()
        if "Traceback" in stderr:
            tracebacks += 1
            print(stderr.strip().splitlines()[-1])
        if closed is not None:
            exits.append(ended - closed)
    exits.sort()
    print(f"closing during a 2048-token computation, {len(exits)} runs: exit after close() median "
          f"{exits[len(exits) // 2]:.2f} s, longest {exits[-1]:.2f} s (target ≤ 1 s); runs with a traceback: {tracebacks}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="100 computations, 100 edits, 5 closings")
    arguments = parser.parse_args()
    print(f"{os.cpu_count()} cores, load {os.getloadavg()[0]:.2f}")
    soak(100 if arguments.quick else 1000, 100 if arguments.quick else 500)
    closing(5 if arguments.quick else 20)


if __name__ == "__main__":
    main()
