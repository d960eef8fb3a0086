"""export --flow / --occlusion on the command line: the arrays equal the engine's functions run
here, and misuse is refused with one line and exit code 2."""
from __future__ import annotations

import numpy as np
import pytest

from cli.commands import main
from engine import AttentionConfig, compute
from engine.analysis.flow import max_flows

ANIMAL = "The animal didn't cross the street because it was too tired."


def test_toy_flow_is_the_one_layer_capacity(tmp_path):
    out = tmp_path / "t.npz"
    assert main(["run", "export", "--text", "the cat sat on the mat", "--flow", "--out", str(out)]) == 0
    weights = compute(AttentionConfig(text="the cat sat on the mat")).weights.astype(np.float64)  # (h, n, n)
    n = weights.shape[-1]
    mixed = 0.5 * weights.mean(axis=0) + 0.5 * np.eye(n)
    mixed /= mixed.sum(axis=1, keepdims=True)  # one layer: the flow from j to i is the edge's capacity
    with np.load(out) as data:
        np.testing.assert_allclose(data["attention_flow"], mixed, atol=1e-12)
    np.testing.assert_allclose(max_flows(mixed[None]), mixed)


@pytest.mark.slow
def test_minilm_flow_and_occlusion(tmp_path, minilm):
    from engine.analysis.flow import attention_flow
    from engine.analysis.occlusion import occlusion

    out = tmp_path / "m.npz"
    assert main(["run", "export", "--model", "minilm", "--text", ANIMAL, "--flow", "--occlusion", "--out", str(out)]) == 0
    with np.load(out) as data:
        np.testing.assert_allclose(data["attention_flow"], attention_flow(minilm.run(ANIMAL).attentions), atol=1e-9)
        np.testing.assert_allclose(data["occlusion"], occlusion(minilm, ANIMAL).values, atol=1e-9)
        assert float(data["occlusion_baseline"]) == 1.0


@pytest.mark.slow
def test_minilm_flow_with_heads_switched_off(tmp_path, minilm):
    from engine.analysis.flow import attention_flow

    out = tmp_path / "a.npz"
    assert main(["run", "export", "--model", "minilm", "--text", ANIMAL, "--flow", "--ablate", "1.3,1.7,4.0",
                 "--out", str(out)]) == 0
    trace = minilm.run(ANIMAL, ablate=frozenset({(1, 3), (1, 7), (4, 0)}))
    kept = np.ones(np.asarray(trace.attentions).shape[:2], dtype=bool)
    kept[1, [3, 7]] = kept[4, 0] = False
    with np.load(out) as data:
        np.testing.assert_allclose(data["attention_flow"], attention_flow(trace.attentions, heads_kept=kept),
                                   atol=1e-9)
        assert np.abs(data["attention_flow"] - attention_flow(trace.attentions)).max() > 1e-3


def test_misuse_is_one_line(tmp_path, capsys):
    cases = [
        (["--text", "a b", "--flow", "--out", str(tmp_path / "x.png")], "not to images"),
        (["--text", "a b", "--occlusion", "--out", str(tmp_path / "x.npz")], "pretrained --model"),
        (["--text", "a b", "--answer", " Paris", "--out", str(tmp_path / "x.npz")], "add --occlusion"),
        (["--text", " ".join(["w"] * 70), "--flow", "--out", str(tmp_path / "x.npz")], "at most 64 tokens; this text has 70"),
    ]
    for args, fragment in cases:
        assert main(["run", "export", *args]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and fragment in err, err
        assert not list(tmp_path.iterdir())


@pytest.mark.slow
def test_patch_pictures_and_tables(tmp_path, minilm):
    import csv
    import json

    from engine.analysis import patching

    wide = ANIMAL.replace("tired", "wide")
    common = ["run", "patch", "--model", "minilm", "--clean", ANIMAL, "--corrupt", wide, "--position", "10",
              "--grids", "head_z"]
    for suffix in (".png", ".svg", ".csv", ".json"):
        assert main([*common, "--out", str(tmp_path / f"p{suffix}")]) == 0, suffix
    assert (tmp_path / "p.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert b"<svg" in (tmp_path / "p.svg").read_bytes()[:400]
    expected = patching.patch(patching.prepare(minilm, ANIMAL, wide, position=10), grids=("head_z",)).grids["head_z"]
    rows = list(csv.reader((tmp_path / "p.csv").open()))
    assert rows[0] == ["grid", "layer", "column", "label", "value"] and len(rows) == 1 + 6 * 12
    assert float(rows[1 + 2 * 12 + 3][4]) == pytest.approx(expected[2, 3], rel=1e-8)  # 9 significant digits
    document = json.loads((tmp_path / "p.json").read_text())
    assert document["format"] == "attention-explorer-patching" and document["position"] == 10
    np.testing.assert_allclose(document["head_z"], expected)
    assert main([*common, "--answer", " x", "--out", str(tmp_path / "q.npz")]) == 2  # --answer is for decoders
