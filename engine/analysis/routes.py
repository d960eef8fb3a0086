"""Information-flow routes: which parts of the model carried a position's representation.

Ferrando & Voita (2024), "Information Flow Routes: Automatically Interpreting Language Models at
Scale" (arXiv 2403.00824). The residual stream is a graph: its nodes are the token
representations before each block, between attention and MLP, and after it; its edges are what
each block adds. Every block's output is a sum, and each part of the sum is an edge into it:

    attention, layer l, position i:  y_i = x_i + Σ_h Σ_j z_ij^h + b_O      x_i = resid_pre, y_i = resid_mid
                                     z_ij^h = α_ij^h (x̂_j W_V^h + b_V^h) W_O^h   (head h's share from token j)
    MLP, layer l, position i:        y_i = r_i + m_i                          r_i = what the MLP adds to
                                                                              (resid_mid; a post-LN encoder's
                                                                              LN1 of it), y_i = resid_post

An edge's importance is its proximity to the sum, normalised over the block's incoming parts (the
paper's rule, after ALTI-Logit):

    proximity(c, y) = max(0, ‖y‖₁ − ‖y − c‖₁)      importance(c, y) = proximity(c, y) / Σ_c' proximity(c', y)

The attention block's parts are the residual x_i and every z_ij^h (heads × tokens); b_O is in y
but is no part (a constant of the layer, nobody's contribution). The token edge j → i of layer l is
the sum of its heads' importances. A head switched off contributes nothing (z = 0, importance 0), as
a position a causal mask hides.

The route to a position p keeps, from the last layer's output of p down to the embeddings, the
edges above a threshold τ ∈ (0, 1) into nodes already on the route: a kept MLP or MLP-residual edge
puts i's middle node on the route, a kept attention edge j → i puts j's input node on it, a kept
residual edge i's own. A post-LN encoder's norms sit inside the nodes (the next sum reads the
normalised vector as its residual part).

    routes = flow_routes(model, RunRequest(text="The Eiffel Tower is in the city of", tau=0.04))
    routes.heads          # (layers, heads, n, n) float64 [l, h, i, j] importance of head h's part from j in i
    routes.edges          # structured (k,): layer, kind, head, from, to, importance (the route above τ)
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..core.errors import EngineError
from .request import NotApplicable, RunRequest, check_tokens

ROUTES_TOKENS = 256  # heads · n² · d differences a layer, and (layers, heads, n, n) float64 kept: 141 MB for SmolLM2 at 256
DEFAULT_TAU = 0.04  # the threshold the paper's figures use
CHUNK_BYTES = 64 << 20  # the (rows, heads, n, d) float32 block of one step stays under this
EDGE_KINDS = ("attention", "head", "residual", "mlp", "mlp_residual")
EDGE_DTYPE = np.dtype([("layer", np.int32), ("kind", "U12"), ("head", np.int32), ("from", np.int32),
                       ("to", np.int32), ("importance", np.float64)])


def check_tau(tau: float) -> float:
    """``tau`` as a float, or EngineError saying it must lie strictly between 0 and 1."""
    tau = float(tau)
    if not 0.0 < tau < 1.0:
        raise EngineError("the routes' threshold τ must lie strictly between 0 and 1, not {tau}: try 0.04",
                          field="tau", tau=f"{tau:g}")
    return tau


@dataclass(frozen=True, eq=False)
class Routes:
    """Every edge's importance in one run, and the route to ``position`` kept above ``tau``."""

    heads: np.ndarray  # (layers, heads, n, n) float64 [l, h, i, j]: head h's part from j in i's attention sum
    residual: np.ndarray  # (layers, n) float64: x_i's importance in its own attention sum
    mlp: np.ndarray  # (layers, n) float64: the MLP's output in the MLP sum
    mlp_residual: np.ndarray  # (layers, n) float64: the MLP's residual input in the MLP sum
    position: int  # the route's target position (0-based, never negative)
    tau: float
    edges: np.ndarray  # structured (k,) EDGE_DTYPE, the route (see :func:`route_edges`)
    tokens: tuple[str, ...]

    @property
    def attention(self) -> np.ndarray:
        """(layers, n, n) float64 [l, i, j]: the token edge j → i, its heads summed."""
        return self.heads.sum(axis=1)

    def arrays(self) -> dict[str, np.ndarray]:
        """The export keys (docs/FORMAT.md)."""
        return {"route_edges": self.edges}


def proximities(parts: np.ndarray, whole: np.ndarray, *, scratch: bool = False) -> np.ndarray:
    """(…, k) float64 max(0, ‖y‖₁ − ‖y − c‖₁) of parts c (…, k, d) to their sums y (…, d). Each L1
    norm is summed in float64 from the parts' own precision: a float32 part's norm is within ~1e-7
    of itself, and the normalised importances divide by the sum of every part's proximity, which
    the residual's keeps near ‖y‖₁. ``scratch``: ``parts`` may be overwritten (no second buffer)."""
    whole = np.asarray(whole)
    difference = np.subtract(whole[..., None, :].astype(parts.dtype), parts, out=parts if scratch else None)
    distance = np.abs(difference, out=difference).sum(-1, dtype=np.float64)
    closer = np.abs(whole).sum(-1, dtype=np.float64)[..., None] - distance
    return np.maximum(closer, 0.0)


def normalised(close: np.ndarray) -> np.ndarray:
    """(…, k) ``close`` divided by its sum over the last axis (0 where no part is closer than nothing)."""
    total = close.sum(-1, keepdims=True)
    return np.divide(close, total, out=np.zeros_like(close), where=total > 0)


def block_importances(model, cache, layer: int, ablate: frozenset) -> tuple[np.ndarray, np.ndarray]:
    """(heads (H, n, n) [h, i, j], residual (n,)): the attention block's importances in ``layer``
    from the hook values of one run (``cache``) and the contract's W_O."""
    facts = model.facts
    pattern = np.asarray(cache[f"blocks.{layer}.attn.hook_pattern"], dtype=np.float32)  # (H, n, n)
    values = np.asarray(cache[f"blocks.{layer}.attn.hook_v"], dtype=np.float32)  # (n, kv_heads, d_head)
    resid_pre = np.asarray(cache[f"blocks.{layer}.hook_resid_pre"], dtype=np.float32)  # (n, d)
    resid_mid = np.asarray(cache[f"blocks.{layer}.hook_resid_mid"], dtype=np.float32)  # (n, d)
    heads, n = pattern.shape[0], pattern.shape[1]
    group = heads // facts.kv_heads  # query heads that read one key/value head
    w_o = np.ascontiguousarray(model.W_O[layer], dtype=np.float32)  # (H, d_head, d)
    # f[h, j] = (x̂_j W_V^h + b_V^h) W_O^h: what head h would add from token j with all its attention
    # query head h reads key/value head h // group (grouped-query attention repeats each in order).
    # einsum, not a BLAS call per head: nine (n, 64) @ (64, 576) products took 16 ms of CPU each in
    # OpenBLAS here (its threads spin on calls this small), the einsum 1 ms for all nine
    grouped = w_o.reshape(facts.kv_heads, group, *w_o.shape[1:])  # (kv_heads, group, d_head, d)
    f = np.einsum("ngk,grkd->grnd", values, grouped).reshape(heads, n, -1)  # (H, n, d)
    for off_layer, head in ablate:
        if off_layer == layer:
            f[head] = 0.0
    d = f.shape[-1]
    by_row = np.ascontiguousarray(pattern.transpose(1, 0, 2))  # (n, H, n) [i, h, j]
    # row blocks: at most CHUNK_BYTES each, and a few of them, so that under a causal mask a block
    # reads only the columns its rows can see (a share with α = 0 is 0: proximity 0, as set below)
    rows = max(1, min(int(CHUNK_BYTES // (4 * heads * n * d)), max(8, -(-n // 4))))
    close = np.zeros((n, heads, n + 1))  # [i, h, j]; [i, 0, n] holds the residual's
    for start in range(0, n, rows):
        stop = min(n, start + rows)
        seen = stop if not by_row[start:stop, :, stop:].any() else n  # columns with any weight in these rows
        shares = by_row[start:stop, :, :seen, None] * f[None, :, :seen]  # (rows, H, seen, d): z_ij^h
        close[start:stop, :, :seen] = proximities(shares.reshape(stop - start, heads * seen, d), resid_mid[start:stop],
                                                  scratch=True).reshape(stop - start, heads, seen)
    close[:, 0, n] = proximities(resid_pre[:, None], resid_mid)[:, 0]
    share = normalised(close.reshape(n, heads * (n + 1))).reshape(n, heads, n + 1)
    return share[:, :, :n].transpose(1, 0, 2), share[:, 0, n]


def mlp_importances(cache, layer: int) -> tuple[np.ndarray, np.ndarray]:
    """(mlp (n,), residual (n,)): the MLP block's two parts' importances in ``layer``; the residual
    part is the sum minus the MLP's output (a post-LN encoder's LN1 output, a decoder's resid_mid)."""
    post = np.asarray(cache[f"blocks.{layer}.hook_resid_post"], dtype=np.float64)  # (n, d)
    out = np.asarray(cache[f"blocks.{layer}.hook_mlp_out"], dtype=np.float64)  # (n, d)
    parts = np.stack([out, post - out], axis=1)  # (n, 2, d)
    share = normalised(proximities(parts, post))
    return share[:, 0], share[:, 1]


def route_edges(heads: np.ndarray, residual: np.ndarray, mlp: np.ndarray, mlp_residual: np.ndarray,
                position: int, tau: float) -> np.ndarray:
    """The route to ``position``: structured (k,) EDGE_DTYPE rows, built from the last layer down.

    kind "mlp" / "mlp_residual": i → i into the layer's output (head −1); "attention": j → i into the
    middle node, heads summed (head −1); "residual": i → i around attention (head −1); "head": each
    head's share (> 0) of a kept attention edge. Rows sorted by layer, kind (EDGE_KINDS' order), to,
    from, head."""
    layers, num_heads, n, _ = heads.shape
    attention = heads.sum(axis=1)  # (layers, n, n) [l, i, j]
    rows = []
    after = np.zeros(n, bool)  # nodes on the route at the output of the current layer
    after[position] = True
    for layer in range(layers - 1, -1, -1):
        middle = np.zeros(n, bool)
        for kind, values in (("mlp", mlp[layer]), ("mlp_residual", mlp_residual[layer])):
            for i in np.flatnonzero(after & (values > tau)):
                rows.append((layer, kind, -1, i, i, values[i]))
                middle[i] = True
        before = np.zeros(n, bool)
        for i in np.flatnonzero(middle):
            for j in np.flatnonzero(attention[layer, i] > tau):
                rows.append((layer, "attention", -1, j, i, attention[layer, i, j]))
                rows.extend((layer, "head", h, j, i, heads[layer, h, i, j])
                            for h in np.flatnonzero(heads[layer, :, i, j] > 0))
                before[j] = True
            if residual[layer, i] > tau:
                rows.append((layer, "residual", -1, i, i, residual[layer, i]))
                before[i] = True
        after = before
    edges = np.array(rows, dtype=EDGE_DTYPE) if rows else np.zeros(0, EDGE_DTYPE)
    kind_order = np.array([EDGE_KINDS.index(k) for k in edges["kind"]], dtype=np.int32)
    return edges[np.lexsort((edges["head"], edges["from"], edges["to"], kind_order, edges["layer"]))]


def importances(model, request: RunRequest, tokenized=None):
    """(heads (L, H, n, n), residual (L, n), mlp (L, n), mlp_residual (L, n)) of ``request``'s run."""
    tokenized = tokenized if tokenized is not None else model.tokenize(request.text)
    layers = model.facts.layers
    points = ("attn.hook_pattern", "attn.hook_v", "hook_resid_pre", "hook_resid_mid", "hook_mlp_out", "hook_resid_post")
    names = [f"blocks.{layer}.{point}" for layer in range(layers) for point in points]
    _, cache = model.run_with_cache(tokenized, names, ablate=request.ablate, memory_budget=request.memory_budget,
                                    use_cache=False)
    n = len(tokenized.tokens)
    heads = np.empty((layers, model.facts.heads, n, n))
    residual, mlp, mlp_residual = np.empty((layers, n)), np.empty((layers, n)), np.empty((layers, n))
    for layer in range(layers):
        heads[layer], residual[layer] = block_importances(model, cache, layer, request.ablate)
        mlp[layer], mlp_residual[layer] = mlp_importances(cache, layer)
    return heads, residual, mlp, mlp_residual


def flow_routes(model, request: RunRequest) -> Routes:
    """:class:`Routes` of ``request``'s text on ``model`` (an encoder or a decoder of the contract), to
    ``request.position`` (−1: the last token) above ``request.tau`` (None: :data:`DEFAULT_TAU`)."""
    request = request.checked(model.facts)
    tau = check_tau(DEFAULT_TAU if request.tau is None else request.tau)
    tokenized = model.tokenize(request.text)
    n = len(tokenized.tokens)
    check_tokens(n, ROUTES_TOKENS, "The routes analysis")
    position = request.position
    if not -n <= position < n:
        raise EngineError("position {position} does not exist: the text has {count} tokens (0 … {last})",
                          field="position", position=position, count=n, last=n - 1)
    position %= n
    heads, residual, mlp, mlp_residual = importances(model, request, tokenized)
    edges = route_edges(heads, residual, mlp, mlp_residual, position, tau)
    return Routes(heads, residual, mlp, mlp_residual, position, tau, edges, tuple(t.text for t in tokenized.tokens))


def routes_of(model, request: RunRequest, runs=None):
    """The analysis table's row: :func:`flow_routes`, or NotApplicable when the request sets no τ
    (one forward with hooks on every layer: never computed unasked)."""
    if request.tau is None:
        return NotApplicable("routes", EngineError(
            "information-flow routes are computed when asked for (export --routes, the Routes panel)"))
    return flow_routes(model, request)
