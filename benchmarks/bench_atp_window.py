"""Attribution patching beside the exact grid in the window: SmolLM2, the Eiffel/Colosseum pair at 9
and at 16 tokens, the residual-stream grid and the head grid, run by the Patching dock's one worker
task (the AtP estimate first, then the exact grid row by row).

Prints, per round, the seconds from Patch to the AtP grids on screen and to the exact grids'
end (the issue's target: the estimate well under a second, while the exact grid fills in), and
the AtP grids' Pearson r with the finished exact grids as the dock shows them (p(answer) and the
logit difference). The first round of a pair includes the backward's first use; the load average
beside each figure says how busy the machine was.

    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE xvfb-run -a python benchmarks/bench_atp_window.py [--rounds 2]
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen" if not os.environ.get("DISPLAY") else "xcb")

from PySide6.QtWidgets import QApplication  # noqa: E402

from bench_common import blas_kernels, cpu_name  # noqa: E402

PAIRS = (("The Eiffel Tower is in the city of", "The Colosseum is in the city of"),  # 9 tokens
         ("The famous Eiffel Tower, built long ago, is found in the city of",  # 16 tokens
          "The famous Colosseum, built long ago, is found in the city of"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=2)
    options = parser.parse_args()
    app = QApplication(sys.argv[:1])
    from app.controller import Controller
    from app.panels.evidence_panel import PatchingPanel

    controller = Controller()
    panel = PatchingPanel(controller)
    panel.resize(1300, 420)
    panel.show()
    controller.set_model("smollm2")
    while not (controller.is_idle() and controller.snapshot is not None):
        app.processEvents()
        time.sleep(0.01)
    print(f"{cpu_name()}, {blas_kernels()}; SmolLM2, grids resid_pre + head_z")
    for clean, corrupt in PAIRS:
        for _ in range(options.rounds):
            panel.clean.setText(clean)
            panel.corrupt.setText(corrupt)
            panel.answer.setText(" Paris")
            started, first = time.perf_counter(), None
            panel.start()
            while panel.running:
                app.processEvents()
                if first is None and panel.atp_token_map.matrix() is not None:
                    first = time.perf_counter() - started
                time.sleep(0.0005)
            total = time.perf_counter() - started
            view = panel.view
            r = {name: f"{a.correlation:.3f}" for name, a in view.agreement.items()}
            r_diff = {name: f"{a.correlation:.3f}" for name, a in view.diff_agreement.items()}
            print(f"{len(panel.tokens)} tokens: AtP on screen {first:.2f} s, exact grids {total:.1f} s; "
                  f"r p(answer) {r}, r logit diff {r_diff}; load {os.getloadavg()[0]:.1f}", flush=True)
    controller.shutdown()


if __name__ == "__main__":
    main()
