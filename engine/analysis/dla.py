"""Direct logit attribution: how much each part of a decoder writes the answer into its prediction.

The residual stream at the last layer is a sum: the embedding (token and learned position), every
head's output z_h @ W_O[l, h], every layer's attention bias b_O[l] and every MLP's output. The
logits read it through the final norm and the unembedding. With the norm's divisor frozen at the
clean run's value (TransformerLens's ``apply_ln=True``: ``hook_scale`` from the cache), the norm is
linear and so is the answer's logit: each part's share is

    share(part) = (C(part) / s) · (γ ⊙ u)          u = W_U[:, answer] (− W_U[:, contrast])

where C subtracts the mean for a LayerNorm (the identity for an RMSNorm), s is the position's
frozen divisor and γ the norm's weight. What no part writes, the norm's shift β · u and the
unembedding bias b_U · u, goes into the ``bias`` part with the attention output biases b_O, so

    embed + Σ heads + Σ mlp + bias = total = the answer's logit (or the logit difference)

exactly (up to float rounding), and the result keeps the model's logit beside the sum.

A head's share splits further by the source positions whose value vectors it summed
(Elhage et al. 2021; TransformerLens's ``stack_head_results`` per source):
z_h = Σ_j α_h[p, j] v_h[j], so head_positions[l, h, j] = α_h[p, j] (v_h[j] @ W_O[l, h]) · g / s.

The same direction reads the residual stream after each component at every position
(``accumulated_resid`` + ``logit_attrs``, each position's own frozen divisor): ``accumulated``
row 0 after the embedding, then after each layer's attention and MLP; its last row is the
model's own logit at every position. ``decomposed`` holds the steps between those rows.

Switched-off heads (the request's ``ablate``) are zeroed at ``hook_z`` before anything reads them:
they contribute nothing and everything after them is the ablated run's. By words, the head ×
source part is also summed over each word's pieces.

    result = logit_attribution(model, RunRequest(text="The Eiffel Tower is in the city of",
                                                 answer=" Paris"), runs)
    result.heads            # (layers, heads) float64
    result.total, result.logit
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..core.errors import EngineError
from ..text.words import membership, words_of
from .arrays import heads_kept
from .occlusion import Answer, answer_token
from .request import NotApplicable

@dataclass(frozen=True, eq=False)
class LogitAttribution:
    """Direct logit attribution of one run at one position (see the module docstring)."""

    answer: Answer
    contrast: Answer | None  # the token whose logit is subtracted (None: the answer's logit alone)
    position: int  # the position whose prediction is split (0-based)
    embed: float  # the embedding's share
    heads: np.ndarray  # (layers, heads) float64 each head's share (0 for switched-off heads)
    mlp: np.ndarray  # (layers,) float64 each MLP's share
    head_positions: np.ndarray  # (layers, heads, n) float64 each head's share by the source position it read
    bias: float  # Σ_l b_O[l], the final norm's shift and the unembedding bias
    total: float  # embed + heads + mlp + bias
    logit: float  # the model's own logit (or logit difference) at ``position``
    accumulated: np.ndarray  # (2·layers + 1, n) float64 the logit read after the embedding, each attention, each MLP
    decomposed: np.ndarray  # (2·layers + 1, n) float64 each component's step (row 0: the embedding, with the bias)
    words: tuple[str, ...] = ()  # by words: the text's words
    head_words: np.ndarray | None = None  # (layers, heads, w) float64 head_positions summed over each word's pieces

    @property
    def note(self) -> str:
        """One sentence when the answer or the contrast was cut to its first token ("" otherwise)."""
        return " ".join(part.note for part in (self.answer, self.contrast) if part is not None and part.note)

    def arrays(self) -> dict:
        """The export keys (docs/FORMAT.md)."""
        arrays = {"dla_embed": np.float64(self.embed), "dla_heads": self.heads, "dla_mlp": self.mlp,
                  "dla_head_positions": self.head_positions, "dla_bias": np.float64(self.bias),
                  "dla_total": np.float64(self.total), "dla_accumulated": self.accumulated,
                  "dla_decomposed": self.decomposed, "dla_position": np.int64(self.position),
                  "dla_answer_id": np.int64(self.answer.id)}
        if self.contrast is None:
            arrays["logit"] = np.float64(self.logit)
        else:
            arrays["logit_diff"] = np.float64(self.logit)
            arrays["dla_contrast_id"] = np.int64(self.contrast.id)
        if self.head_words is not None:
            arrays["dla_head_words"] = self.head_words
        return arrays


def answers(model, request) -> tuple[Answer, Answer | None]:
    """The request's answer and contrast tokens (EngineError: empty, no tokens, or the same token)."""
    answer = answer_token(model, request.answer)
    if request.contrast is None:
        return answer, None
    contrast = answer_token(model, request.contrast)
    if contrast.id == answer.id:
        raise EngineError("the contrast {contrast!r} is the answer's own token {piece!r}: give another token, "
                          "e.g. ' London'", field="contrast", contrast=request.contrast, piece=answer.piece)
    return answer, contrast


def cache_names(layers: int) -> list[str]:
    """The hook points the attribution reads."""
    names = ["ln_final.hook_scale", f"blocks.{layers - 1}.hook_resid_post"]
    for layer in range(layers):
        names += [f"blocks.{layer}.hook_resid_pre", f"blocks.{layer}.hook_resid_mid", f"blocks.{layer}.attn.hook_z",
                  f"blocks.{layer}.attn.hook_v", f"blocks.{layer}.hook_mlp_out"]
    return names


def unembedding(model, answer: Answer, contrast: Answer | None) -> tuple[np.ndarray, float]:
    """(u (d,) float64, b): the answer's column of W_U and its bias, minus the contrast's."""
    u = model.W_U[:, answer.id].astype(np.float64)  # (d,)
    bias = float(model.b_U[answer.id])
    if contrast is not None:
        u = u - model.W_U[:, contrast.id].astype(np.float64)
        bias -= float(model.b_U[contrast.id])
    return u, bias


def logit_direction(model, u: np.ndarray, bias: float) -> tuple[np.ndarray, float]:
    """(g (d,) float64, constant): a frozen-norm residual row r reads logit = (r · g) / s + constant.
    g = C(γ ⊙ u) (C centres for a LayerNorm: it is symmetric, so C(r) · x = r · C(x));
    constant = β · u + b."""
    direction = model.ln_final_w.astype(np.float64) * u  # (d,)
    if model.ln_final_centres:
        direction -= direction.mean()
    return direction, float(model.ln_final_b.astype(np.float64) @ u) + bias


def _position(position: int, n: int) -> int:
    if not -n <= position < n:
        raise EngineError("position {position} is outside the text's {n} tokens", field="position",
                          position=position, n=n)
    return position % n


def attribution_run(model, runs) -> tuple:
    """(trace, cache) of the request's run with its heads switched off, the hook values the
    attribution reads (made once per request: shared by its analyses)."""
    request = runs.request

    def run():
        return model.run_with_cache(request.text, cache_names(model.facts.layers), ablate=request.ablate,
                                    memory_budget=request.memory_budget, use_cache=False)

    return runs.memo("dla_run", run)


def logit_attribution(model, request, runs) -> LogitAttribution | NotApplicable:
    """Direct logit attribution of ``request`` (its answer, contrast, position, ablate, by_words)."""
    facts = model.facts
    if not facts.capabilities.logit_attribution:
        return NotApplicable("dla", EngineError(
            "direct logit attribution needs a residual stream that adds the layers' outputs as they are; "
            "{model} normalises them (or soft-caps its logits) first, so the parts would not add up",
            model=facts.name or facts.family))
    if request.answer is None:
        return NotApplicable("dla", EngineError(
            "direct logit attribution needs an answer token: give one, e.g. ' Paris'", field="answer"))
    answer, contrast = answers(model, request)
    trace, cache = attribution_run(model, runs)
    layers, heads = facts.layers, facts.heads
    n = trace.n
    p = _position(request.position, n)
    u, unembedding_bias = unembedding(model, answer, contrast)
    direction, constant = logit_direction(model, u, unembedding_bias)  # (d,), scalar
    scales = cache["ln_final.hook_scale"][:, 0].astype(np.float64)  # (n,) the clean run's frozen divisors
    scale = scales[p]

    def read(rows: np.ndarray) -> np.ndarray:
        return rows.astype(np.float64) @ direction  # (…,) residual rows · g, before dividing by s

    per_head = model.W_O.astype(np.float64) @ direction  # (layers, heads, d_head): W_O[l, h] @ g
    group = heads // facts.kv_heads  # query heads per key/value head
    head_shares = np.empty((layers, heads))
    head_positions = np.empty((layers, heads, n))
    mlp = np.empty(layers)
    steps = np.empty((2 * layers + 1, n))  # each component's read at every position, before dividing by s
    steps[0] = read(cache["blocks.0.hook_resid_pre"])
    for layer in range(layers):
        z = cache[f"blocks.{layer}.attn.hook_z"][p].astype(np.float64)  # (heads, d_head) zeros where switched off
        head_shares[layer] = np.einsum("hk,hk->h", z, per_head[layer])
        v = cache[f"blocks.{layer}.attn.hook_v"].astype(np.float64)  # (n, kv_heads, d_head)
        v_read = np.einsum("jhk,hk->hj", v[:, np.arange(heads) // group], per_head[layer])  # (heads, n)
        head_positions[layer] = trace.attentions[layer, :, p, :] * v_read  # α_h[p, j] (v_h[j] @ W_O) · g
        mlp[layer] = read(cache[f"blocks.{layer}.hook_mlp_out"][p])
        resid_pre = cache[f"blocks.{layer}.hook_resid_pre"]
        resid_mid = cache[f"blocks.{layer}.hook_resid_mid"]
        after = cache[f"blocks.{layer + 1}.hook_resid_pre"] if layer + 1 < layers \
            else cache[f"blocks.{layers - 1}.hook_resid_post"]
        steps[2 * layer + 1] = read(resid_mid) - read(resid_pre)  # attention (its b_O included)
        steps[2 * layer + 2] = read(after) - read(resid_mid)  # MLP
    kept = heads_kept(request.ablate, layers, heads)
    head_positions *= kept[:, :, None]
    bias_read = float(np.sum(model.b_O.astype(np.float64) @ direction))  # Σ_l b_O[l] · g
    embed = float(steps[0, p]) / scale
    head_shares /= scale
    head_positions /= scale
    mlp /= scale
    bias = bias_read / scale + constant
    total = embed + float(head_shares.sum()) + float(mlp.sum()) + bias
    decomposed = steps / scales  # (2·layers + 1, n)
    decomposed[0] += constant
    accumulated = np.cumsum(decomposed, axis=0)
    final = model.ln_final(cache[f"blocks.{layers - 1}.hook_resid_post"][p:p + 1])[0].astype(np.float64)  # (d,)
    logit = float(final @ u) + unembedding_bias  # the model's own: ln_final(resid) @ W_U + b_U
    words, head_words = (), None
    if request.by_words:
        word_list, word_index = words_of(request.text, trace.tokens, facts.special_tokens)
        words = tuple(str(word) for word in word_list)
        head_words = head_positions @ membership(word_index, len(words))  # (layers, heads, w)
    return LogitAttribution(answer, contrast, p, embed, head_shares, mlp, head_positions, bias, total, logit,
                            accumulated, decomposed, words, head_words)
