"""Benchmark and figures: "most important heads" on MiniLM, and what the analysis shows.

    python benchmarks/bench_analysis.py                 # figures + timings, ~1 min on 2 cores
    python benchmarks/bench_analysis.py --rounds 5

On "The animal didn't cross the street because it was too tired." (16 tokens with [CLS] and
[SEP]) in all-MiniLM-L6-v2, it prints:

1. layer by layer, the share of attention weight on [CLS]/[SEP] (mean over heads and query
   rows of Σ_special α_ij) against the share of value-weighted weight (Kobayashi et al., 2020:
   Σ_special ‖α_ij f_h(x_j)‖ / Σ_j ‖α_ij f_h(x_j)‖, same mean);
2. layer 3 head 1 and layer 5 head 11 switched off together: the cosine of each token's final
   vector with and without ("it" first), and each head alone;
3. the ten heads whose removal alone changes the final vectors most (mean 1 − cos);
4. timings, medians of ``--rounds`` rounds interleaved in this one process:
   - rank_encoder_heads (72 ablations, layers below the ablated one reused, BLAS on one thread);
   - a plain loop of 72 full engine.models.bert.forward(ablate={head}) calls, as forward() runs by
     itself at this size (OpenBLAS on its own threads), and the same loop with BLAS held to one
     thread (engine_threads(True)), so that the reuse of the prefix is measured apart from the
     threading;
   - analysis_arrays (value norms, both rollouts, head table) of one trace.
"""
from __future__ import annotations

import argparse
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from engine.models import minilm  # noqa: E402
from engine.analysis.ablation import all_heads, token_cosines  # noqa: E402
from engine.analysis.arrays import analysis_arrays  # noqa: E402
from engine.models.bert import forward  # noqa: E402
from engine.analysis.encoder_ablation import encoder_runner, rank_encoder_heads  # noqa: E402
from engine.analysis.head_stats import caption, head_stats, name_heads, special_mask  # noqa: E402
from engine.core.parallel import engine_threads  # noqa: E402

SENTENCE = "The animal didn't cross the street because it was too tired."
PAIR = frozenset({(3, 1), (5, 11)})


def cpu() -> str:
    try:
        out = subprocess.run(["lscpu"], capture_output=True, text=True).stdout
        name = next(line.split(":", 1)[1].strip() for line in out.splitlines() if line.startswith("Model name"))
    except (OSError, StopIteration):
        name = platform.processor() or "unknown CPU"
    import os
    return f"{name}, {len(os.sched_getaffinity(0))} CPUs usable, Python {platform.python_version()}, numpy {np.__version__}"


def figures(model, trace) -> None:
    arrays = analysis_arrays(trace, model.weights)
    special = special_mask(trace.token_texts, model.facts.special_tokens)
    norms = arrays["value_norms"].astype(np.float64)  # (layers, heads, n, n)
    raw = trace.attentions[..., special].sum(axis=-1).mean(axis=(1, 2))  # (layers,)
    moved = (norms[..., special].sum(axis=-1) / norms.sum(axis=-1)).mean(axis=(1, 2))  # (layers,)
    print(f"tokens ({trace.n}): {' '.join(trace.token_texts)}")
    print("\n1. share of weight on [CLS]/[SEP], mean over heads and query rows")
    print("layer   raw attention   value-weighted")
    for layer in range(trace.num_layers):
        print(f"{layer:5d}   {raw[layer]:13.3f}   {moved[layer]:14.3f}")
    print(f"  all   {raw.mean():13.3f}   {moved.mean():14.3f}")

    it = trace.token_texts.index("it")
    animal = trace.token_texts.index("animal")
    run = encoder_runner(model.weights, model.config, trace)
    print('\n2. cosine of each final vector with and without the heads switched off ("it" first)')
    for ablate in (frozenset({(3, 1)}), frozenset({(5, 11)}), PAIR):
        cosines = token_cosines(trace.hidden_states[-1], run(ablate))
        label = " + ".join(f"L{l}H{h}" for l, h in sorted(ablate))
        others = np.delete(cosines, it)
        print(f"{label:12s} it: {cosines[it]:.4f}   other tokens: min {others.min():.4f} "
              f"({trace.token_texts[int(np.argmin(np.where(np.arange(trace.n) == it, 2, cosines)))]}), "
              f"mean {others.mean():.4f}")
    ablated = forward(model.weights, model.config, trace.input_ids, trace.tokens, ablate=PAIR)
    print(f"rollout it→animal (last layer): raw {arrays['rollout'][-1, it, animal]:.3f}, "
          f"value-weighted {arrays['value_rollout'][-1, it, animal]:.3f}; attention it→animal at L3H1 "
          f"{trace.attentions[3, 1, it, animal]:.2f}, L5H11 {trace.attentions[5, 11, it, animal]:.2f}")
    print(f"cosine of it's final vector to animal's: {token_cosines(trace.hidden_states[-1][[it]], trace.hidden_states[-1][[animal]])[0]:.4f} "
          f"plain, {token_cosines(ablated.hidden_states[-1][[it]], ablated.hidden_states[-1][[animal]])[0]:.4f} with both off")

    ranking = rank_encoder_heads(model.weights, model.config, trace)
    print("\n3. heads ranked by the effect of switching each off alone (mean over tokens of 1 − cos)")
    print("   " + ", ".join(f"L{l}H{h} {e:.4f}" for (l, h), e in ranking.top(10)))
    print(f"   median head {statistics.median(ranking.effects):.5f}, smallest {ranking.effects[-1]:.6f}")
    print("\nnamed heads:\n" + caption(name_heads(head_stats(trace.attentions, special))))


def timings(model, trace, rounds: int) -> None:
    heads = all_heads(model.config.num_layers, model.config.num_heads)

    def plain_loop():
        for head in heads:
            forward(model.weights, model.config, trace.input_ids, trace.tokens, ablate=frozenset({head}))

    def plain_loop_single():
        with engine_threads(True):
            plain_loop()

    contenders = {
        "rank_encoder_heads (prefix reused)": lambda: rank_encoder_heads(model.weights, model.config, trace),
        "72 × forward(ablate) as it runs": plain_loop,
        "72 × forward(ablate), BLAS 1 thread": plain_loop_single,
        "analysis_arrays (one trace)": lambda: analysis_arrays(trace, model.weights),
    }
    samples: dict[str, list[float]] = {name: [] for name in contenders}
    for name, call in contenders.items():  # warm-up
        call()
    for _ in range(rounds):
        for name, call in contenders.items():
            started = time.perf_counter()
            call()
            samples[name].append(time.perf_counter() - started)
    print(f"\n4. timings, {trace.n} tokens, median of {rounds} rounds (min … max)")
    for name, values in samples.items():
        print(f"{name:38s} {1000 * statistics.median(values):8.1f} ms  ({1000 * min(values):.0f} … {1000 * max(values):.0f})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    print(cpu())
    model = minilm.load_minilm()
    trace = model.run(SENTENCE)
    figures(model, trace)
    timings(model, trace, args.rounds)


if __name__ == "__main__":
    main()
