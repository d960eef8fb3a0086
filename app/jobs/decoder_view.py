"""Decoder mode, worker side: a decoder (SmolLM2, a local GGUF file, an HF folder) in the window.

Everything here runs in the worker (submitted through lanes). One layer of a decoder trace becomes
a toy-engine ``AttentionResult`` through the model's ``layer_view``, so the heatmap, head grid,
arithmetic, inspector and player show the decoder. What is computed about the trace (the attention
sink, the cosine to layer 0, the next token, the logit lens, generating) is the engine's
(engine.analysis.residual, engine.analysis.next_token); this module shapes it for the panels.

The models are the engine's cache (engine.models.cache); every text runs through ``Decoder.run``,
whose KV cache reuses the unchanged prefix of the trace on screen (typing at the end, generating,
undoing compute only the new positions).
"""
from __future__ import annotations

import numpy as np

from engine.analysis import next_token as engine_next_token
from engine.analysis.next_token import NEXT_BARS, PLAIN_SAMPLING  # noqa: F401 - the panels read them here
from engine.analysis.request import RunRequest
from engine.analysis.runs import Runs
from engine.models.llama import DecoderTrace

from . import trained
from .decoder_trace import DecoderView
from .snapshot import OVERVIEW_SIZE, block_average, summarise
from .window_memory import check_window_memory

_last: dict = trained.shown_traces  # registry name → the last trace shown: the KV cache of the next keystroke
SINK_SHARE = 0.5  # name the attention sink when the first token gets at least this share on average


def take_decoder_snapshot(name: str, text: str, layer: int, progress=None, ablate: frozenset = frozenset(),
                          by_words: bool = False):
    """Snapshot of ``layer`` for ``text`` by decoder ``name`` (trace attached, KV cache reused),
    the heads of ``ablate`` switched off (EngineError naming a head the model lacks); ``by_words``:
    rolled up by words too (byte fragments join their character, characters their word). Without
    the Analysis place's arrays: app.jobs.analysis_job.with_analysis adds them when a view reads them."""
    model = trained.model(name, progress)
    request = RunRequest(text=text, ablate=frozenset(ablate), by_words=by_words).checked(model.facts)
    tokenized = model.tokenize(text)
    check_window_memory(model, len(tokenized.input_ids))  # before computing: the snapshot on screen stays meanwhile
    # not the comparison's sentence B: the text on screen; the KV cache of the same ablation only
    # use_cache=False: the model's own kept trace is neither read nor replaced; the trace on screen is the cache
    trace = model.run(tokenized, ablate=request.ablate, previous=_last.get(name), use_cache=False)
    _last[name] = trace
    result = model.layer_view(trace, layer)
    overview = np.stack([block_average(trace.attentions[i], OVERVIEW_SIZE) for i in range(trace.num_layers)])
    view = DecoderView(trace)
    # the next-token bars after the last token at the plain settings, made here so that the bars
    # paint as the trace arrives (typing at the end: no second job, no second wait)
    view.next_bars = dict(_bars(engine_next_token.top_bars(model, trace.next_token_logits, NEXT_BARS,
                                                           *PLAIN_SAMPLING)),
                          trace=trace, position=trace.n - 1, settings=PLAIN_SAMPLING)
    words = None
    if by_words:  # the same roll-up as the encoders'
        from .snapshot import THUMBNAIL_SIZE
        from .word_view import word_view

        words = word_view(text, trace.tokens, result.weights, trace.attentions, shrink=block_average,
                          thumbnail_size=THUMBNAIL_SIZE, overview_size=OVERVIEW_SIZE,
                          special_tokens=model.facts.special_tokens)
    return summarise(result, bert=view, layer=layer, overview=overview, model=name, ablate=trace.ablate,
                     facts=model.facts, words=words)


# ---------------------------------------------------------------- the panels' worker jobs


def _bars(bars) -> dict:
    """An engine NextToken as the bars read it."""
    return {"ids": bars.ids, "texts": list(bars.texts), "probabilities": bars.probabilities, "kept": bars.kept}


def next_token_logits(name: str, trace: DecoderTrace, position: int) -> dict:
    """Logits of the token after ``position`` (one job)."""
    model = trained.model(name)
    logits = model.next_token_logits(trace, position)
    return {"trace": trace, "position": position, "logits": logits}


def top_bars(name: str, logits: np.ndarray, k: int, temperature: float, top_k: int, top_p: float) -> dict:
    """The k likeliest next tokens after reshaping: {"ids", "texts", "probabilities", "kept"} (the bars)."""
    return _bars(engine_next_token.top_bars(trained.model(name), logits, k, temperature, top_k, top_p))


def generated_text(name: str, trace: DecoderTrace, greedy: bool, temperature: float, top_k: int, top_p: float,
                   seed: int | None = None) -> str:
    """The text with one more token (whole characters; engine.analysis.next_token.generate): the
    likeliest, or one sampled from the reshaped distribution. EngineError saying why when nothing
    can be added."""
    model = trained.model(name)
    def run(ids):  # keep=False: the text's snapshot follows; this trace is only for its logits, never the KV cache
        return model.run_ids(ids, keep=False)

    return engine_next_token.generate(model, trace, greedy=greedy, temperature=temperature, top_k=top_k,
                                      top_p=top_p, seed=seed, run=run).text


def logit_lens(name: str, trace: DecoderTrace, position: int, top_k: int = 5) -> dict:
    """The engine's logit lens at ``position`` of ``trace`` with the display texts of every id it names."""
    model = trained.model(name)
    request = RunRequest(text=trace.text, ablate=trace.ablate, position=position)
    lens = engine_next_token.logit_lens(model, request, Runs(model, request, trace=trace), top_k)
    return {"trace": trace, "position": lens.lens.position, "lens": lens.lens, "texts": [list(t) for t in lens.texts],
            "final_text": lens.final_text}
