"""Value zeroing: how much each token's output representation depends on every other token.

Mohebbi, Zuidema, Chrupała & Alishahi (2023), "Quantifying Context Mixing in Transformers" (EACL).
Raw attention weights say where a head looks, not what reached the output; value zeroing measures
it. In layer l, token j's value vectors are zeroed in every head, the rest of that layer is
recomputed (the residual stream, the norms and the MLP included), and each token i's output of
the layer is compared with the untouched one:

    C_l[i, j] = 1 − cos(x̃_i^{¬j}, x_i)      rows then divided by their sums (each row sums to 1)

x_i is the layer's output as the next layer receives it: an encoder's hidden state after its last
LayerNorm (``hook_normalized_resid_post``), a decoder's residual stream (``hook_resid_post``,
before the final norm), the toy's attention output (``hook_attn_out``: it has no residual). Under a causal mask C_l[i, j > i] = 0 by construction.

Across layers the paper rolls the matrices up as attention rollout does, without mixing in the
identity: the residual connection is already inside each C_l (the layer's whole output is
compared). Switched-off heads stay off in every run (the request's ``ablate``).

    zeroing = value_zeroing(model, RunRequest(text="the cat sat on the mat"))
    zeroing.scores        # (layers, n, n) float64 rows sum to 1
    zeroing.rollout       # (layers, n, n) float64 products of the scores, layer 0 first
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..core.errors import EngineError
from .request import NotApplicable, RunRequest, check_tokens
from .rollout import rollout, rows_normalised

VALUE_ZEROING_TOKENS = 256  # layers · n one-layer runs of n tokens each: 256 tokens of MiniLM take seconds


@dataclass(frozen=True, eq=False)
class ValueZeroing:
    """Value zeroing of one run (see the module docstring)."""

    scores: np.ndarray  # (layers, n, n) float64, C_l[i, j] rows normalised to sum 1
    distances: np.ndarray  # (layers, n, n) float64, 1 − cos before the rows are normalised
    rollout: np.ndarray  # (layers, n, n) float64, C_l · … · C_0
    tokens: tuple[str, ...]

    def arrays(self) -> dict[str, np.ndarray]:
        """The export keys (docs/FORMAT.md)."""
        return {"value_zeroing": self.scores, "value_zeroing_rollout": self.rollout}


def layer_output(names: frozenset, layer: int) -> str:
    """The hook point that holds layer ``layer``'s output as the next layer receives it: after the
    post-LayerNorm where the block has one (encoders), else the residual stream, else (the toy,
    one attention without residual or MLP) the attention's output."""
    for point in ("hook_normalized_resid_post", "hook_resid_post", "hook_attn_out"):
        if f"blocks.{layer}.{point}" in names:
            return f"blocks.{layer}.{point}"
    raise ValueError(f"the model names no output of layer {layer}")


def cosine_distances(zeroed: np.ndarray, original: np.ndarray) -> np.ndarray:
    """(…, n) float64 1 − cos between rows of ``zeroed`` (…, n, d) and ``original`` (n, d); a row
    zeroed to nothing (the causal toy's first token, all of whose output was its own value) has
    lost everything: distance 1."""
    zeroed = np.asarray(zeroed, dtype=np.float64)
    original = np.asarray(original, dtype=np.float64)
    dots = (zeroed * original).sum(-1)
    norms = np.linalg.norm(zeroed, axis=-1) * np.linalg.norm(original, axis=-1)
    return 1.0 - np.divide(dots, norms, out=np.zeros_like(dots), where=norms > 0)


def value_zeroing(model, request: RunRequest, *, progress=None, cancelled=None) -> ValueZeroing | None:
    """:class:`ValueZeroing` of ``request``'s text on ``model`` (any model of the contract).
    ``progress(layers done, layers)`` after each layer; ``cancelled()`` polled before each layer
    (True: stop, None returned)."""
    request = request.checked(model.facts)
    tokenized = model.tokenize(request.text)
    n = len(tokenized.tokens)
    check_tokens(n, VALUE_ZEROING_TOKENS, "Value zeroing")
    names = frozenset(model.hook_names())
    layers = model.facts.layers
    outputs = [layer_output(names, layer) for layer in range(layers)]
    wanted = [f"blocks.{layer}.hook_resid_pre" for layer in range(layers)] + outputs
    _, cache = model.run_with_cache(tokenized, wanted, ablate=request.ablate, memory_budget=request.memory_budget)
    distances = np.zeros((layers, n, n))  # (layers, n, n): [l, i, j] token i's change when j's values are zeroed
    for layer in range(layers):
        if cancelled is not None and cancelled():
            return None
        resid = np.array(cache[f"blocks.{layer}.hook_resid_pre"])  # (n, d) what enters the layer
        original = cache[outputs[layer]]  # (n, d)
        for j in range(n):
            captured = []

            def zero_value(v, name, j=j):  # v: (n, kv_heads, d_head)
                v = v.copy()
                v[j] = 0.0
                return v

            def keep(x, name):
                captured.append(np.array(x))

            model.run_with_hooks(tokenized, [(f"blocks.{layer}.attn.hook_v", zero_value), (outputs[layer], keep)],
                                 ablate=request.ablate, start_at_layer=layer, resid=resid, stop_at_layer=layer + 1,
                                 memory_budget=request.memory_budget)
            distances[layer, :, j] = cosine_distances(captured[0], original)
        if progress is not None:
            progress(layer + 1, layers)
    distances = np.maximum(distances, 0.0)  # rounding can leave −1e-16 where nothing changed
    scores = rows_normalised(distances)
    return ValueZeroing(scores, distances, rollout(scores, residual=0.0), tuple(t.text for t in tokenized.tokens))


def value_zeroing_of(model, request: RunRequest, runs=None):
    """The analysis table's row: :func:`value_zeroing`, or NotApplicable when the request does not
    ask for it (layers · n runs of a layer: never computed unasked)."""
    if not request.value_zeroing:
        return NotApplicable("value_zeroing", EngineError(
            "value zeroing is computed when asked for (export --value-zeroing, the Analysis place)"))
    return value_zeroing(model, request)
