"""The window's memory: what one decoder computation in the window holds, checked before it runs.

The window keeps the snapshot on screen (its trace, views of it) until the next one arrives, and
every edit makes a whole new trace (the KV cache copies the unchanged prefix into it): two traces
live at once. So each computation gets half the memory budget, counting the trace, the forward
pass's temporaries and the layer view the snapshot makes (an edit of the first word
at the command line's limit took 5.3 GB for a 2 GiB budget). The command line holds one trace
and keeps the whole budget (engine.core.memory.check_export_budget).
"""
from __future__ import annotations

from engine.core.memory import WINDOW_TRACES, check_window_budget
from engine.models.llama import estimate_forward_bytes
from engine.core.memory import DEFAULT_MEMORY_BUDGET

from .snapshot import DISPLAY_SIZE


def view_bytes(n: int, config) -> int:
    """Bytes a snapshot of one decoder layer makes beside the trace (engine/models/decoder_view.py,
    app/jobs/snapshot.py's summarise): attend's scores, scaled scores and weights recomputed for the layer
    (3·heads·n², the first two kept) and the causal mask (n² bool); summarise's display average
    (heads·1024² when n > 1024) and one head's visible scaled scores (n²); the layer's (n, d)
    vectors (x, positional zeros, concat, output, diffs: 12·n·d) — float32 but the mask."""
    heads, d = config.num_heads, config.hidden_size
    shown = min(n, DISPLAY_SIZE)
    return 4 * (3 * heads * n * n + heads * shown * shown + n * n + 12 * n * d) + n * n


def window_bytes(n: int, config) -> int:
    """One window computation of ``n`` tokens: the forward pass (all positions new, its estimate)
    and the layer view; the window holds two (engine.core.memory.check_window_budget)."""
    return estimate_forward_bytes(n, config) + view_bytes(n, config)


def window_longest(config, budget: int = DEFAULT_MEMORY_BUDGET) -> int:
    """The most tokens the window computes within ``budget`` (two computations held at once)."""
    low, high = 0, config.context_length
    while low < high:
        middle = (low + high + 1) // 2
        if WINDOW_TRACES * window_bytes(middle, config) <= budget:
            low = middle
        else:
            high = middle - 1
    return low


def check_window_memory(model, n: int, budget: int = DEFAULT_MEMORY_BUDGET) -> int:
    """EngineError (with the most tokens that fit) when ``n`` tokens do not fit the window's budget."""
    return check_window_budget(n, window_bytes(n, model.config), budget, lambda: window_longest(model.config, budget))
