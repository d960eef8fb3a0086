"""The models a user already has, found on a cache laid out as the tools lay it out."""
from __future__ import annotations

import os

import pytest

from engine.models import local_models
from engine.models.local_models import default_roots, scan
from tests.local_cache import lay_out


@pytest.fixture
def home(tmp_path):
    paths = lay_out(tmp_path)
    return tmp_path, paths


def by_name(found):
    return {model.name: model for model in found}


def test_roots_follow_the_environment(tmp_path):
    roots = default_roots({"HF_HUB_CACHE": "/x/hub", "HF_HOME": "/y"}, tmp_path)
    assert [str(r) for r, _ in roots][:3] == ["/x/hub", "/y/hub", str(tmp_path / ".cache/huggingface/hub")]
    assert {source for _, source in roots} == {"hub", "lmstudio"}
    assert len(default_roots({"HF_HUB_CACHE": str(tmp_path / ".cache/huggingface/hub")}, tmp_path)) == 3  # no duplicate


def test_scan_finds_every_model_with_its_facts(home):
    root, paths = home
    found = by_name(scan(default_roots({}, root) + [(paths["added"], "added")]))
    assert set(found) == {"tiny/gpt2", "tiny/bert", "Qwen/tiny-qwen3", "tiny/llama", "someone/pickled",
                          "state-spaces/mamba-tiny", "tiny-qwen2-F32.gguf", "tiny-gpt2-F32.gguf", "xlmr"}
    for name in ("tiny/gpt2", "tiny/bert", "Qwen/tiny-qwen3", "tiny/llama", "tiny-qwen2-F32.gguf", "xlmr"):
        model = found[name]
        assert model.can_open, (name, model.problem)
        assert (model.layers, model.heads) == (2, 4) and model.size > 10_000
    assert found["Qwen/tiny-qwen3"].family == "qwen3" and found["xlmr"].family == "roberta"
    assert found["tiny-gpt2-F32.gguf"].family == "gpt2" and found["tiny-gpt2-F32.gguf"].format == "gguf"
    assert found["tiny/llama"].path == paths["llama"]  # the revision refs/main names, not the old one
    assert "pickle" in found["someone/pickled"].problem
    mamba = found["state-spaces/mamba-tiny"]
    assert not mamba.can_open and "mamba" in mamba.problem and "qwen3" in mamba.problem
    assert mamba.family == "mamba"


def test_symlink_loops_end_and_each_folder_is_walked_once(home, monkeypatch):
    root, paths = home
    visited = []
    real = local_models._entries

    def counting(folder, budget):
        visited.append(os.path.realpath(folder))
        return real(folder, budget)

    monkeypatch.setattr(local_models, "_entries", counting)
    found = scan([(root / ".lmstudio" / "models", "lmstudio")])
    assert len(found) == 2
    assert len(visited) == len(set(visited))  # the loop ("back", "self") did not walk a folder twice


def test_huge_trees_are_bounded(tmp_path, monkeypatch):
    for i in range(30):
        (tmp_path / f"d{i}" / "e" / "f").mkdir(parents=True)
    monkeypatch.setattr(local_models, "MAX_ENTRIES", 20)
    budget = local_models._Budget(None)
    list(local_models._candidates(tmp_path, "added", budget))
    assert budget.entries <= 20 + 1
    deep = tmp_path / "deep"
    folder = deep
    for i in range(12):
        folder = folder / str(i)
    folder.mkdir(parents=True)
    (folder / "config.json").write_text("{}")
    assert scan([(deep, "added")]) == []  # deeper than MAX_DEPTH: not reached


def test_cancel_stops_the_scan(home):
    root, paths = home
    calls = []

    def cancelled():
        calls.append(1)
        return len(calls) > 3

    assert len(scan(default_roots({}, root), cancelled=cancelled)) < 3


def test_over_budget_says_why(home):
    root, paths = home
    found = by_name(scan(default_roots({}, root), budget_bytes=1000))
    assert "over the" in found["tiny/gpt2"].problem and "over the" in found["tiny-qwen2-F32.gguf"].problem
