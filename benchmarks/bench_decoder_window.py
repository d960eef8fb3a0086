"""SmolLM2 in the window: the figures of the decoder note (run it, read what it prints).

    QT_QPA_PLATFORM=offscreen python benchmarks/bench_decoder_window.py [--repeats 7] [--skip-ablation]

1. First load (checksum, dequantize, tokenizer): wall and CPU seconds, in this fresh process.
2. The heads the head dashboard measures (engine.analysis.head_stats): previous-token heads (mean weight
   on the previous token) and induction heads (engine.analysis.head_stats.induction_scores) on a random
   token sequence of 50 ids repeated twice.
3. Ablation (engine.analysis.ablation.rank_heads with the decoder's ablate= and
   top_token_probability_drop): every head switched off alone on "The capital of France is";
   the top-ranked heads and " Paris"'s probability before and after removing the first.
4. One more word typed at the end of a 32-token text → next-token bars painted in the window
   (median over repeats), with the engine alone (KV-cache run + top-10) side by side.
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench_common import cpu_name  # noqa: E402
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import numpy as np  # noqa: E402

CAPITAL = "The capital of France is"
TEXT_32 = ("The old lighthouse keeper climbed the narrow stairs every single evening to light the great lamp, and "
           "all the fishing ships that passed the rocky point in the dark of night")  # 32 tokens for SmolLM2 (checked below)
WORDS = [" coast", " at", " night", " were", " safe", " from", " harm", " again", " and", " again", " today"]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--skip-ablation", action="store_true")
    options = parser.parse_args()
    print(f"CPU: {cpu_name()}, {os.cpu_count()} logical CPUs, load average {os.getloadavg()[0]:.1f}")

    from engine.models.smollm2 import load_smollm2

    wall, cpu = time.perf_counter(), time.process_time()
    model = load_smollm2()
    print(f"1. first load: {time.perf_counter() - wall:.2f} s wall, {time.process_time() - cpu:.2f} s CPU")

    # 2. previous-token and induction heads on a repeated random sequence
    from engine.analysis.head_stats import head_stats, induction_scores, repeated_random_tokens

    period = 50
    special = [i for i, t in enumerate(model.tokenizer.display(range(64))) if t.startswith("<|") or t.startswith("<")]
    ids = repeated_random_tokens(model.config.vocab_size, period, seed=0, exclude=special)
    trace = model.run_ids(ids, use_cache=False)
    stats = head_stats(trace.attentions)
    induction = induction_scores(trace.attentions, period)
    for name, grid in (("previous-token", stats["previous"]), ("induction", induction)):
        order = np.argsort(-grid, axis=None)[:5]
        best = ", ".join(f"L{l}H{h} {grid[l, h]:.2f}" for l, h in zip(*np.unravel_index(order, grid.shape)))
        print(f"2. {name} heads (mean weight, {2 * period} random tokens [r, r]): {best}")

    # 3. ablation of every head on "The capital of France is"
    if not options.skip_ablation:
        from engine.analysis.ablation import all_heads, rank_heads, top_token_probability_drop

        baseline = model.run(CAPITAL, use_cache=False)
        paris = 7042
        p_before = float(model.next_token_probabilities(baseline)[paris])
        effect = top_token_probability_drop(baseline.next_token_logits)
        ranking = rank_heads(lambda ablate: model.run(CAPITAL, ablate=ablate, use_cache=False).next_token_logits,
                             effect, all_heads(model.config.num_layers, model.config.num_heads))
        print("3. heads ranked by the drop of p(' Paris'): "
              + ", ".join(f"L{l}H{h} {e:+.3f}" for (l, h), e in ranking.top(5))
              + f" ({len(ranking.heads)} heads in {ranking.seconds:.1f} s)")
        top = ranking.heads[0]
        ablated = model.run(CAPITAL, ablate={top}, use_cache=False)
        p_after = float(model.next_token_probabilities(ablated)[paris])
        print(f"   p(' Paris' | {CAPITAL!r}) = {p_before:.4f}; without L{top[0]}H{top[1]}: {p_after:.4f}; "
              f"new top-3: {[(t, round(p, 4)) for _, t, p in model.top_tokens(ablated, k=3)]}")

    # 4. one more word typed → bars painted
    n = len(model.tokenize(TEXT_32).input_ids)
    engine_times = []
    previous = model.run(TEXT_32, use_cache=False)
    text = TEXT_32
    for word in WORDS[: options.repeats]:
        text += word
        start = time.perf_counter()
        trace = model.run(text, previous=previous)
        model.top_tokens(trace, k=10)
        engine_times.append(time.perf_counter() - start)
        previous = trace
    window_times = bars_painted(options.repeats)
    print(f"4. one more word after {n} tokens → next-token bars: window (typed → bars painted) median "
          f"{statistics.median(window_times) * 1000:.0f} ms (min {min(window_times) * 1000:.0f}, max "
          f"{max(window_times) * 1000:.0f}, {len(window_times)} runs); engine alone (KV cache + top-10) median "
          f"{statistics.median(engine_times) * 1000:.0f} ms")


def bars_painted(repeats: int) -> list[float]:
    from PySide6.QtCore import QEventLoop, QTimer
    from PySide6.QtWidgets import QApplication

    import tempfile

    app = QApplication.instance() or QApplication([])
    from app.window import MainWindow
    from app.shell.identity import use_settings_folder

    import pyqtgraph as pg

    use_settings_folder(tempfile.mkdtemp())
    painted: list = []  # (when a paint of the bars' plot finished, the trace and position of its bars)
    original = pg.PlotWidget.paintEvent

    def paint_event(self, event):  # noqa: N802 - Qt name; patched before the window paints (PySide caches overrides)
        original(self, event)
        panel = bars_panel[0] if bars_panel else None
        if panel is not None and panel.plot is self and panel.bars is not None:
            painted.append((time.perf_counter(), panel.bars["trace"], panel.bars["position"]))
            if after_paint:
                after_paint[0]()

    after_paint: list = []  # the check of the edit being measured
    bars_panel: list = []  # the next-token panel, once built

    pg.PlotWidget.paintEvent = paint_event
    window = MainWindow(restore=False)
    window.resize(1366, 728)
    window.show()
    window.panels["input"].text.setPlainText(TEXT_32)
    window.controller.set_model("smollm2")
    assert window.wait_until_idle(180)
    bars_panel.append(window.panel("next"))
    window.docks["next"].raise_()
    times = []
    text = TEXT_32
    for word in WORDS[:repeats]:
        window.controller.select(focus=window.controller.snapshot.result.n - 1)  # typing at the end
        window.wait_until_idle(30)
        text += word
        painted.clear()
        # the window's own event loop, as under QApplication.exec(): a processEvents() busy loop would hold
        # the GIL and starve the worker thread between its matmuls
        loop = QEventLoop()
        done: list[float] = []

        def check(text=text) -> None:
            snapshot = window.controller.snapshot
            if painted and not done and snapshot is not None and snapshot.result.config.text == text \
                    and painted[-1][1] is snapshot.bert.trace and painted[-1][2] == snapshot.result.n - 1:
                done.append(painted[-1][0])
                loop.quit()

        after_paint[:] = [check]
        QTimer.singleShot(60_000, loop.quit)
        start = time.perf_counter()
        window.panels["input"].text.setPlainText(text)  # as typing does: the input panel asks the controller
        loop.exec()
        after_paint.clear()
        if not done:
            print("no paint:", [(round(t - start, 3), tr is window.controller.snapshot.bert.trace, pos) for t, tr, pos in painted], window.controller.snapshot.result.n, window.controller.focus)
            continue
        times.append(done[0] - start)
    window.close()
    return times


if __name__ == "__main__":
    main()
