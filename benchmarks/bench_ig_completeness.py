"""Measurement: does integrated gradients' completeness hold on SmolLM2 at 32 midpoint steps, and
does it settle with more? Prints, for three prompts and five baselines, Σ attributions − (t(x) − t(b))
at m = 32 … 512 steps (the midpoint rule on the straight line, as engine.grad.saliency takes it), and
the target t = log p(answer) sampled along the first stretch of the path from zero, where it swings.

    OPENBLAS_CORETYPE= OPENBLAS_L2_SIZE= python benchmarks/bench_ig_completeness.py [--steps 32,64,128,256,512]

Baselines: zero; every token replaced by token 0 (<|endoftext|>) or 2 (<|im_end|>); and the same two with
the first token kept (the attention sink stays as it is along the path). Not a speed benchmark: the
figures are the ones quoted in benchmarks/README.md's "Integrated gradients on SmolLM2" section.
"""
from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench_common import blas_kernels, cpu_name  # noqa: E402
from engine.grad.gradients import forward_output, gradients, input_of, output_head  # noqa: E402
from engine.grad.targets import Target, evaluate  # noqa: E402
from engine.models import load_model  # noqa: E402
from engine.models.contract import Tokenized  # noqa: E402

PROMPTS = (("The capital of France is", " Paris"), ("The Eiffel Tower is in the city of", " Paris"),
           ("小明喜欢吃苹果，他每天都吃一个", "苹果"))


def values_along(model, target: Target, x: np.ndarray, b: np.ndarray, alphas: np.ndarray) -> np.ndarray:
    """(len(alphas),) t at b + α (x − b), 32 points a batch."""
    out = []
    for start in range(0, len(alphas), 32):
        path = b[None] + alphas[start:start + 32, None, None].astype(np.float32) * (x - b)[None]
        output, _ = forward_output(model, path.astype(np.float32))
        out.append(evaluate(target, output, output_head(model))[0])
    return np.concatenate(out)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", default="32,64,128,256,512")
    args = parser.parse_args()
    steps = [int(s) for s in args.steps.split(",")]
    print(f"{cpu_name()}; {blas_kernels()}; load {os.getloadavg()[0]:.2f}")
    model = load_model("smollm2")
    for text, answer in PROMPTS:
        tokenized = model.tokenize(text)
        target = Target("log_prob", token=int(model.tokenize(answer).input_ids[0]))
        x = input_of(model, tokenized)
        n = len(x)
        print(f"\n{text!r} → {answer!r}, {n} tokens; completeness Σ IG − (t(x) − t(b)) at m = {steps}")
        for baseline in ("zero", 0, 2):
            for keep_first in (False, True):
                if baseline == "zero":
                    b = np.zeros_like(x)
                else:
                    ids = np.full(n, baseline, np.int64)
                    b = input_of(model, Tokenized(text, tokenized.tokens, ids, tokenized.token_type_ids))
                if keep_first:
                    b[0] = x[0]
                row = [_ig(model, target, x, b, m) for m in steps]
                name = f"{baseline}{' first kept' if keep_first else ''}"
                change = row[0][1]
                print(f"  {name:<14} t(x) − t(b) {change:8.3f}  " + "  ".join(f"{c:+9.3f}" for c, _ in row))
        alphas = np.linspace(0.0, 0.002, 11)
        along = values_along(model, target, x, np.zeros_like(x), alphas)
        print("  t along the path from zero, α = 0 … 0.002 in 10 steps: " + " ".join(f"{v:.2f}" for v in along))
    print(f"\nload after: {os.getloadavg()[0]:.2f}")


def _ig(model, target, x, b, m) -> tuple[float, float]:
    """(completeness, t(x) − t(b)) of IG at m midpoint steps from the baseline input b, as
    engine.grad.saliency computes it (its baselines are zero or one token id at every position; this
    one may keep the first token)."""
    alphas = ((np.arange(m) + 0.5) / m).astype(np.float32)
    total = np.zeros(x.shape)
    for start in range(0, m, 32):  # 32 points of the path a batch
        path = b[None] + alphas[start:start + 32, None, None] * (x - b)[None]
        total += gradients(model, path.astype(np.float32), target, points=False).grad_input.astype(np.float64).sum(0)
    attributions = ((x - b).astype(np.float64) * total / m).sum()
    at_input, at_baseline = values_along(model, target, x, b, np.array([1.0, 0.0]))
    return float(attributions - (at_input - at_baseline)), float(at_input - at_baseline)


if __name__ == "__main__":
    main()
