"""Session files kept exactly: every setting (the embeddings table included), the view, the field names.

The window's round-trip test uses no embeddings table, so a save that silently dropped it passed.
These go through app.session's public functions and read the file itself.
"""
from __future__ import annotations

import json

import pytest

from app.session import SessionError, load_session, save_session
from engine import AttentionConfig

TABLE = {"小明": [1.0, 0.0, 0.5, -1.0], "喜欢": [0.0, 1.0, 1.0, 0.0], "苹果": [0.25, -0.75, 0.0, 2.0]}
CONFIG = AttentionConfig(text="小明 喜欢 苹果", tokenizer="whitespace", d_model=4, heads=2, seed=11,
                         positional="rope", mask="causal", temperature=0.5, scale=False, embeddings=TABLE)
VIEW = {"head": 1, "focus": 2, "stage": "scaled"}


def test_round_trip_keeps_the_embeddings_table_exactly(tmp_path):
    path = save_session(tmp_path / "s.json", CONFIG, VIEW)
    config, view = load_session(path)
    assert config == CONFIG
    assert config.embeddings is not None
    assert {token: list(vector) for token, vector in config.embeddings.items()} == TABLE
    assert {key: view[key] for key in VIEW} == VIEW and view["layer"] == 0  # layer: the default, not in the file


def test_the_file_names_its_fields(tmp_path):
    path = save_session(tmp_path / "s.json", CONFIG, VIEW)
    document = json.loads(path.read_text(encoding="utf-8"))
    assert set(document) == {"format", "version", "config", "view"}
    assert (document["format"], document["version"]) == ("attention-explorer-session", 1)
    assert document["view"] == VIEW
    assert document["config"]["embeddings"] == TABLE
    assert document["config"]["text"] == "小明 喜欢 苹果" and "小明" in path.read_text(encoding="utf-8")
    for name in ("tokenizer", "d_model", "heads", "seed", "positional", "mask", "temperature", "scale"):
        assert document["config"][name] == getattr(CONFIG, name), name


@pytest.mark.parametrize("stage", ["scores", "scaled", "weights"])
def test_every_stage_is_read_back(tmp_path, stage):
    path = save_session(tmp_path / "s.json", AttentionConfig(text="a b"), {"head": 0, "focus": 1, "stage": stage})
    view = load_session(path)[1]
    assert (view["head"], view["focus"], view["stage"]) == (0, 1, stage)


def test_a_newer_version_is_refused(tmp_path):
    path = save_session(tmp_path / "s.json", CONFIG, VIEW)
    document = json.loads(path.read_text(encoding="utf-8"))
    document["version"] = 2
    path.write_text(json.dumps(document), encoding="utf-8")
    with pytest.raises(SessionError, match="newer"):
        load_session(path)
