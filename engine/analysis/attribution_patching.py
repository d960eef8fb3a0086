"""Attribution patching (Nanda 2022; AtP, Kramár et al. 2024): every activation-patching grid of
engine.analysis.patching estimated to first order from one forward of each prompt and one backward
of the corrupted run.

Patching activation a (a row of hook_resid_pre, hook_attn_out or hook_mlp_out at layer l, or head
h's hook_z over every row) from the corrupted value a* to the clean value a changes a measure M by
about (a − a*)·∂M/∂a at the corrupted run, so a grid cell is

    M(corrupted) + Σ (a − a*) · ∂M/∂a      (the sum over the activation's numbers)

with the measures of the exact grids: a decoder's p(answer) at the last position (∂p = p·∂log p,
one backward of log p) and the logit difference logit(answer) − logit(other) (a second backward
from the same forward; "other" is the corrupted run's most likely token besides the answer, as
patching's); an encoder's cosine of the final vector at ``position`` to the clean run's. The
gradients come from engine.grad (the block's own backward, not the model's hooks), the clean and
corrupted activations from the same forward that keeps them.

What it misses is what a student should see beside the exact grid: the first-order term is blind
where the measure saturates (p near 0 or 1) and where attention saturates (a softmax with one
weight near 1 has a near-zero gradient); :func:`disagreement` lists the cells where the two grids
differ most and their correlation.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..core.errors import EngineError
from ..core.hooks import check_ablation
from ..core.memory import DEFAULT_MEMORY_BUDGET
from ..grad.gradients import backward, check_supported, forward_output, input_of, output_head
from ..grad.gradients import logit_softcap
from ..grad.targets import Target, evaluate
from .occlusion import Answer, answer_token
from .patching import GRIDS, PATCH_TOKENS, is_decoder_model

SUFFIX = "_atp"
POINTS = {"resid_pre": "hook_resid_pre", "attn_out": "hook_attn_out", "mlp_out": "hook_mlp_out",
          "head_z": "attn.hook_z"}  # each grid's hook point, as patching's


@dataclass(frozen=True, eq=False)
class AttributionPatching:
    grids: dict  # name → (layers, n) or (layers, heads) float64 estimate of the measure
    logit_diffs: dict  # decoders: the same of the logit difference
    measure: str  # "p(answer)" or "cosine"
    corrupt_value: float
    clean_value: float
    corrupt_diff: float = float("nan")
    answer: Answer | None = None
    other: int | None = None

    def arrays(self) -> dict[str, np.ndarray]:
        """The grids under patching's keys with the suffix ``_atp`` (docs/FORMAT.md)."""
        out = {f"{name}{SUFFIX}": grid for name, grid in self.grids.items()}
        out.update({f"{name}_logit_diff{SUFFIX}": grid for name, grid in self.logit_diffs.items()})
        return out


def _first_order(clean: list, corrupt: list, grads: list, grids) -> dict:
    """grid name → Σ (clean − corrupted)·gradient per cell: (layers, n) for a row grid, (layers, heads) for head_z."""
    out = {}
    for name in grids:
        point = POINTS[name]
        cells = []
        for layer, grad in enumerate(grads):
            delta = clean[layer][point][0].astype(np.float64) - corrupt[layer][point][0]
            product = delta * grad[point][0]  # (n, d) or (n, heads, d_head)
            cells.append(product.sum(axis=(0, 2)) if name == "head_z" else product.sum(axis=1))
        out[name] = np.stack(cells)
    return out


def attribution_patching(model, clean: str, corrupt: str, answer: str | None = None, position: int | None = None,
                         *, grids=GRIDS, ablate=frozenset(),
                         memory_budget: int = DEFAULT_MEMORY_BUDGET) -> AttributionPatching:
    """The first-order estimate of the patching grids ``grids`` for the clean/corrupted pair (the
    arguments are :func:`engine.analysis.patching.prepare`'s; EngineError on the same bad input,
    and where gradients do not apply to the model)."""
    check_supported(model)
    for which, text in (("clean", clean), ("corrupted", corrupt)):
        if not isinstance(text, str) or not text.strip():
            raise EngineError("the {which} prompt is empty: type a sentence", field="text", which=which)
    clean_tok, corrupt_tok = model.tokenize(clean), model.tokenize(corrupt)
    n, m = len(clean_tok.input_ids), len(corrupt_tok.input_ids)
    if n != m:
        pieces = lambda tokenized: " | ".join(t.text for t in tokenized.tokens)  # noqa: E731
        raise EngineError("the prompts must have the same number of tokens: clean {a} ({clean}), corrupted {b} "
                          "({corrupt})", field="text", a=n, b=m, clean=pieces(clean_tok), corrupt=pieces(corrupt_tok))
    if n > PATCH_TOKENS:
        raise EngineError("{n} tokens is more than {limit} for patching (a grid runs the model layers × {n} times); "
                          "shorten the prompts", field="text", n=n, limit=PATCH_TOKENS)
    ablate = check_ablation(ablate, model.facts.layers, model.facts.heads)
    decoder = is_decoder_model(model)
    clean_points, corrupt_points = [], []
    clean_out, _ = forward_output(model, input_of(model, clean_tok)[None], ablate=ablate, memory_budget=memory_budget,
                                  record=clean_points)
    corrupt_out, saved = forward_output(model, input_of(model, corrupt_tok)[None], ablate=ablate,
                                        memory_budget=memory_budget, record=corrupt_points)
    head = output_head(model)
    if decoder:
        if answer is None:
            raise EngineError("a decoder's patching needs an answer: the token whose probability to measure, "
                              "e.g. ' Paris'", field="answer")
        target = answer_token(model, answer)
        logits = (corrupt_out[0, -1] @ head.T).astype(np.float64)  # (vocab,)
        ranked = np.argsort(-logits)
        other = int(ranked[0] if ranked[0] != target.id else ranked[1])
        log_p = Target("log_prob", token=target.id)
        cap = logit_softcap(model)  # Gemma 2's capped logits, as its forward gives them
        corrupt_log_p, grad_out = evaluate(log_p, corrupt_out, head, cap)
        clean_log_p, _ = evaluate(log_p, clean_out, head, cap)
        _, grads = backward(model, saved, grad_out)
        corrupt_p = float(np.exp(corrupt_log_p[0]))
        estimate = {name: corrupt_p + corrupt_p * change
                    for name, change in _first_order(clean_points, corrupt_points, grads, grids).items()}
        difference = Target("logit_diff", token=target.id, other=other)
        corrupt_diff, grad_out = evaluate(difference, corrupt_out, head, cap)
        _, grads = backward(model, saved, grad_out)
        diffs = {name: float(corrupt_diff[0]) + change
                 for name, change in _first_order(clean_points, corrupt_points, grads, grids).items()}
        return AttributionPatching(estimate, diffs, "p(answer)", corrupt_p, float(np.exp(clean_log_p[0])),
                                   float(corrupt_diff[0]), target, other)
    position = 0 if position is None else int(position)
    if -n <= position < 0:
        position += n
    if not 0 <= position < n:
        raise EngineError("position {position} does not exist: the prompts have tokens 0 … {top}", field="position",
                          position=position, top=n - 1)
    cosine = Target("cosine", position=position, reference=clean_out[0, position].astype(np.float64))
    corrupt_cosine, grad_out = evaluate(cosine, corrupt_out, None)
    _, grads = backward(model, saved, grad_out)
    estimate = {name: float(corrupt_cosine[0]) + change
                for name, change in _first_order(clean_points, corrupt_points, grads, grids).items()}
    return AttributionPatching(estimate, {}, "cosine", float(corrupt_cosine[0]), 1.0)


def disagreement(estimate: np.ndarray, exact: np.ndarray, top: int = 5) -> tuple[float, list]:
    """(Pearson correlation of the two grids over their finite cells, the ``top`` cells where they
    differ most as (row, column, estimate, exact)); NaN correlation when either grid is constant."""
    estimate, exact = np.asarray(estimate, np.float64), np.asarray(exact, np.float64)
    finite = np.isfinite(estimate) & np.isfinite(exact)
    a, b = estimate[finite], exact[finite]
    correlation = float(np.corrcoef(a, b)[0, 1]) if a.size > 1 and a.std() > 0 and b.std() > 0 else float("nan")
    gap = np.where(finite, np.abs(estimate - exact), -np.inf)
    order = np.argsort(-gap, axis=None, kind="stable")[:top]
    cells = [(int(r), int(c), float(estimate[r, c]), float(exact[r, c]))
             for r, c in zip(*np.unravel_index(order, gap.shape)) if np.isfinite(gap[r, c])]
    return correlation, cells
