"""The scalar a gradient is taken of, read from a run's output (B, n, d) (``hidden_states[-1]``):
its values (B,) and its gradient with respect to that output (B, n, d).

- ``log_prob``: log p(token) at a position, log-softmax of the logits (a decoder; the default
  target at the last position, the answer's).
- ``logit``: the logit of a token; ``logit_diff``: logit(token) − logit(other).
- ``cosine``: the cosine of a position's output vector to a reference vector (an encoder: how
  much a token's final vector points toward something, e.g. another text's); position None: of
  the mean over every position (the sentence embedding sentence-transformers and e5 pool).

Logits = output[position] · headᵀ (the decoder's output head (vocab, d)), soft-capped where the
family caps them (``softcap``: cap·tanh(logit / cap), Gemma 2's final logits, whose derivative
1 − tanh² scales each logit's gradient); the softmax is taken in float64 (a vocabulary of 49k in
float32 loses the small probabilities).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..core.errors import EngineError

KINDS = ("log_prob", "logit", "logit_diff", "cosine")


@dataclass(frozen=True, eq=False)
class Target:
    kind: str  # one of KINDS
    position: int | None = -1  # the row of the output read (-1: the last; None: the mean of every row, cosine)
    token: int = -1  # log_prob, logit, logit_diff
    other: int = -1  # logit_diff: the token subtracted
    reference: np.ndarray | None = None  # cosine: (d,)

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise EngineError("a gradient target is one of {kinds}; got {kind!r}", field="target",
                              kinds=", ".join(KINDS), kind=self.kind)
        if self.kind == "cosine" and (self.reference is None or not np.any(self.reference)):
            raise EngineError("a cosine target needs a reference vector that is not zero", field="target")
        if self.position is None and self.kind != "cosine":
            raise EngineError("a logit target reads one position", field="target")

    def describe(self) -> str:
        """One line in English: what was differentiated (the command line prints it)."""
        return {"log_prob": "log p(token {token}) at position {position}",
                "logit": "logit of token {token} at position {position}",
                "logit_diff": "logit(token {token}) − logit(token {other}) at position {position}",
                "cosine": "cosine of position {position}'s output vector to the reference"}[self.kind].format(
            token=self.token, other=self.other, position="every" if self.position is None else self.position)


def evaluate(target: Target, output: np.ndarray, head: np.ndarray | None,
             softcap: float = 0.0) -> tuple[np.ndarray, np.ndarray]:
    """(values (B,) float64, ∂value/∂output (B, n, d), output's dtype) of ``target`` on ``output`` (B, n, d).
    ``head``: the output head (vocab, d) for the logit targets (None for an encoder); ``softcap``: the
    cap of its logits (0: none)."""
    batch, n, d = output.shape
    grad = np.zeros_like(output)  # output's dtype
    if target.position is None:  # the mean of every row: each row gets 1/n of the mean's gradient
        values, grad_mean = evaluate(Target("cosine", 0, reference=target.reference), output.mean(axis=1, keepdims=True),
                                     None)
        grad += grad_mean / output.dtype.type(n)
        return values, grad
    position = target.position % n
    row = output[:, position].astype(np.float64)  # (B, d)
    if target.kind == "cosine":
        reference = np.asarray(target.reference, np.float64)  # (d,)
        norms = np.linalg.norm(row, axis=1)  # (B,)
        reference_norm = float(np.linalg.norm(reference))
        values = row @ reference / (norms * reference_norm)
        grad[:, position] = (reference[None] / (norms[:, None] * reference_norm)
                             - values[:, None] * row / (norms[:, None] ** 2))
        return values, grad
    if head is None:
        raise EngineError("a logit target needs a model with an output head (a decoder)", field="target")
    if softcap and target.kind in ("logit", "logit_diff"):
        tokens = [target.token] + ([target.other] if target.kind == "logit_diff" else [])
        rows = np.asarray(head[tokens], np.float64)  # (1 or 2, d)
        capped = np.tanh(row @ rows.T / softcap)  # (B, 1 or 2)
        slopes = 1.0 - capped * capped  # ∂ cap·tanh(s / cap) / ∂s
        signs = np.array([1.0, -1.0][: len(tokens)])
        grad[:, position] = (slopes * signs) @ rows
        return softcap * capped @ signs, grad
    if target.kind == "logit":
        grad[:, position] = head[target.token]
        return row @ np.asarray(head[target.token], np.float64), grad
    if target.kind == "logit_diff":
        direction = np.asarray(head[target.token], np.float64) - head[target.other]  # (d,)
        grad[:, position] = direction
        return row @ direction, grad
    logits = (output[:, position] @ head.T).astype(np.float64)  # (B, vocab)
    slopes = None
    if softcap:
        logits = np.tanh(logits / softcap)
        slopes = 1.0 - logits * logits  # (B, vocab)
        logits *= softcap
    logits -= logits.max(axis=1, keepdims=True)
    probabilities = np.exp(logits)
    total = probabilities.sum(axis=1, keepdims=True)
    probabilities /= total
    values = logits[:, target.token] - np.log(total[:, 0])
    probabilities[:, target.token] -= 1.0  # ∂ log p / ∂ logits = onehot − p, negated here
    if slopes is not None:
        probabilities *= slopes
    grad[:, position] = -(probabilities.astype(output.dtype) @ head)  # (B, d)
    return values, grad
