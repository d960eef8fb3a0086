"""The decoder's per-edit job in the window: SmolLM2, a word typed at the end of a 16- and a
376-token text (the KV cache reuses the prefix on screen), the snapshot alone (what every edit
computes now) and the snapshot followed by its Analysis arrays (app.jobs.analysis_job.with_analysis:
value norms, rollouts, head table; what every edit computed before they became a job of their own,
made only while a view reads them). Median of ``--repeats`` edits each, wall-clock and the process's
CPU time (what the code costs whatever else runs on the machine; numpy's BLAS on one thread, as in the
tests, so that a spinning BLAS thread is not counted).

    OPENBLAS_NUM_THREADS=1 nice -n 10 python benchmarks/bench_decoder_snapshot.py [--repeats 7]
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
sys.path.insert(0, str(ROOT / "benchmarks"))

from bench_common import blas_kernels, cpu_name  # noqa: E402

SHORT = "The famous Eiffel Tower, built long ago, is found in the city of"  # 16 tokens
WORDS = [" Paris", " and", " it", " stands", " tall", " over", " the", " river", " every", " day", " still"]


def _edits(name: str, text: str, repeats: int, analysis: bool) -> tuple[list[float], list[float]]:
    """(wall, CPU) seconds of each edit's worker job: ``text`` plus one more word each time."""
    from app.jobs import trained
    from app.jobs.analysis_job import with_analysis
    from app.jobs.decoder_view import take_decoder_snapshot

    trained.shown_traces.pop(name, None)
    take_decoder_snapshot(name, text, 0)  # the text on screen: the next edit's KV cache
    walls, cpus = [], []
    for index in range(repeats):
        text += WORDS[index % len(WORDS)]
        start, cpu = time.perf_counter(), time.process_time()
        snapshot = take_decoder_snapshot(name, text, 0)
        if analysis:
            with_analysis(snapshot)
        walls.append(time.perf_counter() - start)
        cpus.append(time.process_time() - cpu)
    return walls, cpus


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeats", type=int, default=7)
    options = parser.parse_args()
    from app.jobs import trained

    model = trained.model("smollm2")
    long = " ".join([SHORT] * 23)
    print(f"SmolLM2 per-edit worker job, median of {options.repeats} edits (a word typed at the end)")
    print(f"  {cpu_name()}, {blas_kernels()}, load average {os.getloadavg()[0]:.1f}")
    for text in (SHORT, long):
        n = len(model.tokenize(text).input_ids)
        alone = _edits("smollm2", text, options.repeats, analysis=False)
        both = _edits("smollm2", text, options.repeats, analysis=True)

        def ms(values: list[float]) -> str:
            return f"{statistics.median(values) * 1000:.0f} ms"

        print(f"  {n} tokens: snapshot {ms(alone[0])} (CPU {ms(alone[1])}); with the Analysis arrays "
              f"{ms(both[0])} (CPU {ms(both[1])})")


if __name__ == "__main__":
    main()
