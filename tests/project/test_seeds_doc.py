"""docs/SEEDS.md and SEEDS.zh.md told honestly: the items whose single best head the evidence
contradicts are marked corrected with the evidence's own figures, the Chinese minimal-pair note says
what the engine's tokenizer does, and every engine module the documents name exists."""
from __future__ import annotations

import importlib
import re

import pytest

from tests import ROOT
from tests.engine.toy.test_seeds import doc_rows

DOCS = ROOT / "docs"


@pytest.mark.parametrize("name", ["SEEDS.md", "SEEDS.zh.md"])
def test_every_engine_module_named_exists(name):
    named = set(re.findall(r"`(engine(?:\.[A-Za-z_]+)+)", (DOCS / name).read_text(encoding="utf-8")))
    assert named
    for dotted in sorted(named):
        parts = dotted.split(".")
        for cut in range(len(parts), 0, -1):  # the longest importable module, then attributes
            try:
                found = importlib.import_module(".".join(parts[:cut]))
                break
            except ModuleNotFoundError:
                continue
        for attribute in parts[cut:]:
            assert hasattr(found, attribute), dotted
            found = getattr(found, attribute)


@pytest.mark.slow
def test_it_cake_is_corrected_with_the_heads_whole_column(minilm_model):
    from app.jobs.trained import trace
    from engine.analysis import pronoun_evidence
    from engine.analysis.meaning import strongest_head

    seen = trace("minilm", "I ate the cake and it was delicious.")
    best = strongest_head(seen, "it", "cake")
    column = pronoun_evidence.column(seen, "it", "cake", best.layer, best.head)
    english, chinese = doc_rows("1.7")
    assert "**[corrected]**" in english and "**[更正后呈现]**" in chinese
    assert (column.rows_with_key_top, len(column.weights), column.query_rank) == (11, 11, 4)
    assert f"all {len(column.weights)} rows" in english and f"*{column.top}* → cake is {column.top_weight:.3f}" in english
    assert "ranks 4th" in english and f"{column.top_weight:.3f}" in chinese


@pytest.mark.slow
def test_she_xiaohong_is_corrected_with_the_rival_and_the_pronoun_pair_note_is_true(e5_model):
    from app.jobs.trained import trace
    from app.jobs.words import WordTrace
    from engine.analysis import pronoun_evidence

    text = "小明把苹果给了小红，她很高兴。"
    contrast = pronoun_evidence.contrast(WordTrace(trace("e5", text), text), "她", "小红", "小明")
    english, chinese = doc_rows("4.1")
    assert "**[corrected]**" in english and "**[更正后呈现]**" in chinese
    for row in (english, chinese):
        assert f"{contrast.rival_best[2]:.3f}" in row and f"{contrast.key_best[2]:.3f}" in row
    assert f"in only {contrast.key_wins} of {contrast.heads} heads" in english
    # 她 → 他 does not change the tokenization: the note says the pieces are alike and why the pair is useless
    she, he = (trace("e5", text.replace("她", pronoun)).token_texts for pronoun in ("她", "他"))
    assert len(she) == len(he) == 13
    notes = [(DOCS / name).read_text(encoding="utf-8") for name in ("SEEDS.md", "SEEDS.zh.md")]
    assert "(13 e5 pieces each)" in notes[0] and "e5 各 13 个词元" in notes[1]
    assert "15 against 14" not in notes[0] and "15 对 14" not in notes[1]
