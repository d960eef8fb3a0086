"""Attention flow (Abnar & Zuidema, 2020): the maximum flow from each input token to each position
after the last layer, through the rollout graph.

The graph: nodes (layer l, position k) for l = 0 … L; an edge from (l, k) to (l + 1, m) with
capacity Â_l[m, k], where Â_l = rows_normalised(0.5 · mean over heads of A_l + 0.5 · I) — the same
matrices as :func:`engine.analysis.rollout.attention_rollout`. ``attention_flow(...)[i, j]`` is the value
of a maximum flow from (0, j) to (L, i). Rollout multiplies the matrices (every path counts, each
by the product of its weights); flow asks how much can get through when every edge is a pipe of
that capacity (a path counts by its narrowest edge, and paths share pipes). Each entry lies in
[rollout, 1]: the rollout row of i is itself a feasible flow, and (L, i) receives at most 1.

Algorithm: an exact maximum flow, Goldberg–Tarjan push-relabel in its synchronous form
(Goldberg & Tarjan 1988, §"parallel implementation"), every (i, j) pair a separate problem and
all pairs advanced together in vectorized NumPy (the pairs' states stacked on a batch axis):
- only the first maximum *preflow* is computed (phase one): the flow value is the excess at the
  sink, and excess that cannot reach the sink any more is dropped instead of being returned;
- each round every active node pushes its excess to admissible neighbours (height one lower,
  residual capacity > 0) greedily in index order — two ends of an edge are never both admissible,
  so simultaneous pushes never conflict — then the nodes still holding excess relabel to 1 + the
  lowest residual neighbour;
- every few rounds (GLOBAL_EVERY, or half the layers in a deeper graph) a global relabel
  (breadth-first distances to the sink in the residual graph, each step's products over the layers
  beside the front only) sets exact heights and marks nodes that cannot reach the sink as dead;
- pairs whose preflow is final leave the batch (a NumPy compaction, once a quarter of the batch is done),
  so late rounds are cheap. A pair is final when no node that can reach the sink holds excess, or
  when its sink excess reaches the smaller trivial cut (the source's out-capacity, the sink's
  in-capacity: nothing exceeds a cut), or — right after a global relabel, when the nodes that can
  reach the sink form a cut of capacity (sink excess + their excess) — when that excess is at most
  ``CERTIFIED`` (1e-10): the value is then within 1e-10 of the maximum, certified by that cut.
Layout and batching (the constant factors): the flow on the middle edges is stored with a node's
out-edges in a contiguous row (forward pushes, the frequent ones, gather whole rows by one flat
index; back pushes read columns); the global relabel's breadth-first steps are batched float32
matrix–vector products (BLAS) of the 0/1 residual matrices; batches of ~2 M edge entries.
Cost: n² problems of O((L − 2)·n²) per round; the number of rounds grows with n (~100 at 64
tokens on MiniLM, most pairs final after 40–60); the batches run on the engine's threads
(engine.core.parallel.run_parallel: NumPy's element-wise work uses one core per thread). Measured
(benchmarks/bench_patching.py; figures in benchmarks/README.md): far from 2 s at 64 tokens — every
pair is its own problem, no work is shared between pairs, and a pair at 64 tokens costs ~1,060 node
discharges of 2n edges each (~3 per node of the graph). Tried and dropped, each measured in CPU
seconds on 512 pairs at 64 tokens: one problem per source with the sinks taken in sequence, each
sink warm-started from the previous one's preflow (valid because a layer-L node has no out-edges,
as in Hao & Orlin's sink sequence: as many rounds per pair as a cold start); Gauss–Seidel sweeps
layer by layer instead of synchronous rounds (1,115 discharges per pair, no faster); pushing each
node's excess to its largest (or smallest) capacities first instead of in index order (2× / 1.3×
slower); solving from the sink's side in the reversed graph where the sink's cut is the smaller
(1.5× slower); certifying at 1e-6 instead of 1e-10 (no fewer discharges: the excess that is left
is real flow still being routed, not float dust). Also tried: answering the trivial cut's value
from a constructed flow instead (capacity-capped pushes and pulls, product-form flows, pairs joined
through a shared middle-layer distribution, sparsified middle layers) certified at most a third of
the pairs at 64 tokens (and 2 % of them have a smaller cut): the flows that reach it use nearly
every edge (benchmarks/README.md, its "flow" section).
"""
from __future__ import annotations

import threading

import numpy as np

from ..core.parallel import THREADS, run_parallel
from .rollout import RESIDUAL, rows_normalised, mean_attention

CAUSAL_GROUPS = 3  # a causal focused row's sources in this many cut graphs (focused_flow)
FLOW_TOKENS = 64  # the command line and the window refuse longer inputs (n² problems, each growing with n)
EPSILON = 1e-13  # a residual capacity at or below this is saturated (float64 dust from sums)
DEAD = np.iinfo(np.int32).max  # height of a node that cannot reach the sink
GLOBAL_EVERY = 8  # rounds between global relabels (each is a full breadth-first search)
REACHED = 1e-12  # a sink excess this close to a trivial cut is that cut's value (the flow is maximal)
CERTIFIED = 1e-10  # after a global relabel: excess that may still reach the sink at most this → done (the cut bounds it)
PAIRS_PER_BATCH_ELEMENTS = 2_000_000  # float64 entries of one batch's edge arrays (16 MB: the gathers stay in cache;
# 24 M was 1.4× slower at 64 tokens)


def flow_capacities(attentions: np.ndarray, residual: float = RESIDUAL, heads_kept=None) -> np.ndarray:
    """(layers, n, n) float64 capacities Â_l from attentions (layers, heads, n, n): the heads'
    mean mixed with the identity, rows renormalised (as the rollout's matrices). ``heads_kept``:
    (layers, heads) bool, False for switched-off heads — zero weights in the mean over all heads
    (engine.analysis.rollout.mean_attention says why)."""
    attentions = np.asarray(attentions, dtype=np.float64)
    n = attentions.shape[-1]
    mixed = (1.0 - residual) * mean_attention(attentions, heads_kept) + residual * np.eye(n)  # (layers, n, n)
    return rows_normalised(mixed)


def attention_flow(attentions: np.ndarray, residual: float = RESIDUAL, rows=None,
                   cancelled=None, heads_kept=None, progress=None) -> np.ndarray:
    """(n, n) float64 maximum flow from input token j (column) to position i after the last layer
    (row), for attentions (layers, heads, n, n). ``rows``: compute only these final positions
    (the other rows are NaN). ``cancelled``: optional callable polled between batches (True →
    stop and return what is done, the rest NaN). ``heads_kept``: (layers, heads) bool, False for
    the run's switched-off heads (:func:`flow_capacities`)."""
    return max_flows(flow_capacities(attentions, residual, heads_kept), rows=rows, cancelled=cancelled,
                     progress=progress)


def _kept(attentions: np.ndarray, ablate) -> np.ndarray | None:
    """(layers, heads) bool, False for the switched-off heads; None when every head is on."""
    if not ablate:
        return None
    kept = np.ones(attentions.shape[:2], dtype=bool)  # (layers, heads)
    for layer, head in ablate:
        kept[layer, head] = False
    return kept


def focused_flow(attentions: np.ndarray, position: int, ablate=frozenset(), *, cancelled=None) -> np.ndarray:
    """(n,) float64 maximum flow from every input token j to ``position`` after the last layer: one
    row of :func:`flow_of_run`, n maximum flows instead of n² (what the window computes on each
    change of the focused token, while the whole matrix runs in the background). Under a causal
    mask each source's graph is cut to the tokens from it up to ``position`` (the flow reaches no
    other; a later source's flow is 0).
    EngineError past FLOW_TOKENS tokens, before any work."""
    from .request import check_tokens

    attentions = np.asarray(attentions)
    n = attentions.shape[-1]
    check_tokens(n, FLOW_TOKENS, "attention flow")
    position = int(position) % n
    capacities = flow_capacities(attentions, heads_kept=_kept(attentions, ablate))  # (layers, n, n)
    if len(capacities) == 1 or np.triu(capacities, 1).any():  # one layer, or tokens that see later ones
        return max_flows(capacities, rows=[position], cancelled=cancelled)[position]
    # a causal mask: from token j the flow only reaches tokens j … position (edges never go back, and a
    # residual edge runs back only along flow), so sources j ≥ a solve in the graph cut to a … position.
    # The sources go in CAUSAL_GROUPS contiguous groups, each in its own cut graph (~2.5× fewer edges
    # than the whole graph for the row's n sources)
    row = np.zeros(n)
    seen = position + 1
    starts = np.linspace(0, seen, min(CAUSAL_GROUPS, seen) + 1).astype(int)

    def solve(group: int) -> None:
        if cancelled is not None and cancelled():
            return
        first, stop = starts[group], starts[group + 1]
        cut = np.ascontiguousarray(capacities[:, first:seen, first:seen])  # (layers, m, m)
        sources = np.arange(stop - first)
        row[first:stop] = _preflow_values(cut, sources, np.full(len(sources), position - first))

    run_parallel(solve, range(len(starts) - 1))
    return row


def flow_of_run(attentions: np.ndarray, ablate=frozenset(), *, cancelled=None, progress=None) -> np.ndarray:
    """(n, n) attention flow of one run's attentions (layers, heads, n, n) whose heads ``ablate``
    ((layer, head) pairs) were switched off: those heads count as zero weights in the heads' mean
    (engine.analysis.rollout.mean_attention). EngineError past FLOW_TOKENS tokens, before any work:
    the one check the window and the command line share. ``progress``: optional callable
    ``(pairs done, pairs)`` after each batch of pairs."""
    from .request import check_tokens

    attentions = np.asarray(attentions)
    check_tokens(attentions.shape[-1], FLOW_TOKENS, "attention flow")
    return attention_flow(attentions, heads_kept=_kept(attentions, ablate), cancelled=cancelled, progress=progress)


def flow(model, request, *, cancelled=None) -> np.ndarray:
    """(n, n) attention flow of one engine.analysis.request.RunRequest: ``request.text`` run by
    ``model`` with the heads of ``request.ablate`` off (:func:`flow_of_run`)."""
    request = request.checked(model.facts)
    trace = model.run(request.text, ablate=request.ablate)
    return flow_of_run(trace.attentions, request.ablate, cancelled=cancelled)


def max_flows(capacities: np.ndarray, rows=None, cancelled=None, progress=None) -> np.ndarray:
    """(n, n) maximum flow through layered capacities (layers, n, n) (edge (l, k) → (l+1, m) of
    capacity ``capacities[l, m, k]``) from (0, j) to (L, i), at [i, j]; see the module docstring.
    ``progress(pairs done, pairs)`` after each batch."""
    capacities = np.asarray(capacities, dtype=np.float64)
    layers, n, _ = capacities.shape
    rows = np.arange(n) if rows is None else np.asarray(rows, dtype=np.int64)
    out = np.full((n, n), np.nan)
    if layers == 1:  # one edge between the two nodes
        out[rows] = capacities[0][rows]
        return out
    sinks = np.repeat(rows, n)  # (pairs,)
    sources = np.tile(np.arange(n), len(rows))
    per_pair = max(1, (layers - 2) * n * n + 2 * n)
    batch = max(1, PAIRS_PER_BATCH_ELEMENTS // per_pair)
    batch = min(batch, -(-len(sinks) // THREADS))  # one row's n pairs still fill every thread
    finished = [0]
    counting = threading.Lock()  # batches finish on two threads

    def solve(start: int) -> None:  # batches are independent: each writes its own entries of `out`
        if cancelled is not None and cancelled():
            return
        part = slice(start, start + batch)
        out[sinks[part], sources[part]] = _preflow_values(capacities, sources[part], sinks[part])
        if progress is not None:
            with counting:  # reported in order: the last report is every pair
                finished[0] += len(sinks[part])
                progress(finished[0], len(sinks))

    starts = range(0, len(sinks), batch)
    if len(starts) > 1:
        run_parallel(solve, starts)  # NumPy's element-wise work runs on one core per thread
    else:
        solve(0)
    return out


def _preflow_values(capacities: np.ndarray, sources: np.ndarray, sinks: np.ndarray) -> np.ndarray:
    """(pairs,) maximum flow values, one problem per (source, sink) pair (see module docstring)."""
    layers, n, _ = capacities.shape
    inner = layers - 1  # node layers 1 … L−1, indexed 0 … inner−1 here
    middle = capacities[1:layers - 1]  # (inner−1, m, k): edge (l, k) → (l+1, m) between inner layers
    middle_t = np.ascontiguousarray(middle.transpose(0, 2, 1))  # (inner−1, k, m): a node's out-edges in a row
    pairs = len(sources)
    result = np.zeros(pairs)
    index = np.arange(pairs)  # which pair each batch row still is
    flow = np.zeros((pairs, inner - 1, n, n))  # (pairs, inner−1, k, m) flow on the middle edges: a node's out-edges in a row
    sink_cap = capacities[layers - 1][sinks].copy()  # (pairs, n) edges (L−1, k) → sink
    sink_flow = np.zeros((pairs, n))
    excess = np.zeros((pairs, inner, n))
    excess[:, 0, :] = capacities[0][:, sources].T  # the source's edges saturated at the start
    # the two trivial cuts: the source's out-edges and the sink's in-edges. A pair whose sink excess
    # reaches the smaller is done (nothing can exceed a cut), however much excess still moves elsewhere
    bound = np.minimum(excess[:, 0, :].sum(axis=1), sink_cap.sum(axis=1)) - REACHED  # (pairs,)
    height = _global_heights(middle_t, flow, sink_cap, sink_flow)
    every = max(GLOBAL_EVERY, layers // 2)  # a deep graph's excess needs more rounds between relabels to move
    done = np.zeros(pairs, dtype=bool)
    rounds = 0
    while True:
        active = (excess > EPSILON) & (height < DEAD)  # (pairs, inner, n)
        alive = np.where(active, excess, 0.0).reshape(len(index), -1).sum(axis=1)  # (pairs,) excess that may reach the sink
        value = sink_flow.sum(axis=1)
        finished = ~done & ((alive == 0.0) | (value >= bound))
        if rounds % every == 0:  # heights exact: the nodes that can reach the sink are a cut of value + alive
            finished |= ~done & (alive <= CERTIFIED)
        if finished.any():
            result[index[finished]] = value[finished]
            done |= finished
        if done.all():
            return result
        if done.sum() > len(index) // 4:  # finished pairs leave the batch (a copy of every array: not every round)
            keep = ~done
            index, flow, sink_cap, sink_flow = index[keep], flow[keep], sink_cap[keep], sink_flow[keep]
            excess, height, active, bound = excess[keep], height[keep], active[keep], bound[keep]
            done = np.zeros(len(index), dtype=bool)
        active &= ~done[:, None, None]
        rounds += 1
        nodes = np.nonzero(active)  # (pair, layer, position) of every active node
        stuck = _push(middle, middle_t, flow, sink_cap, sink_flow, excess, height, nodes)
        if rounds % every == 0:
            height = _global_heights(middle_t, flow, sink_cap, sink_flow)
        else:
            _relabel(middle_t, flow, sink_cap, sink_flow, height, stuck)


def _push(middle, middle_t, flow, sink_cap, sink_flow, excess, height, nodes):
    """One synchronous push of the active ``nodes`` (in place): forward edges first (index order),
    then the sink edge, then back along edges that carry flow. Only the active nodes' rows of
    2n edges are touched, gathered by one flat row index each (contiguous rows of ``flow``, whose
    layout puts a node's out-edges in a row). Returns the nodes still holding excess (for the relabel)."""
    pairs, inner, n = excess.shape
    p, l, k = nodes
    rows_of = flow.reshape(-1, n)  # (pairs·(inner−1)·n, n): row (pair, l, k) = node (l, k)'s out-edges
    heights_of = height.reshape(-1, n)  # (pairs·inner, n): row (pair, l) = layer l's heights
    node = (p * inner + l) * n + k  # (A,) flat node index
    excess_flat = excess.reshape(-1)
    left = excess_flat[node]  # (A,) excess to place (a copy)
    heights = height.reshape(-1)[node]  # (A,)
    received = np.zeros((pairs * inner, n))  # row (pair, layer): what that layer's nodes receive this round
    fwd = l < inner - 1
    if fwd.any():  # (l, k) → (l+1, m): admissible when height(l+1, m) = height(l, k) − 1
        fp, fl_, fk = p[fwd], l[fwd], k[fwd]
        edge_rows = (fp * (inner - 1) + fl_) * n + fk  # (F,)
        room = middle_t[fl_, fk] - rows_of[edge_rows]  # (F, n) over m
        room = np.where(heights_of[fp * inner + fl_ + 1] == heights[fwd, None] - 1, np.maximum(room, 0.0), 0.0)
        push = _greedy(left[fwd, None], room, axis=1)  # (F, n)
        rows_of[edge_rows] += push  # each row once: no repeated index
        left[fwd] -= push.sum(axis=1)
        _add_by_layer(received, fp * inner + fl_ + 1, push)
    last = l == inner - 1  # the sink edge: admissible when the node's height is 1
    if last.any():
        lp, lk = p[last], k[last]
        to_sink = np.where(heights[last] == 1, np.minimum(left[last], np.maximum(sink_cap[lp, lk] - sink_flow[lp, lk], 0.0)), 0.0)
        sink_flow[lp, lk] += to_sink
        left[last] -= to_sink
    back = (l > 0) & (left > EPSILON)
    if back.any():  # (l, k) → (l−1, k') along flow[l−1, k', k]: admissible when one lower
        bp, bl, bk = p[back], l[back], k[back]
        matrices = flow.reshape(-1, n, n)  # (pairs·(inner−1), k', k)
        which = bp * (inner - 1) + bl - 1
        carried = matrices[which, :, bk]  # (B, n) over k' (a column: back pushes are the fewer)
        room = np.where(heights_of[bp * inner + bl - 1] == heights[back, None] - 1, carried, 0.0)
        push = _greedy(left[back, None], room, axis=1)
        matrices[which, :, bk] = carried - push
        left[back] -= push.sum(axis=1)
        _add_by_layer(received, bp * inner + bl - 1, push)
    excess_flat[node] = left
    excess_flat += received.reshape(-1)
    keep = left > EPSILON
    return p[keep], l[keep], k[keep]


def _add_by_layer(received: np.ndarray, target: np.ndarray, push: np.ndarray) -> None:
    """received[target[a]] += push[a] for the (A, n) pushes: the nodes come from np.nonzero in
    (pair, layer, position) order, so equal targets are adjacent and one reduceat sums each run."""
    starts = np.flatnonzero(np.concatenate(([True], target[1:] != target[:-1])))
    received[target[starts]] += np.add.reduceat(push, starts, axis=0)  # targets now unique


def _greedy(amount: np.ndarray, room: np.ndarray, axis: int) -> np.ndarray:
    """Fill ``room`` along ``axis`` in index order with ``amount`` (broadcast along that axis):
    entry t gets min(room_t, max(0, amount − Σ_{s<t} room_s))."""
    before = np.cumsum(room, axis=axis) - room
    return np.minimum(room, np.maximum(amount - before, 0.0))


def _relabel(middle_t, flow, sink_cap, sink_flow, height, stuck) -> None:
    """The ``stuck`` nodes (excess left after their push): height = 1 + the lowest neighbour over
    a residual edge (DEAD when there is none)."""
    p, l, k = stuck
    if not len(p):
        return
    pairs, inner, n = height.shape
    heights_of = height.reshape(-1, n)
    best = np.full(len(p), DEAD, dtype=np.int64)
    fwd = l < inner - 1
    if fwd.any():
        fp, fl_, fk = p[fwd], l[fwd], k[fwd]
        residual = (middle_t[fl_, fk] - flow.reshape(-1, n)[(fp * (inner - 1) + fl_) * n + fk]) > EPSILON  # (F, n)
        best[fwd] = np.where(residual, heights_of[fp * inner + fl_ + 1], DEAD).min(axis=1)
    last = l == inner - 1
    best[last] = np.where(sink_cap[p[last], k[last]] - sink_flow[p[last], k[last]] > EPSILON, 0, best[last])
    back = l > 0
    if back.any():
        bp, bl, bk = p[back], l[back], k[back]
        residual = flow.reshape(-1, n, n)[bp * (inner - 1) + bl - 1, :, bk] > EPSILON
        best[back] = np.minimum(best[back], np.where(residual, heights_of[bp * inner + bl - 1], DEAD).min(axis=1))
    raised = np.where(best >= DEAD, DEAD, best + 1)
    node = (p * inner + l) * n + k
    flat = height.reshape(-1)
    flat[node] = np.maximum(flat[node], raised)


def _global_heights(middle_t, flow, sink_cap, sink_flow) -> np.ndarray:
    """(pairs, inner, n) exact distances to the sink in the residual graph (DEAD: no path): a
    breadth-first search whose steps are batched matrix–vector products of the 0/1 residual
    matrices (float32, BLAS) instead of boolean broadcasts over (pairs, inner−1, n, n)."""
    pairs, inner, n = sink_flow.shape[0], flow.shape[1] + 1, sink_flow.shape[1]
    height = np.full((pairs, inner, n), DEAD, dtype=np.int64)
    front = np.zeros((pairs, inner, n), dtype=np.float32)  # 1 on the nodes reached last step
    front[:, -1] = sink_cap - sink_flow > EPSILON
    height[front > 0] = 1
    if inner > 1:
        forward = ((middle_t[None] - flow) > EPSILON).astype(np.float32)  # (pairs, inner−1, k, m) residual (l, k) → (l+1, m)
        back = (flow > EPSILON).astype(np.float32)  # residual (l+1, m) → (l, k)
    distance = 1
    unreached = height == DEAD
    while inner > 1 and front.any():
        # only the layers beside the front's can be reached this step: a step's products cover those, not
        # every layer (the front is one or two layers of a deep graph: SmolLM2's 30 layers, 2–3× fewer products)
        lit = np.flatnonzero(front.any(axis=(0, 2)))  # (k,) layers holding the front
        below, above = lit[lit >= 1] - 1, lit[lit < inner - 1]  # (l, k) → (l+1, m) reaches l; (l+1, m) ← (l, k) reaches l + 1
        reach = np.zeros((pairs, inner, n), dtype=bool)
        if len(below):
            reach[:, below] = (forward[:, below] @ front[:, below + 1, :, None])[..., 0] > 0  # (pairs, k, n)
        if len(above):
            reach[:, above + 1] |= (front[:, above, None, :] @ back[:, above])[:, :, 0] > 0  # (pairs, k, n)
        reach &= unreached
        distance += 1
        height[reach] = distance
        unreached &= ~reach
        front = reach.astype(np.float32)
    return height
