"""Hook points: named places inside every forward pass where a run can read or replace an activation.

The names and shapes are TransformerLens's (Nanda & Bloom 2022), without the batch axis
(n = tokens, d = d_model, heads = query heads, kv = key/value heads):

    hook_embed (n, d)                          token embeddings
    hook_pos_embed (n, d)                      added (learned or sinusoidal) positions, when the model has them
    hook_token_type_embed (n, d)               BERT's segment embeddings
    blocks.{l}.hook_resid_pre (n, d)           the residual stream entering layer l
    blocks.{l}.ln1.hook_scale (n, 1)           the norm before attention (BERT: LN1, after it; see below):
    blocks.{l}.ln1.hook_normalized (n, d)        the divisor √(mean(x²) + ε) (LayerNorm: of x − μ),
    blocks.{l}.ln1.hook_out (n, d)               x / scale BEFORE the weight, and · γ (+ β): what follows reads
    blocks.{l}.attn.hook_q (n, heads, d_head)  BEFORE RoPE (as TransformerLens); hook_rot_q after it
    blocks.{l}.attn.hook_k / hook_v (n, kv, d_head)    k before RoPE; hook_rot_k after it
    blocks.{l}.attn.hook_attn_scores (heads, n, n)     scaled scores, masked entries float32's minimum
    blocks.{l}.attn.hook_pattern (heads, n, n)         softmax weights
    blocks.{l}.attn.hook_z (n, heads, d_head)          each head's output before W_O
    blocks.{l}.hook_attn_out (n, d)            z · W_O (+ b_O)
    blocks.{l}.hook_resid_mid (n, d)           resid_pre + attn_out
    blocks.{l}.ln2.hook_scale / hook_normalized / hook_out    the norm before the MLP (BERT: LN2)
    blocks.{l}.hook_mlp_out (n, d)
    blocks.{l}.hook_resid_post (n, d)
    blocks.{l}.hook_normalized_resid_post (n, d)   post-LN encoders only (= ln2.hook_out, see below)
    ln_final.hook_scale / hook_normalized / hook_out    decoders: the final norm (hook_out = hidden_states[-1])

q and k are in transformers' order of a head's dimensions whatever file the weights came from
(engine.models.gguf_file undoes llama.cpp's row permutation at load).

Post-LN encoders (BERT, MiniLM, XLM-R/e5) follow TransformerLens's ``BertBlock``:
resid_mid = resid_pre + attn_out (before LN1), ln1.hook_out = LN1(resid_mid),
resid_post = LN1(resid_mid) + mlp_out (before LN2), normalized_resid_post = ln2.hook_out =
LN2(resid_post) = ``hidden_states[l + 1]`` = the next layer's resid_pre. The toy engine has one attention layer
and neither residual nor MLP: it offers hook_embed, hook_pos_embed (sinusoidal positions),
blocks.0.hook_resid_pre, the attn.* points and blocks.0.hook_attn_out.

A hook is ``fn(array, name)`` returning a replacement (same shape and dtype) or None (keep;
an in-place edit of ``array`` then stands, as in TransformerLens). Hooks run in the order
given; a cached array is a read-only copy of the value after the hooks. Switching heads off
(``ablate``) is one such hook on hook_z, registered first.

Cost: a model builds one :class:`HookRun` per run (``None`` when nothing listens); the forward
asks it once per layer which local names are wanted (:meth:`HookRun.at`), so a point nobody
listens to costs one set lookup per layer, and a layer nobody listens to runs the fast path.
"""
from __future__ import annotations

import difflib
from typing import Callable, Iterable, Sequence

import numpy as np

from .errors import EngineError

Hook = Callable[[np.ndarray, str], "np.ndarray | None"]

ATTENTION_POINTS = ("attn.hook_q", "attn.hook_k", "attn.hook_v", "attn.hook_attn_scores", "attn.hook_pattern",
                    "attn.hook_z")
ROTARY_POINTS = ("attn.hook_rot_q", "attn.hook_rot_k")
NORM_POINTS = ("hook_scale", "hook_normalized", "hook_out")  # inside every norm, in this order


def norm_points(norm: str) -> tuple[str, ...]:
    """``ln1`` → ("ln1.hook_scale", "ln1.hook_normalized", "ln1.hook_out")."""
    return tuple(f"{norm}.{point}" for point in NORM_POINTS)


DECODER_BLOCK_POINTS = ("hook_resid_pre", *norm_points("ln1"), *ATTENTION_POINTS, "hook_attn_out",
                        "hook_resid_mid", *norm_points("ln2"), "hook_mlp_out", "hook_resid_post")
ENCODER_BLOCK_POINTS = ("hook_resid_pre", *ATTENTION_POINTS, "hook_attn_out", "hook_resid_mid",
                        *norm_points("ln1"), "hook_mlp_out", "hook_resid_post", *norm_points("ln2"),
                        "hook_normalized_resid_post")
FINAL_NORM_POINTS = norm_points("ln_final")
TOY_BLOCK_POINTS = ("hook_resid_pre", *ATTENTION_POINTS, "hook_attn_out")


def block_names(layers: int, points: Sequence[str]) -> tuple[str, ...]:
    """``blocks.{l}.{point}`` for every layer and point, layer by layer."""
    return tuple(f"blocks.{l}.{point}" for l in range(layers) for point in points)


def zero_heads(heads: Sequence[int]) -> Hook:
    """The ablation hook: zero the given heads of hook_z (n, heads, d_head) in place."""
    chosen = list(heads)

    def zero(z: np.ndarray, name: str) -> None:
        z[:, chosen] = 0.0

    return zero


class HookRun:
    """The hooks and the cache of one run. Build it with :func:`hook_run` (None when idle)."""

    def __init__(self, valid: Sequence[str], fwd_hooks: Iterable = (), cache: Iterable[str] | None = None,
                 cache_all: bool = False) -> None:
        self.valid = tuple(valid)
        self._valid_set = frozenset(self.valid)
        self.hooks: dict[str, list[Hook]] = {}
        for item in fwd_hooks:
            try:
                name, fn = item
            except (TypeError, ValueError):
                raise EngineError("a hook is a (name, function) pair; got {item!r}", field="hooks",
                                  item=item) from None
            self.add(name, fn)
        if cache_all:
            self.cache_names = self._valid_set
        else:
            names = list(cache or ())
            for name in names:
                _check_name(name, self.valid, self._valid_set)
            self.cache_names = frozenset(names)
        self.cache: dict[str, np.ndarray] = {}
        self.user_hooks = bool(self.hooks)  # hooks other than an ablation's (they rule out the KV cache)
        self._index()

    def add(self, name: str, fn: Hook, *, first: bool = False) -> None:
        """One more hook on ``name`` (``first``: before the others)."""
        _check_name(name, self.valid, self._valid_set)
        if not callable(fn):
            raise EngineError("the hook on {name} is not a function", field="hooks", name=name)
        fns = self.hooks.setdefault(name, [])
        fns.insert(0, fn) if first else fns.append(fn)
        if hasattr(self, "cache_names"):
            self._index()

    def _index(self) -> None:
        """The names somebody listens to, in all and per layer: asked once per layer by the forwards."""
        self.wanted = frozenset(self.hooks) | self.cache_names
        layers: dict[int, set] = {}
        for name in self.wanted:
            if name.startswith("blocks."):
                layer, _, local = name[len("blocks."):].partition(".")
                layers.setdefault(int(layer), set()).add(local)
        self._layers = {layer: frozenset(local) for layer, local in layers.items()}

    def at(self, layer: int) -> frozenset:
        """The local names wanted in ``layer`` (empty: the layer runs its fast path)."""
        return self._layers.get(layer, frozenset())

    def __contains__(self, name: str) -> bool:
        return name in self.wanted

    def __call__(self, name: str, array: np.ndarray) -> np.ndarray:
        """Run the hooks of ``name`` on ``array``; a replacement is written into ``array`` (so
        views into the forward's buffers stay the forward's buffers). Returns ``array``."""
        for fn in self.hooks.get(name, ()):
            replacement = fn(array, name)
            if replacement is None:
                continue
            replacement = np.asarray(replacement)
            if replacement.shape != array.shape or replacement.dtype != array.dtype:
                raise EngineError(
                    "the hook on {name} returned shape {got} {got_dtype}, expected {shape} {dtype}",
                    field="hooks", name=name, got=tuple(replacement.shape), got_dtype=str(replacement.dtype),
                    shape=tuple(array.shape), dtype=str(array.dtype))
            if replacement is not array:
                array[...] = replacement
        if name in self.cache_names:
            kept = np.array(array)  # a copy: the forward goes on writing into its buffers
            kept.flags.writeable = False
            self.cache[name] = kept
        return array

    def local(self, layer: int) -> Callable[[str, np.ndarray], np.ndarray]:
        """``edit(local_name, array)`` for one layer: the hooks of blocks.{layer}.{local_name}."""
        prefix = f"blocks.{layer}."
        return lambda local, array: self(prefix + local, array)


def hook_run(valid: Sequence[str], fwd_hooks: Iterable = (), cache: Iterable[str] | None = None, *,
             cache_all: bool = False) -> HookRun | None:
    """The :class:`HookRun` of one run, or None when nothing listens (the fast path)."""
    hooks = list(fwd_hooks or ())
    cache = list(cache or ())
    if not hooks and not cache and not cache_all:
        return None
    return HookRun(valid, hooks, cache, cache_all)


def hooks_with_ablation(hooks: HookRun | None, valid: Sequence[str], ablate: frozenset) -> HookRun | None:
    """``hooks`` plus one zeroing hook on hook_z per layer of ``ablate`` (checked (layer, head)
    pairs), placed before the user's hooks: ablation is a hook like any other."""
    if not ablate:
        return hooks
    if hooks is None:
        hooks = HookRun(valid)
    by_layer: dict[int, list[int]] = {}
    for layer, head in sorted(ablate):
        by_layer.setdefault(layer, []).append(head)
    for layer, heads in by_layer.items():
        hooks.add(f"blocks.{layer}.attn.hook_z", zero_heads(heads), first=True)
    return hooks


def check_ablation(ablate: Iterable, num_layers: int, num_heads: int) -> frozenset:
    """``ablate`` as a frozenset of (layer, head) int pairs, or :class:`EngineError` naming the
    first pair that is not one (a pair out of range, or not a pair of whole numbers)."""
    if ablate is None:
        return frozenset()
    checked = set()
    for pair in ablate:
        try:
            layer, head = pair
            valid = all(isinstance(x, (int, np.integer)) and not isinstance(x, bool) for x in (layer, head))
        except (TypeError, ValueError):
            valid = False
        if not valid:
            raise EngineError(
                "cannot switch off {pair}: give (layer, head) pairs of whole numbers",
                field="ablate", pair=repr(pair),
            )
        if not (0 <= layer < num_layers and 0 <= head < num_heads):
            raise EngineError(
                "cannot switch off layer {layer} head {head}: the model has layers 0 … {last_layer} "
                "and heads 0 … {last_head}",
                field="ablate", layer=int(layer), head=int(head),
                last_layer=num_layers - 1, last_head=num_heads - 1,
            )
        checked.add((int(layer), int(head)))
    return frozenset(checked)


def heads_in_layer(ablate: frozenset, layer: int) -> list[int]:
    """The switched-off heads of ``layer``, sorted."""
    return sorted(head for l, head in ablate if l == layer)


def layer_range(layers: int, start_at_layer, resid, stop_at_layer, shape: tuple) -> tuple[int, int]:
    """(first, last) layers a run computes, from TransformerLens's ``start_at_layer`` (with the
    ``resid`` (n, d) entering it) and ``stop_at_layer`` (the first layer NOT run); EngineError
    for a layer out of range or a residual of another shape."""
    first = 0 if start_at_layer is None else start_at_layer
    stop = layers if stop_at_layer is None else stop_at_layer
    for name, value, top in (("start_at_layer", first, layers - 1), ("stop_at_layer", stop, layers)):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or not 0 <= value <= top:
            raise EngineError("{name} must be a layer 0 … {top}; got {value!r}", field="hooks", name=name,
                              top=top, value=value)
    if stop <= first:
        raise EngineError("stop_at_layer {stop} must come after start_at_layer {start}", field="hooks",
                          stop=stop, start=first)
    if resid is None and first != 0:
        raise EngineError("start_at_layer {start} needs the residual entering it (resid)", field="hooks",
                          start=first)
    if resid is not None and np.shape(resid) != tuple(shape):
        raise EngineError("resid has shape {got}, expected {shape}", field="hooks", got=tuple(np.shape(resid)),
                          shape=tuple(shape))
    return int(first), int(stop) - 1


def _check_name(name, valid: Sequence[str], valid_set: frozenset) -> None:
    if name in valid_set:
        return
    close = difflib.get_close_matches(str(name), list(valid), n=3, cutoff=0.5)
    raise EngineError("no hook point {name!r} in this model; closest: {closest}", field="hooks", name=name,
                      closest=", ".join(close) if close else ", ".join(list(valid)[:3]) + ", …")


def attention_hooks(edit, wanted: frozenset, stages: dict, v: np.ndarray, softmax_into) -> None:
    """hook_attn_scores and hook_pattern after :func:`engine.core.attention.attend`: when a hook
    replaced the scores, the weights and head outputs are recomputed from them; when it replaced
    the weights, the head outputs. ``v``: (kv_heads, n_keys, d_head)."""
    changed = False
    if "attn.hook_attn_scores" in wanted:
        scaled = stages["scaled"]
        # the hook sees masked scores as TransformerLens writes them, float32's minimum (a finite number
        # a hook can add to); the trace keeps −∞ there, as a run without hooks has it
        masked = np.isneginf(scaled)
        lowest = np.finfo(scaled.dtype).min
        scaled[masked] = lowest
        before = scaled.copy()
        edit("attn.hook_attn_scores", scaled)
        if not np.array_equal(before, scaled, equal_nan=True):
            softmax_into(scaled, stages["weights"])
            changed = True
        scaled[masked & (scaled == lowest)] = -np.inf
    if "attn.hook_pattern" in wanted:
        weights = stages["weights"]
        before = weights.copy()
        edit("attn.hook_pattern", weights)
        changed = changed or not np.array_equal(before, weights, equal_nan=True)
    if changed:
        weights = stages["weights"]
        group = weights.shape[0] // v.shape[0]
        values = np.repeat(v, group, axis=0) if group > 1 else v
        np.matmul(weights, values, out=stages["head_outputs"])
