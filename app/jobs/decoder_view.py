"""Decoder mode, worker side: a Llama-family decoder (SmolLM2 or a local GGUF) in the window.

Everything here runs in the worker (submitted through lanes). One layer of a
:class:`engine.models.llama.DecoderTrace` becomes a toy-engine ``AttentionResult`` through the model's
``layer_view`` (engine/models/decoder_view.py, as engine/models/bert_view.py for the encoders), so the heatmap,
head grid, arithmetic, inspector and player show the decoder.

The models are cached by app.jobs.trained (one loaded copy per registry name); every text runs
through ``Decoder.run``, whose KV cache reuses the unchanged prefix of the last trace (typing at
the end, generating, undoing compute only the new positions).
"""
from __future__ import annotations

import numpy as np

from engine.models.llama import DecoderTrace, pick_token, reshape_probabilities

from . import trained
from .snapshot import OVERVIEW_SIZE, block_average, summarise
from .window_memory import check_window_memory

NEXT_BARS = 10  # next tokens in the bars made with the snapshot (the next-token panel shows as many)
PLAIN_SAMPLING = (1.0, 0, 1.0)  # temperature, top-k (0: all), top-p: the model's own distribution
MAX_FRAGMENTS = 4  # a UTF-8 character has at most 4 bytes: pieces generated to finish one
_last: dict = trained.shown_traces  # registry name → the last trace shown: the KV cache of the next keystroke
SINK_SHARE = 0.5  # name the attention sink when the first token gets at least this share on average
trained.on_release(lambda name: _last.pop(name, None))  # a released model's KV cache goes with it


def _of_trace(name: str) -> property:
    """A read-only attribute of the wrapped trace (no __getattr__: what the panels read is listed)."""
    return property(lambda self: getattr(self.trace, name), doc=f"the trace's ``{name}``")


class DecoderView:
    """The decoder trace as the layers panel reads a model trace (the contract's Trace names, plus
    the two per-layer summaries the panel draws: cosines to layer 0 and the attention sink)."""

    tokens = _of_trace("tokens")
    input_ids = _of_trace("input_ids")
    attentions = _of_trace("attentions")  # (layers, heads, n, n)
    hidden_states = _of_trace("hidden_states")  # (layers + 1, n, d)
    next_token_logits = _of_trace("next_token_logits")  # (vocab,)
    ablate = _of_trace("ablate")
    spans = _of_trace("spans")
    token_texts = _of_trace("token_texts")
    n = _of_trace("n")
    num_layers = _of_trace("num_layers")
    num_heads = _of_trace("num_heads")
    layers = _of_trace("layers")  # per-layer views (weights (heads, n, n) …)
    text = _of_trace("text")
    config = _of_trace("config")

    truncated = False
    next_bars: dict | None = None  # top_bars() after the last token at PLAIN_SAMPLING, with trace and position

    def __init__(self, trace: DecoderTrace) -> None:
        self.trace = trace
        # one layer at a time in float64: a float64 copy of every hidden state was 180 MB at 1,245 tokens
        first = trace.hidden_states[0].astype(np.float64)  # (n, d)
        first_norms = np.linalg.norm(first, axis=-1)  # (n,)
        cosines = np.empty(trace.hidden_states.shape[:2], np.float32)  # (layers + 1, n)
        for index, layer in enumerate(trace.hidden_states):
            h = layer.astype(np.float64)  # (n, d)
            dots = np.einsum("nd,nd->n", h, first)
            cosines[index] = dots / np.maximum(np.linalg.norm(h, axis=-1) * first_norms, 1e-30)
        self.cosine_to_layer0 = cosines
        # (layers, heads) mean weight the queries after the first give the first token: the attention sink
        self.sink = attentions_sink_by_head(trace.attentions)


def attention_sink(attentions: np.ndarray) -> float:
    """The mean weight the queries after the first give the first token (all layers and heads).

    0 for a one-token text. ``attentions``: (layers, heads, n, n)."""
    if attentions.shape[-1] < 2:
        return 0.0
    return float(attentions[..., 1:, 0].mean())


def attentions_sink_by_head(attentions: np.ndarray) -> np.ndarray:
    """(layers, heads) mean weight the queries after the first give the first token (zeros for one token)."""
    if attentions.shape[-1] < 2:
        return np.zeros(attentions.shape[:2], dtype=np.float32)
    return attentions[..., 1:, 0].mean(axis=-1, dtype=np.float64).astype(np.float32)


def take_decoder_snapshot(name: str, text: str, layer: int, progress=None, ablate: frozenset = frozenset(),
                          by_words: bool = False):
    """Snapshot of ``layer`` for ``text`` by decoder ``name`` (trace attached, KV cache reused),
    the heads of ``ablate`` switched off (those the model has); ``by_words``: rolled up by words
    too (byte fragments join their character, characters their word)."""
    from .analysis import valid_ablation

    model = trained.model(name, progress)
    ablate = valid_ablation(ablate, model.config.num_layers, model.config.num_heads)
    tokenized = model.tokenize(text)
    check_window_memory(model, len(tokenized.input_ids))  # before computing: the snapshot on screen stays meanwhile
    # not the comparison's sentence B: the text on screen; the KV cache of the same ablation only
    trace = model.run(tokenized, ablate=ablate, previous=_last.get(name))
    _last[name] = trace
    result = model.layer_view(trace, layer)
    overview = np.stack([block_average(trace.attentions[i], OVERVIEW_SIZE) for i in range(trace.num_layers)])
    view = DecoderView(trace)
    # the next-token bars after the last token at the plain settings, made here so that the bars
    # paint as the trace arrives (typing at the end: no second job, no second wait)
    view.next_bars = dict(top_bars(name, trace.next_token_logits, NEXT_BARS, *PLAIN_SAMPLING), trace=trace,
                          position=trace.n - 1, settings=PLAIN_SAMPLING)
    words = None
    if by_words:  # issue 26.12: the same roll-up as the encoders'
        from .snapshot import THUMBNAIL_SIZE
        from .word_view import word_view

        words = word_view(text, trace.tokens, result.weights, trace.attentions, shrink=block_average,
                          thumbnail_size=THUMBNAIL_SIZE, overview_size=OVERVIEW_SIZE,
                          special_tokens=model.facts.special_tokens)
    return summarise(result, bert=view, layer=layer, overview=overview, model=name, ablate=trace.ablate,
                     facts=model.facts, words=words)


# ---------------------------------------------------------------- the panels' worker jobs


def next_token_logits(name: str, trace: DecoderTrace, position: int) -> dict:
    """Logits of the token after ``position`` and the display texts of the 64 likeliest (one job)."""
    model = trained.model(name)
    logits = model.next_token_logits(trace, position)
    return {"trace": trace, "position": position, "logits": logits}


def top_bars(name: str, logits: np.ndarray, k: int, temperature: float, top_k: int, top_p: float) -> dict:
    """The k likeliest next tokens after reshaping: {"ids", "texts", "probabilities"} (the bars)."""
    model = trained.model(name)
    probabilities = reshape_probabilities(logits, temperature=temperature, top_k=top_k, top_p=top_p)
    count = min(k, probabilities.size)
    top = np.argpartition(-probabilities, count - 1)[:count]
    top = top[np.argsort(-probabilities[top], kind="stable")]
    return {"ids": top, "texts": [model.tokenizer.display([int(i)])[0] for i in top],
            "probabilities": probabilities[top], "kept": int(np.count_nonzero(probabilities))}


def generated_text(name: str, trace: DecoderTrace, greedy: bool, temperature: float, top_k: int, top_p: float,
                   seed: int | None = None) -> str:
    """The text with one more token: the likeliest, or one sampled from the reshaped distribution."""
    model = trained.model(name)
    rng = np.random.default_rng(seed)
    ids, logits = trace.input_ids, trace.next_token_logits
    for _ in range(MAX_FRAGMENTS):  # a piece holding part of a character: finish the character first
        probabilities = reshape_probabilities(logits, temperature=temperature, top_k=top_k, top_p=top_p)
        ids = np.append(ids, pick_token(probabilities, greedy=greedy, rng=rng))
        data = b"".join(model.tokenizer.token_bytes(int(i)) for i in ids)
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError:
            # keep=False: the text's snapshot follows; this trace is only for its logits, never the KV cache
            logits = model.run_ids(ids, keep=False).next_token_logits
    return model.tokenizer.tokens_from_ids(ids)[0]


def logit_lens(name: str, trace: DecoderTrace, position: int, top_k: int = 5) -> dict:
    """engine.models.llama.logit_lens at ``position`` with the display texts of every id it names."""
    model = trained.model(name)
    lens = model.logit_lens(trace, position, top_k)
    texts = [[model.tokenizer.display([int(i)])[0] for i in row] for row in lens.top_ids]
    return {"trace": trace, "position": lens.position, "lens": lens, "texts": texts,
            "final_text": model.tokenizer.display([lens.final_id])[0]}

