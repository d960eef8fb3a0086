"""A sharded HF folder's index may only name shards beside it: a weight map that points outside
the folder (a parent path, an absolute path, a sub-folder) is refused in one line before any shard
is read, even when the file it names exists and holds the right tensors."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from tests import FIXTURES
from cli import commands as cli

FIXTURES = FIXTURES / "families"
SHARD = "model-00002-of-00002.safetensors"


def export(folder: Path, out: Path) -> int:
    return cli.main(["main.py", "export", "--model", str(folder), "--text", "the cat", "--out", str(out)])


def point_second_shard_at(folder: Path, target: str) -> None:
    index_path = folder / "model.safetensors.index.json"
    index = json.loads(index_path.read_text())
    index["weight_map"] = {tensor: target if shard == SHARD else shard for tensor, shard in index["weight_map"].items()}
    index_path.write_text(json.dumps(index))


@pytest.fixture
def folder(tmp_path):
    copy = tmp_path / "model" / "gpt2"
    shutil.copytree(FIXTURES / "gpt2", copy)
    return copy


def test_the_sharded_folder_loads_as_its_two_shards(folder, tmp_path):
    assert export(folder, tmp_path / "a.npz") == 0
    whole = tmp_path / "whole"  # the same tensors in one model.safetensors
    shutil.copytree(folder, whole)
    from safetensors.numpy import load_file, save_file

    tensors = {**load_file(str(folder / "model-00001-of-00002.safetensors")), **load_file(str(folder / SHARD))}
    for path in whole.glob("model*.safetensors*"):
        path.unlink()
    save_file(tensors, str(whole / "model.safetensors"))
    assert export(whole, tmp_path / "b.npz") == 0
    with np.load(tmp_path / "a.npz") as a, np.load(tmp_path / "b.npz") as b:
        np.testing.assert_array_equal(a["attentions"], b["attentions"])
        np.testing.assert_array_equal(a["hidden_states"], b["hidden_states"])


@pytest.mark.parametrize("where", ["parent", "absolute", "subfolder"])
def test_a_shard_outside_the_folder_is_refused(folder, tmp_path, where, capsys):
    outside = {"parent": folder.parent / SHARD, "absolute": tmp_path / "elsewhere" / SHARD,
               "subfolder": folder / "sub" / SHARD}[where]
    outside.parent.mkdir(parents=True, exist_ok=True)
    shutil.move(str(folder / SHARD), outside)  # the right tensors, in the wrong place
    target = {"parent": f"../{SHARD}", "absolute": str(outside), "subfolder": f"sub/{SHARD}"}[where]
    point_second_shard_at(folder, target)
    out = tmp_path / "out.npz"
    assert export(folder, out) == 2
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and target in lines[0], lines
    assert not out.exists()
