"""``./run export … --saliency``: saliency per token (engine.grad.saliency) written beside the trace.

The target t: a decoder's log p(--answer) at the last position (the answer's first token when it
has several: a note on stderr says so); an encoder's cosine of the sentence embedding (the mean
of the last layer over every token) to --answer's own sentence embedding; the toy engine's the same,
with the run's settings (integrated gradients refused there). The method: the gradient
norm, input × gradient (default) or integrated gradients (--ig-steps midpoint steps from a zero
baseline, or --baseline ID: that token's input in every place). Integrated gradients print their completeness (the
attributions' sum minus t(input) − t(baseline)) beside the file. With --by words, ``word_saliency``
(w,) rolls it up by the export's words (engine.grad.saliency.by_words).
"""
from __future__ import annotations

import sys

import numpy as np



class SaliencyUsage(ValueError):
    """A flag combination that makes no sense (the caller turns it into its UsageError)."""


def check_options(options) -> None:
    """Refuse, before any model loads, flags of --saliency given without it, or out of range."""
    given = [flag for flag, value in (("--method", options.method), ("--ig-steps", options.ig_steps),
                                      ("--baseline", options.baseline)) if value is not None]
    if given and not options.saliency:
        raise SaliencyUsage(f"{', '.join(given)}: options of --saliency; add --saliency")
    if not options.saliency:
        return
    method = options.method or "ixg"
    if method != "ig" and (options.ig_steps is not None or options.baseline is not None):
        raise SaliencyUsage("--ig-steps and --baseline are integrated gradients' (--method ig)")
    if options.baseline is not None:
        _baseline_id(options.baseline)
    if options.ig_steps is not None and options.ig_steps < 1:
        raise SaliencyUsage(f"--ig-steps must be at least 1; got {options.ig_steps}")
    if options.answer is None:
        raise SaliencyUsage("--saliency needs --answer: a decoder's answer token (e.g. ' Paris'), or for an encoder "
                            "a text whose sentence embedding the input's is compared with")


def saliency_arrays(options, model, ablate: frozenset) -> dict[str, np.ndarray]:
    """The arrays ``--saliency`` adds to the export (docs/FORMAT.md): saliency, saliency_target,
    saliency_method and, for integrated gradients, ig_completeness."""
    from engine.analysis.request import RunRequest
    from engine.analysis.saliency_request import request_saliency
    from engine.grad.saliency import DEFAULT_STEPS, by_words

    baseline = None if options.baseline is None else _baseline_id(options.baseline)
    method = options.method or "ixg"
    steps = DEFAULT_STEPS if options.ig_steps is None else options.ig_steps
    request = RunRequest(text=options.text, ablate=ablate, answer=options.answer)
    found = request_saliency(model, request, method, steps, baseline)
    if found.note:
        sys.stderr.write(f"note: {found.note}\n")
    result = found.result
    line = f"saliency ({method}) of {found.described} = {result.value:.6g}"
    if method == "ig":
        line += (f"; integrated gradients over {result.steps} steps from {result.baseline}: the attributions sum to "
                 f"{result.scores.sum():.6g}, t(input) − t(baseline) = {result.value - result.baseline_value:.6g}, "
                 f"completeness {result.completeness:+.3g}")
    print(line)
    arrays = result.arrays()
    if options.by == "words":  # the words and word_index the export writes anyway name the entries
        tokens = model.tokenize(options.text).tokens
        arrays["word_saliency"] = by_words(result, options.text, tokens, model.facts.special_tokens)[1]
    return arrays


def _baseline_id(text: str) -> int | None:
    """--baseline: "zero" (None), or the id of the token whose input replaces every token's."""
    if text == "zero":
        return None
    if text.isdigit():
        return int(text)
    raise SaliencyUsage(f"--baseline is zero or a token id (e.g. 0 for a padding token); got {text!r}")
