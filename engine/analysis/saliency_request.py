"""Saliency as an analysis of one run request (engine.grad.saliency): the request's answer chooses
the target, so the window's Saliency dock and ``./run export --saliency`` measure the same thing.

A decoder: log p(answer) at the last position (the answer's first token; ``note`` says so when it
has several). An encoder: the cosine of the sentence embedding (the mean of the last layer over
every token, as occlusion's) to the answer text's own, run alone with the same switched-off heads.
The toy engine: an encoder's target on its output (engine.grad.toy), the answer run with the same
settings; integrated gradients are refused there (from a zero input the toy, with no biases,
outputs zero, whose cosine has no value: the completeness would be NaN).
"""
from __future__ import annotations

from dataclasses import dataclass

from ..core.errors import EngineError
from ..grad.gradients import check_supported
from ..grad.saliency import DEFAULT_STEPS, Saliency, by_words, saliency
from ..grad.targets import Target
from .occlusion import answer_token, sentence_embedding


@dataclass(frozen=True, eq=False)
class RequestSaliency:
    result: Saliency
    tokens: tuple[str, ...]  # (n,) the pieces' texts
    described: str  # English, one line: what t is
    note: str = ""  # the answer was cut to its first token
    subject: str = ""  # what t reads, for a caption in another language: the answer's piece (a decoder) or text

    def words(self, text: str, tokens, special_tokens=frozenset()):
        return by_words(self.result, text, tokens, special_tokens)


def request_target(model, answer: str | None, ablate=frozenset()) -> tuple[Target, str, str, str]:
    """(target, its description, a note or "", its subject: the answer's piece or text) for ``answer``
    on ``model``."""
    check_supported(model)
    if not answer:
        raise EngineError("saliency needs an answer: a decoder's answer token (e.g. ' Paris'), or for an encoder a "
                          "text whose sentence embedding the input's is compared with", field="answer")
    if model.facts.capabilities.next_token_logits:
        token = answer_token(model, answer)
        return (Target("log_prob", token=token.id), f"log p({token.piece!r}) at the last position", token.note,
                token.piece)
    reference = sentence_embedding(model.run(answer, ablate=ablate))
    return (Target("cosine", position=None, reference=reference), f"cosine of the sentence embedding to {answer!r}'s",
            "", answer)


def request_saliency(model, request, method: str = "ixg", steps: int = DEFAULT_STEPS, baseline=None) -> RequestSaliency:
    """The saliency per token of ``request``'s text (its answer, its switched-off heads)."""
    if method == "ig" and model.facts.capabilities.configurable:
        raise EngineError("integrated gradients need a baseline with an output: the toy engine has no biases, so at "
                          "its zero baseline the output is zero and a cosine to it has no value; choose the gradient "
                          "norm or input × gradient", field="method")
    target, described, note, subject = request_target(model, request.answer, request.ablate)
    tokenized = model.tokenize(request.text)
    result = saliency(model, tokenized, target, method, steps=steps, baseline=baseline, ablate=request.ablate)
    return RequestSaliency(result, tuple(t.text for t in tokenized.tokens), described, note, subject)
