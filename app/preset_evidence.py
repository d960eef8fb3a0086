"""The honest part of the meaning presets' captions, worker side: sentences built from
engine.analysis.pronoun_evidence for a preset's ``evidence`` items, each a translatable template (context
"PresetEvidence") filled with numbers from the model's own runs.

Items (a tuple on the preset):
    ("column",)                      the strongest head's whole column of the key
    ("rival", word)                  query → key against query → word over every layer and head
    ("next_word",)                   the strongest head's mean weight on the next word
    ("pair", clean, corrupt, query)  an encoder's minimal pair: patching along two columns
    ("pair", clean, corrupt, None, answer, rival)   a decoder's: p(answer) and p(rival) after each sentence
"""
from __future__ import annotations

import numpy as np

from engine.analysis import pronoun_evidence as pe

from .text import fill


def QT_TRANSLATE_NOOP(context: str, text: str) -> str:  # noqa: N802 - the marker lupdate looks for
    return text


COLUMN = QT_TRANSLATE_NOOP(
    "PresetEvidence",
    "But look at the whole column of “%1” in that head: %2 of %3 words give it their largest weight; among the "
    "other words the largest is “%4” (%5) and “%6” ranks %7. A head where everyone looks at one word says little "
    "about the pronoun.")
COLUMN_SPECIFIC = QT_TRANSLATE_NOOP(
    "PresetEvidence",
    "The whole column of “%1” in that head: “%6” weighs most on it among the other words (%5); %2 of %3 words give "
    "“%1” their largest weight.")
RIVAL = QT_TRANSLATE_NOOP(
    "PresetEvidence",
    "Across all %1 heads: “%2” → “%3” is larger than “%2” → “%4” in %5; “%3” is the top word of “%2” in %6 "
    "heads, “%4” in %7; the largest “%2” → “%4” is %8 (layer %9, head %10).")
NEXT_WORD = QT_TRANSLATE_NOOP(
    "PresetEvidence",
    "In that head each word puts on average %1 of its weight on the next word: it marks position, not who chases "
    "whom. Attention does not show that the model knows the roles.")
PAIR_ENCODER = QT_TRANSLATE_NOOP(
    "PresetEvidence",
    "Minimal pair (activation patching) “%1” / “%2”: the final vector of “%3” has cosine %4 between them. "
    "Copying the “%5” position's residual stream from the first into the second restores %6 of the difference at "
    "layer 0 and %7 at the last layer; copying “%3”'s restores %8 at layer 0 and %9 at the last; from layer %10 on "
    "“%3” carries more of it than “%5”. This shows that “%3”'s vector depends on that word, and in which layers "
    "the information arrives; it does not show which noun the model links “%3” to.")
PAIR_DECODER = QT_TRANSLATE_NOOP(
    "PresetEvidence",
    "Minimal pair: p(“%1”) after “%2” is %3, after “%4” %5 (p(“%6”): %7 and %8). %9")
DECODER_TELLS = QT_TRANSLATE_NOOP("PresetEvidence", "The model prefers the right noun in each sentence.")
DECODER_MOVES = QT_TRANSLATE_NOOP(
    "PresetEvidence",
    "The odds of “%1” against “%2” fall from %3:1 to %4:1: the second sentence moves the model towards “%2”, "
    "but “%1” stays far ahead in both — a shift, not a resolution, and attention to “%1” cannot show more.")
DECODER_DOES_NOT = QT_TRANSLATE_NOOP(
    "PresetEvidence",
    "The odds of “%1” against “%2” are %3:1 and %4:1: the model does not move towards “%2” in the second "
    "sentence.")


def _tr(text: str) -> str:
    from PySide6.QtCore import QCoreApplication

    return QCoreApplication.translate("PresetEvidence", text)


def evidence_sentences(model, trace, preset, finding) -> list[str]:
    """The preset's evidence items as sentences (English templates translated)."""
    out = []
    for item in getattr(preset, "evidence", ()) or ():
        kind = item[0]
        if kind == "column":
            col = pe.column(trace, preset.focus, preset.key, finding.layer, finding.head)
            template = COLUMN_SPECIFIC if col.query_rank == 1 else COLUMN
            out.append(fill(_tr(template), col.key, col.rows_with_key_top, len(col.weights), col.top,
                            f"{col.top_weight:.2f}", finding.query, col.query_rank))
        elif kind == "rival":
            c = pe.contrast(trace, preset.focus, preset.key, item[1])
            out.append(fill(_tr(RIVAL), c.heads, c.query, c.key, c.rival, c.key_wins, c.key_top, c.rival_top,
                            f"{c.rival_best[2]:.2f}", c.rival_best[0], c.rival_best[1]))
        elif kind == "next_word":
            matrix = np.asarray(trace.layers[finding.layer].weights, dtype=np.float64)[finding.head]
            out.append(fill(_tr(NEXT_WORD), f"{pe.next_word_share(matrix):.2f}"))
        elif kind == "pair":
            out.append(pair_sentence(model, item))
    return out


def decoder_verdict(answer_p: tuple[float, float], rival_p: tuple[float, float], answer: str, rival: str) -> str:
    """What p(answer) and p(rival) after the two sentences say, graded by the odds answer : rival: the
    right noun ahead in each sentence; a move towards the rival with the answer still ahead; or no move.
    (Saying "does not tell the two apart" of odds that fall from 50:1 to 19:1 overstated it.)"""
    before, after = answer_p[0] / max(rival_p[0], 1e-12), answer_p[1] / max(rival_p[1], 1e-12)
    if before > 1 > after:
        return _tr(DECODER_TELLS)
    template = DECODER_MOVES if after < before else DECODER_DOES_NOT
    return fill(_tr(template), answer, rival, f"{before:.0f}", f"{after:.0f}")


def pair_sentence(model, item) -> str:
    _, clean, corrupt, query, *rest = item
    if rest:  # a decoder: p(answer) and p(rival answer) after each sentence
        answer, rival = rest[0], rest[1]
        a = pe.decoder_pair(model, clean, corrupt, answer)
        b = pe.decoder_pair(model, clean, corrupt, rival)
        return fill(_tr(PAIR_DECODER), answer.strip(), pe.last_word(clean), f"{a[0]:.3f}", pe.last_word(corrupt),
                    f"{a[1]:.3f}", rival.strip(), f"{b[0]:.4f}", f"{b[1]:.4f}",
                    decoder_verdict(a, b, answer.strip(), rival.strip()))
    ev = pe.minimal_pair(model, clean, corrupt, query=query)
    share = lambda value: f"{pe.restored_share(value, ev):.2f}"  # noqa: E731
    cross = pe.crossover_layer(ev)
    return fill(_tr(PAIR_ENCODER), clean, corrupt, query, f"{ev.corrupt:.3f}", ev.word,
                share(ev.word_restored[0]), share(ev.word_restored[-1]), share(ev.query_restored[0]),
                share(ev.query_restored[-1]), "—" if cross is None else cross)
