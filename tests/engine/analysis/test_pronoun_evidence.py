"""The honest preset numbers (engine.analysis.pronoun_evidence, app/preset_evidence.py) against loops over
the model's own attention written here, and the captions' figures against those numbers."""
from __future__ import annotations

import re

import numpy as np
import pytest

from engine.analysis import pronoun_evidence as pe
from engine.analysis.meaning import strongest_head

CAKE = "I ate the cake and it was delicious."
ANIMAL = "The animal didn't cross the street because it was too tired."
WIDE = "The animal didn't cross the street because it was too wide."


@pytest.mark.slow
def test_contrast_counts_every_head(minilm):
    trace = minilm.run(ANIMAL)
    texts = list(trace.token_texts)
    qi, ki, ri = texts.index("it"), texts.index("animal"), texts.index("street")
    wins = key_top = rival_top = 0
    best_rival = (-1.0, 0, 0)
    for l, layer in enumerate(trace.layers):
        for h in range(layer.weights.shape[0]):
            row = [float(x) for x in layer.weights[h][qi]]
            wins += row[ki] > row[ri]
            top = max(range(len(row)), key=lambda j: (row[j], -j))
            key_top += top == ki
            rival_top += top == ri
            best_rival = max(best_rival, (row[ri], -l, -h))
    c = pe.contrast(trace, "it", "animal", "street")
    assert (c.key_wins, c.key_top, c.rival_top, c.heads) == (wins, key_top, rival_top, 72)
    assert c.rival_best == (-best_rival[1], -best_rival[2], pytest.approx(best_rival[0]))


@pytest.mark.slow
def test_column_of_the_cake_head(minilm):
    trace = minilm.run(CAKE)
    finding = strongest_head(trace, "it", "cake")
    col = pe.column(trace, "it", "cake", finding.layer, finding.head)
    matrix = trace.layers[finding.layer].weights[finding.head].astype(np.float64)
    texts = list(trace.token_texts)
    expected = [matrix[i, texts.index("cake")] for i in range(len(texts))]
    np.testing.assert_allclose(col.weights, expected)
    others = [w for i, w in enumerate(expected) if i != texts.index("cake")]
    assert col.query_rank == 1 + sum(w > expected[texts.index("it")] for w in others)
    assert col.query_rank > 1 and col.top in ("and", "the")  # the observation: others weigh more on cake
    assert col.rows_with_key_top == sum(int(np.argmax(matrix[i]) == texts.index("cake")) for i in range(len(texts)))


def test_next_word_share():
    matrix = np.eye(5, k=1)
    matrix[-1, -1] = 1
    assert pe.next_word_share(matrix) == 1.0
    assert pe.next_word_share(np.full((4, 4), 0.25)) == 0.25


@pytest.mark.slow
def test_minimal_pair_minilm(minilm):
    from engine.analysis import patching

    ev = pe.minimal_pair(minilm, ANIMAL, WIDE, query="it")
    assert ev.word == "tired" and ev.measure == "cosine" and ev.clean == 1.0
    setup = patching.prepare(minilm, ANIMAL, WIDE, position=10)
    assert ev.corrupt == pytest.approx(setup.corrupt_value)
    # an independent run: the corrupted sentence with "tired"'s layer-0 residual copied in by a hook
    clean = minilm.run_with_cache(ANIMAL, ["blocks.2.hook_resid_pre"])[1]["blocks.2.hook_resid_pre"]

    def put(resid, name):
        resid[13] = clean[13]

    trace = minilm.run_with_hooks(WIDE, [("blocks.2.hook_resid_pre", put)])
    final, reference = trace.hidden_states[-1][10].astype(np.float64), minilm.run(ANIMAL).hidden_states[-1][10]
    cos = float(final @ reference / (np.linalg.norm(final) * np.linalg.norm(reference)))
    assert ev.word_restored[2] == pytest.approx(cos, abs=1e-6)
    assert ev.query_restored[-1] > ev.corrupt  # the pronoun's own residual carries the difference at the end
    assert pe.crossover_layer(ev) is not None


@pytest.mark.slow
def test_preset_captions_carry_the_numbers(minilm):
    from PySide6.QtCore import QCoreApplication  # noqa: F401 - translations need an application (qapp)

    from app.jobs.words import preset_finding
    from app.presets import MODEL_PRESETS

    item = next(p for p in MODEL_PRESETS if p.focus == "it" and p.key == "cake")
    caption = preset_finding("minilm", item)["caption"]
    col = pe.column(minilm.run(CAKE), "it", "cake", 5, 11)
    assert f"({col.top_weight:.2f})" in caption and f"“it” ranks {col.query_rank}" in caption
    item = next(p for p in MODEL_PRESETS if p.focus == "it" and p.key == "animal" and p.model == "minilm")
    caption = preset_finding("minilm", item)["caption"]
    c = pe.contrast(minilm.run(ANIMAL), "it", "animal", "street")
    assert f"in {c.key_wins};" in caption and "does not show which noun" in caption
    assert re.search(r"cosine 0\.\d{3} between them", caption)
