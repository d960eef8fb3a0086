"""A folder's tokenizer.json may use every row of the embedding and no more: the largest id equal
to vocab_size − 1 opens, one past it is refused in one line that names both numbers (an
off-by-one in the check, `>` for `>=`, lets an id index past the embedding)."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests import FIXTURES
from cli import commands as cli

FIXTURES = FIXTURES / "families"


def with_top_id(tmp_path: Path, top: int) -> Path:
    """The llama fixture whose tokenizer's largest id is ``top`` (its vocabulary's last piece renumbered)."""
    folder = tmp_path / "llama"
    shutil.copytree(FIXTURES / "llama", folder)
    document = json.loads((folder / "tokenizer.json").read_text())
    vocab = document["model"]["vocab"]
    last = max(vocab, key=vocab.get)
    vocab[last] = top
    (folder / "tokenizer.json").write_text(json.dumps(document))
    return folder


def test_the_last_row_is_allowed_and_one_past_it_is_refused(tmp_path, capsys):
    rows = json.loads((FIXTURES / "llama" / "config.json").read_text())["vocab_size"]
    assert cli.main(["main.py", "export", "--model", str(with_top_id(tmp_path / "a", rows - 1)), "--text", "the cat",
                     "--out", str(tmp_path / "a.npz")]) == 0
    capsys.readouterr()
    out = tmp_path / "b.npz"
    assert cli.main(["main.py", "export", "--model", str(with_top_id(tmp_path / "b", rows)), "--text", "the cat",
                     "--out", str(out)]) == 2
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 1 and f"up to {rows}" in lines[0] and f"only {rows} rows" in lines[0], lines
    assert not out.exists()
