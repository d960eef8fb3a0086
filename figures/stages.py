"""The step-through's stages as data: what each stage's heatmaps show, their colour levels and its
two-line caption, for any AttentionResult (the toy engine's or one layer of a pretrained model).

The window's player (app/panels/player_panel.py) and the exported frames (figures/steps.py) read the
same specs and captions, so a GIF, an MP4 or a PDF says what the player says. Texts are translated
in context "PlayerPanel" (the player's own).
"""
from __future__ import annotations

import math

import numpy as np
from PySide6.QtCore import QCoreApplication as Q

from engine import STAGES

from .heatmap import DIVERGING_MAP, WEIGHTS_MAP, symmetric_levels
from .text import fill

STAGE_KEYS = ("tokens", "embeddings", "qkv", "scores", "scaled", "weights", "weighted_sum", "concat", "new_vectors")
TIE = 1e-6  # weights this close to the largest one tie with it (float32 softmax of equal scores)
VALUE_COLUMNS = {1: 14, 2: 8, 3: 6}  # write numbers in the cells up to this many columns (by heatmaps side by side)
MAX_TOKEN_CHIPS = 200  # the tokens stage lists at most this many tokens


def stage_names() -> tuple[str, ...]:
    """The stages' names, in the order of STAGE_KEYS (translated)."""
    return (
        Q.translate("PlayerPanel", "Tokens"), Q.translate("PlayerPanel", "Embeddings + positions"),
        Q.translate("PlayerPanel", "Q, K, V"), Q.translate("PlayerPanel", "Scores Q·Kᵀ"),
        Q.translate("PlayerPanel", "Scaled (+ mask)"), Q.translate("PlayerPanel", "Softmax weights"),
        Q.translate("PlayerPanel", "Weighted sum of V"), Q.translate("PlayerPanel", "Concat · W_O"),
        Q.translate("PlayerPanel", "New vectors"),
    )


def display_levels(result) -> dict[str, object]:
    """Symmetric colour bounds of the stages' vectors (O(trace size): the player computes them in its worker).

    Per-head bounds are (heads,) arrays; the others are floats."""
    heads = result.weights.shape[0]

    def per_head(*arrays) -> np.ndarray:  # (heads,) max |value| over the given (heads, n, d_k)
        return np.max([np.abs(a).reshape(heads, -1).max(axis=1) for a in arrays], axis=0)

    def bound(*arrays) -> float:
        return float(max(np.abs(a).max() for a in arrays))

    return {
        "embeddings": bound(result.embeddings, result.positional, result.x),
        "qkv": per_head(result.q, result.k, result.v),
        "v": per_head(result.v),  # head outputs are convex mixtures of v rows: same bound
        "concat": bound(result.concat),
        "w_o": bound(result.w_o),
        "output": bound(result.output),
    }


def pair_bounds(result) -> dict[str, np.ndarray]:
    """(heads,) bounds of the token × token stages: max |score|, max |finite scaled score|, max weight."""
    heads = result.weights.shape[0]
    flat_scores = result.scores.reshape(heads, -1)
    if result.mask is None:
        flat_scaled = result.scaled.reshape(heads, -1)
        scaled = np.maximum(flat_scaled.max(axis=1), -flat_scaled.min(axis=1))
    else:
        visible = ~result.mask  # (n, n): masked cells are −∞
        scaled = np.array([np.abs(result.scaled[h][visible]).max() for h in range(heads)])
    return {"scores": np.maximum(flat_scores.max(axis=1), -flat_scores.min(axis=1)), "scaled": scaled,
            "weights": result.weights.reshape(heads, -1).max(axis=1)}


def _symmetric(bound) -> tuple[float, float]:
    bound = float(bound)
    return (-bound, bound) if bound > 0 else (-1.0, 1.0)


class StageLevels:
    """The colour levels of one result's stages: ``bounds`` from :func:`display_levels` (None: each view
    on its own scale), ``pairs`` from :func:`pair_bounds`, ``vector_bound`` max |value| of x, output and
    output − x (one scale for the last stage)."""

    def __init__(self, bounds: dict | None, pairs: dict, vector_bound: float) -> None:
        self._bounds, self._pairs, self._vector_bound = bounds, pairs, vector_bound

    @classmethod
    def of(cls, result) -> "StageLevels":
        vector_bound = float(max(np.abs(result.x).max(), np.abs(result.output).max(), np.abs(result.diff).max()))
        return cls(display_levels(result), pair_bounds(result), vector_bound or 1.0)

    def bound(self, name: str, head: int | None = None):
        if self._bounds is None:
            return None
        value = self._bounds[name]
        return _symmetric(value[head] if head is not None else value)

    def pair(self, stage: str, head: int) -> tuple[float, float]:
        if stage == "weights":
            return (0.0, max(float(self._pairs["weights"][head]), 1e-6))
        bound = max(float(self._pairs[stage][head]), 1e-6)
        return (-bound, bound)

    def vectors(self) -> tuple[float, float]:
        return _symmetric(self._vector_bound)


def stage_specs(key: str, result, head: int, scale: "StageLevels") -> list[dict]:
    """What each heatmap shows at stage ``key`` of ``result``: name, title, matrix, labels, colour levels,
    axes and whether the focused row is outlined (the player's views and the exported frames)."""
    tokens = result.token_texts
    token_axes = (Q.translate("PlayerPanel", "token"), Q.translate("PlayerPanel", "dimension"))
    pair_axes = (Q.translate("PlayerPanel", "query token"), Q.translate("PlayerPanel", "key token"))

    def spec(name, title, matrix, *, rows=tokens, columns=None, levels=None, colormap=DIVERGING_MAP,
             axes=token_axes, highlight=True):
        if levels is None:  # worker failed: each view on its own scale
            levels = (0.0, 1.0) if colormap == WEIGHTS_MAP else symmetric_levels(matrix)
        shape = fill(Q.translate("PlayerPanel", "%1 × %2"), *matrix.shape)
        return {"name": name, "title": f"{title} · {shape}", "matrix": matrix, "rows": rows,
                "columns": columns, "levels": levels, "colormap": colormap, "axes": axes, "highlight": highlight}

    if key == "embeddings":
        bound = scale.bound("embeddings")
        if result.config.positional == "sinusoidal":
            return [spec("embeddings", Q.translate("PlayerPanel", "embeddings"), result.embeddings, levels=bound),
                    spec("positional", Q.translate("PlayerPanel", "+ positions (sinusoidal)"), result.positional, levels=bound),
                    spec("x", Q.translate("PlayerPanel", "= x"), result.x, levels=bound)]
        return [spec("x", Q.translate("PlayerPanel", "x = embeddings"), result.x, levels=bound)]
    if key == "qkv":
        bound = scale.bound("qkv", head)
        return [spec(name, fill(Q.translate("PlayerPanel", "%1 of head %2"), name.upper(), head), getattr(result, name)[head],
                     levels=bound) for name in ("q", "k", "v")]
    if key in STAGES:
        titles = {"scores": Q.translate("PlayerPanel", "scores Q·Kᵀ of head %1"), "scaled": Q.translate("PlayerPanel", "scaled scores of head %1"),
                  "weights": Q.translate("PlayerPanel", "weights of head %1")}
        return [spec(key, fill(titles[key], head), getattr(result, key)[head], columns=tokens,
                     levels=scale.pair(key, head), axes=pair_axes,
                     colormap=WEIGHTS_MAP if key == "weights" else DIVERGING_MAP)]
    if key == "weighted_sum":
        bound = scale.bound("v", head)
        return [spec("weights", fill(Q.translate("PlayerPanel", "weights of head %1"), head), result.weights[head], columns=tokens,
                     levels=scale.pair("weights", head), axes=pair_axes, colormap=WEIGHTS_MAP),
                spec("v", fill(Q.translate("PlayerPanel", "× V of head %1"), head), result.v[head], levels=bound,
                     axes=(Q.translate("PlayerPanel", "key token"), Q.translate("PlayerPanel", "dimension")), highlight=False),
                spec("head_outputs", Q.translate("PlayerPanel", "= head output"), result.head_outputs[head], levels=bound)]
    if key == "concat":
        dims = (Q.translate("PlayerPanel", "dimension in"), Q.translate("PlayerPanel", "dimension out"))
        return [spec("concat", Q.translate("PlayerPanel", "concat (all heads)"), result.concat, levels=scale.bound("concat")),
                spec("w_o", Q.translate("PlayerPanel", "· W_O"), result.w_o, rows=None, levels=scale.bound("w_o"), axes=dims,
                     highlight=False),
                spec("output", Q.translate("PlayerPanel", "= output"), result.output, levels=scale.bound("output"))]
    # new_vectors: before and after, on one shared scale
    bound = scale.vectors()
    return [spec("x", Q.translate("PlayerPanel", "x (before)"), result.x, levels=bound),
            spec("output", Q.translate("PlayerPanel", "output (after)"), result.output, levels=bound),
            spec("diff", Q.translate("PlayerPanel", "output − x"), result.diff, levels=bound)]


def caption_lines(key: str, result, head: int, focus: int, trained: bool = False) -> tuple[str, str]:
    """Two lines: what stage ``key`` did (with the engine's numbers), and why; ``trained``: a pretrained
    model's layer (its heads are trained, not random)."""
    config = result.config
    n, d, d_k = result.n, config.d_model, config.d_k
    token = result.tokens[focus].text
    causal = result.mask is not None
    if key == "tokens":
        return (fill(Q.translate("PlayerPanel", "The text is cut into %1 tokens; “%2” (#%3) is the focused one."), n, token, focus),
                Q.translate("PlayerPanel", "Attention works on these pieces: the whole sentence at once, not word by word."))
    if key == "embeddings":
        if config.positional == "sinusoidal":
            return (fill(Q.translate("PlayerPanel", "Each token becomes a vector of %1 numbers: x = embedding + sinusoidal position (%2 × %1)."), d, n),
                    Q.translate("PlayerPanel", "Still a static vector (same word, same embedding); the position tells where the word stands."))
        if config.positional == "rope":
            return (fill(Q.translate("PlayerPanel", "Each token becomes a vector of %1 numbers: x = its embedding (%2 × %1); RoPE adds positions later, by rotating q and k."), d, n),
                    Q.translate("PlayerPanel", "Still a static vector: the same word gets the same embedding in any sentence."))
        return (fill(Q.translate("PlayerPanel", "Each token becomes a vector of %1 numbers: x = its embedding (%2 × %1), no positions added."), d, n),
                Q.translate("PlayerPanel", "Still a static vector: the same word gets the same vector in any sentence, at any place."))
    if key == "qkv":
        first, last = head * d_k, (head + 1) * d_k - 1
        template = (Q.translate("PlayerPanel", "Q = X·W_Q, K = X·W_K (both rotated by position: RoPE), V = X·W_V; head %1 takes columns "
                            "%2–%3 (counted from 0, as the app does; %6–%7 counted from 1): %4 × %5 each.")
                    if config.positional == "rope" else
                    Q.translate("PlayerPanel", "Q = X·W_Q, K = X·W_K, V = X·W_V; head %1 takes columns %2–%3 (counted from 0, as the "
                            "app does; %6–%7 counted from 1): %4 × %5 each."))
        return (fill(template, head, first, last, n, d_k, first + 1, last + 1),
                Q.translate("PlayerPanel", "Q: what am I looking for? K: what do I contain? V: what I actually carry."))
    if key == "scores":
        return (fill(Q.translate("PlayerPanel", "Scores = Q·Kᵀ (%1 × %1): row “%2” holds its query's dot product with every key."), n, token),
                Q.translate("PlayerPanel", "Vectors pointing the same way give a large dot product: relevance measured as similarity."))
    if key == "scaled":
        root = f"{math.sqrt(d_k):.3g}"
        temperature = f"{config.temperature:g}"
        if result.query_scale:  # the model's own scale (Gemma): the divisor the engine used
            what = fill(Q.translate("PlayerPanel", "Scaled = scores ÷ √query_pre_attn_scalar = ÷ √%1 = ÷ %2 (this "
                                    "model’s query scale, not √d_k = √%3)."), f"{result.query_scale:g}",
                        f"{result.score_divisor:.3g}", d_k)
        elif config.scale and config.temperature == 1:
            what = fill(Q.translate("PlayerPanel", "Scaled = scores ÷ √d_k = ÷ √%1 = ÷ %2."), d_k, root)
        elif config.scale:
            what = fill(Q.translate("PlayerPanel", "Scaled = scores ÷ (√d_k · temperature) = ÷ (√%1 · %2) = ÷ %3."), d_k, temperature,
                        f"{math.sqrt(d_k) * config.temperature:.3g}")
        elif config.temperature != 1:
            what = fill(Q.translate("PlayerPanel", "Scaled = scores ÷ temperature %1 (÷ √d_k is switched off)."), temperature)
        else:
            what = Q.translate("PlayerPanel", "Scaling is switched off: the scores go to the softmax unchanged.")
        why = (Q.translate("PlayerPanel", "Divide by √d_k so large dot products don't saturate the softmax.") if config.scale else
               Q.translate("PlayerPanel", "Without ÷ √d_k, large dot products can saturate the softmax (one weight near 1)."))
        if result.query_scale:
            why = Q.translate("PlayerPanel", "Divide by a fixed scale so large dot products don't saturate the softmax; "
                              "Gemma chose its own constant instead of d_k.")
        if result.attn_softcap:
            what += " " + fill(Q.translate("PlayerPanel", "Then capped: %1 · tanh(s ÷ %1), so no score passes ±%1."),
                               f"{result.attn_softcap:g}")
        if causal:
            what += " " + Q.translate("PlayerPanel", "Masked (future) positions become −∞.")
            why += " " + Q.translate("PlayerPanel", "−∞ → weight 0: no peeking at the future.")
        return what, why
    if key == "weights":
        row = result.weights[head, focus]  # (n,)
        top = int(np.argmax(row))
        tied = [int(j) for j in np.flatnonzero(np.isclose(row, row[top], rtol=0, atol=TIE))]
        if len(tied) > 1:  # two keys at 0.422 (the hand calculation): name them all, not the first
            most = fill(Q.translate("PlayerPanel", "Softmax of each row: exp(s) ÷ Σ exp(s); “%1” gives the same largest weight (%3) "
                                "to %2."), token, " / ".join(f"“{result.tokens[j].text}”" for j in tied),
                        f"{float(row[top]):.3f}")
        else:
            most = fill(Q.translate("PlayerPanel", "Softmax of each row: exp(s) ÷ Σ exp(s); “%1” gives most weight to “%2” (%3)."),
                        token, result.tokens[top].text, f"{float(row[top]):.3f}")
        return (most,
                Q.translate("PlayerPanel", "Weights are non-negative (masked ones exactly 0) and each row sums to 1: how much a token "
                        "attends to each other token."))
    if key == "weighted_sum":
        return (fill(Q.translate("PlayerPanel", "Head %1 output = weights · V (%2 × %3): the new “%4” = Σ_j weight_j × v_j."), head, n, d_k, token),
                Q.translate("PlayerPanel", "The weights decide how to mix; V is what gets mixed."))
    if key == "concat":
        if config.heads == 1:
            return (fill(Q.translate("PlayerPanel", "One head: its output (%1 × %2) is the concat; · W_O (%2 × %2) = output."), n, d),
                    Q.translate("PlayerPanel", "W_O mixes the head's dimensions into the new vector of each token."))
        return (fill(Q.translate("PlayerPanel", "Concat: head outputs side by side (%1 heads → %2 × %3), then · W_O (%3 × %3) = output."),
                     config.heads, n, d),
                Q.translate("PlayerPanel", "Trained heads tend to specialise; these random, untrained heads are not specialists: each "
                        "mixes differently by chance. W_O combines what they produce.")
                if not trained else
                Q.translate("PlayerPanel", "In a trained model heads tend to specialise (find one with the head grid); W_O combines "
                        "what they produce."))
    change = float(np.linalg.norm(result.diff[focus]))  # one d-vector
    return (fill(Q.translate("PlayerPanel", "New “%1”: ‖output − x‖ = %2, cosine(x, output) = %3."), token, f"{change:.3f}",
                 f"{float(result.cosine[focus]):.3f}"),
            fill(Q.translate("PlayerPanel", "No longer the static vector: it is “%1” in the context of this sentence."), token))
