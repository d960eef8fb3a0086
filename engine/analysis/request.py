"""One run request: what every analysis is asked, by the window, the command line and every export.

An analysis is a function of (model, request) → a typed result; the surfaces build the same
request from their own controls or flags, so switched-off heads, by-words and the answer mean the
same everywhere (TransformerLens reads one ActivationCache; Orange3 passes one task object).

    request = RunRequest(text="The Eiffel Tower is in the city of", ablate=frozenset({(0, 1)}),
                         answer=" Paris")
    request = request.checked(model.facts)      # EngineError naming the first thing wrong

:class:`NotApplicable` is what an analysis returns where it does not apply (an encoder asked for
the next token, a text over a method's token limit): one line for the surface to show, never a
blank panel or the previous model's picture.
"""
from __future__ import annotations

from dataclasses import dataclass, replace

from ..core.errors import EngineError
from ..core.memory import DEFAULT_MEMORY_BUDGET
from ..core.hooks import check_ablation


@dataclass(frozen=True)
class RunRequest:
    """The inputs of one analysis run; frozen, so it crosses threads and keys caches."""

    text: str = ""  # the text the model tokenizes (ignored when token_ids is given)
    token_ids: tuple[int, ...] | None = None  # ids to run as they are (a generated continuation)
    ablate: frozenset = frozenset()  # (layer, head) pairs switched off: a hook on hook_z
    by_words: bool = False  # roll pieces up into words where the analysis supports it
    layers: tuple[int, int] | None = None  # [first, stop) of the layers a view reads; None: all
    position: int = -1  # the focused (query) position; -1: the last token
    answer: str | None = None  # the answer token's text (decoders: p(answer), patching's metric)
    contrast: str | None = None  # a second token for logit differences
    lens_grid: bool = False  # the logit lens at every position (decoders; (layers + 1)·n rows through W_U)
    tau: float | None = None  # information-flow routes' threshold; None: routes not asked for
    value_zeroing: bool = False  # value zeroing asked for (layers · n one-layer runs: never by default)
    memory_budget: int = DEFAULT_MEMORY_BUDGET  # bytes a run may hold at once

    def checked(self, facts) -> "RunRequest":
        """This request with its switched-off heads checked against ``facts`` (a ModelFacts):
        :class:`EngineError` naming the first pair the model does not have."""
        ablate = check_ablation(self.ablate, facts.layers, facts.heads)
        if self.layers is not None:
            first, stop = self.layers
            if not 0 <= first < stop <= facts.layers:
                raise EngineError("layers {first} … {last} do not exist: the model has layers 0 … {top}",
                                  field="layers", first=first, last=stop - 1, top=facts.layers - 1)
        return replace(self, ablate=ablate)


@dataclass(frozen=True)
class NotApplicable:
    """What an analysis returns where it does not apply; ``reason`` is an EngineError whose
    English text is one line (the window translates its template)."""

    analysis: str  # the analysis's name (a key of the surfaces' tables)
    reason: EngineError

    def __str__(self) -> str:
        return f"{self.analysis}: {self.reason}"


def check_tokens(count: int, limit: int, analysis: str) -> None:
    """:class:`EngineError` saying the limit and the count when ``count`` tokens exceed an
    analysis's ``limit`` (checked before any work starts)."""
    if count > limit:
        raise EngineError("{analysis} reads at most {limit} tokens; this text has {count}: shorten it",
                          field="text", analysis=analysis, limit=limit, count=count)
