"""The logit lens as a grid: what the residual stream after each layer would predict, at every
position at once (nostalgebraist 2020; NDIF's workbench draws it as a token × layer grid).

Cell (l, i) reads hidden_states[l][i] through the final norm and the unembedding as if it were the
last layer's (row ``layers`` is the model's own prediction): its most likely token, that token's
probability, and p(answer). Without an answer, each column's "answer" is the model's own final
choice at that position, so a row shows how early each prediction forms.

    grid = lens_grid(model, RunRequest(text=…, answer=" Paris", lens_grid=True), runs)
    grid.top_ids            # (layers + 1, n) int64
    grid.p_answer           # (layers + 1, n) float64

One layer and at most ROWS_AT_ONCE positions at a time: (rows, vocab) logits and probabilities,
never (layers + 1, n, vocab) at once (SmolLM2 at 512 tokens would hold 3 GB in float64).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..core.attention import softmax64
from ..core.errors import EngineError
from .occlusion import Answer, answer_token
from .request import NotApplicable

ROWS_AT_ONCE = 128  # positions read through the unembedding together: 128 × 49,152 float64 is 50 MB


@dataclass(frozen=True, eq=False)
class LensGrid:
    top_ids: np.ndarray  # (layers + 1, n) int64 each cell's most likely next token
    top_texts: tuple[tuple[str, ...], ...]  # (layers + 1, n) their display texts
    top_probabilities: np.ndarray  # (layers + 1, n) float64
    p_answer: np.ndarray  # (layers + 1, n) float64 p(answer) (no answer: p of the column's final top token)
    answer_ids: np.ndarray  # (n,) int64 the token p_answer reads in each column
    answer: Answer | None  # the request's answer (None: each column's own final choice)

    @property
    def note(self) -> str:
        return self.answer.note if self.answer is not None else ""

    def arrays(self) -> dict:
        """The export keys (docs/FORMAT.md)."""
        return {"lens_top_ids": self.top_ids, "lens_top_tokens": np.array(self.top_texts, dtype=str),
                "lens_top_probabilities": self.top_probabilities, "lens_p_answer": self.p_answer,
                "lens_answer_ids": self.answer_ids}


def lens_grid(model, request, runs) -> LensGrid | NotApplicable:
    """The grid of ``request``'s run (its heads switched off): see the module docstring."""
    if not request.lens_grid:
        return NotApplicable("lens_grid", EngineError("the logit lens grid was not asked for"))
    answer = answer_token(model, request.answer) if request.answer is not None else None
    trace = runs.trace
    layers, n = model.facts.layers, trace.n
    top_ids = np.empty((layers + 1, n), np.int64)
    top_probabilities = np.empty((layers + 1, n))
    p_answer = np.empty((layers + 1, n))
    columns = np.arange(n)
    answer_ids = np.full(n, answer.id if answer is not None else 0, np.int64)
    for layer in range(layers, -1, -1):  # the model's own output first: it names each column's answer without one
        for start in range(0, n, ROWS_AT_ONCE):
            rows = slice(start, min(start + ROWS_AT_ONCE, n))
            probabilities = softmax64(model.lens_logits(trace, layer, rows))  # (rows, vocab)
            inside = columns[: probabilities.shape[0]]
            top_ids[layer, rows] = np.argmax(probabilities, axis=1)
            top_probabilities[layer, rows] = probabilities[inside, top_ids[layer, rows]]
            if layer == layers and answer is None:
                answer_ids[rows] = top_ids[layer, rows]
            p_answer[layer, rows] = probabilities[inside, answer_ids[rows]]
    display = model.tokenizer.display
    texts = tuple(tuple(display([int(i) for i in row])) for row in top_ids)
    return LensGrid(top_ids, texts, top_probabilities, p_answer, answer_ids, answer)
