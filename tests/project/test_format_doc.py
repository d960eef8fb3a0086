"""docs/FORMAT.md's table of keys by kind of model is what `export` writes: each kind exported once
(the toy engine, MiniLM for the encoders, SmolLM2 for the decoders) and its `.npz` keys compared, in
order, with the table's row (the document once said MiniLM's file held "exactly these six entries":
it holds thirteen)."""
from __future__ import annotations

import re

import numpy as np
import pytest

from tests import ROOT
from cli.commands import main

FORMAT = ROOT / "docs" / "FORMAT.md"
KINDS = {"toy": "toy engine", "minilm": "encoder", "smollm2": "decoder"}


def _documented(kind: str) -> list[str]:
    text = FORMAT.read_text(encoding="utf-8")
    section = text.split("## Which keys each file holds", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in section.splitlines() if line.startswith(f"| {kind}")]
    assert len(rows) == 1, kind
    return re.findall(r"`([a-z_0-9]+)`", rows[0].split("|")[2])


@pytest.mark.parametrize("model", [pytest.param(m, marks=pytest.mark.slow) if m != "toy" else m for m in sorted(KINDS)])
def test_each_kinds_npz_holds_the_documented_keys_in_order(tmp_path, model, request):
    if model != "toy":
        request.getfixturevalue(f"{model}_model")  # loaded once (skips when the model is not installed)
    out = tmp_path / "x.npz"
    assert main(["main.py", "export", "--model", model, "--text", "I ate the cake.", "--out", str(out)]) == 0
    with np.load(out, allow_pickle=False) as data:
        assert data.files == _documented(KINDS[model])


def test_no_sentence_claims_a_fixed_count_the_files_do_not_have():
    text = FORMAT.read_text(encoding="utf-8")
    assert "exactly these six entries" not in text
    assert "Every `.npz` and `.json` export (toy engine and pretrained models) also holds" not in text
