"""The seeds' numbers, reproduced by the presets (docs/SEEDS.md).

Each preset is computed through the engine from its own config and compared with (a) an
independent float64 loop over the same vectors and matrices and (b) the tutorial's printed
values at the tutorial's printed precision, or the exact value where the tutorial is wrong;
each caption's figures are checked against the computation. Also: AttentionConfig.projections
(validation and use), the projections file loader, and engine.meaning.strongest_head.
"""
from __future__ import annotations

import json
import math
from types import SimpleNamespace

import numpy as np
import pytest

from app.presets import MODEL_PRESETS, PRESETS, STAGES, _TOY, preset_config
from engine import AttentionConfig, EngineError, compute
from engine.meaning import find_token, strongest_head
from engine.weights_file import load_projections


# ----------------------------------------------------------------------------- float64 reference
def reference(config: AttentionConfig, tokens: list[str]):
    """One head, no positions: scores, weights and output by explicit float64 loops."""
    assert config.heads == 1 and config.positional == "none" and config.mask == "none"
    d = config.d_model
    x = [[float(v) for v in config.embeddings[t]] for t in tokens]
    if config.projections is not None:
        w = {name: [[float(v) for v in row] for row in m] for name, m in config.projections.items()}
    else:
        eye = [[1.0 if i == j else 0.0 for j in range(d)] for i in range(d)]
        w = {name: eye for name in ("w_q", "w_k", "w_v", "w_o")}

    def times(vector, matrix):  # row vector · matrix
        return [sum(vector[i] * matrix[i][j] for i in range(d)) for j in range(d)]

    q = [times(row, w["w_q"]) for row in x]
    k = [times(row, w["w_k"]) for row in x]
    v = [times(row, w["w_v"]) for row in x]
    n = len(tokens)
    scores = [[sum(q[i][c] * k[j][c] for c in range(d)) for j in range(n)] for i in range(n)]
    divisor = (math.sqrt(d) if config.scale else 1.0) * config.temperature
    weights = []
    for row in scores:
        top = max(row)
        exps = [math.exp((s - top) / divisor) for s in row]
        weights.append([e / sum(exps) for e in exps])
    heads = [[sum(weights[i][j] * v[j][c] for j in range(n)) for c in range(d)] for i in range(n)]
    output = [times(row, w["w_o"]) for row in heads]
    return np.array(scores), np.array(weights), np.array(output)


def by_title(fragment: str):
    matches = [p for p in _TOY if fragment in p.title]
    assert len(matches) == 1, fragment
    return matches[0]


def run(fragment: str):
    """(preset, engine result, float64 reference, focus index)."""
    p = by_title(fragment)
    result = compute(p.config())
    ref = reference(result.config, result.token_texts)
    focus = p.focus_index(result.token_texts)
    np.testing.assert_allclose(result.scores[0], ref[0], rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(result.weights[0], ref[1], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(result.output, ref[2], rtol=1e-5, atol=1e-5)
    return p, result, ref, focus


def rounded(values, digits):
    return [round(float(v), digits) + 0.0 for v in values]


def in_caption(p, *texts):
    for text in texts:
        assert text in p.caption, (text, p.caption)


# ----------------------------------------------------------------------------- the seeds' numbers
def test_seed000_hand_calculation_focused_on_xihuan():
    p, r, ref, i = run("the hand calculation")
    assert r.token_texts[i] == "喜欢" and p.stage in STAGES
    assert rounded(r.scores[0, i], 0) == [0, 1, 1]
    assert rounded(r.weights[0, i], 2) == [0.16, 0.42, 0.42]  # the tutorial's precision
    assert rounded(r.weights[0, i], 3) == [0.155, 0.422, 0.422]
    assert rounded(r.output[i], 2) == [0.58, 0.84]  # the tutorial's [0.58, 0.84] …
    assert rounded(r.output[i], 3) == [0.578, 0.845]  # … exactly 0.578, 0.845 (0.84 from rounded weights)
    in_caption(p, "0.155 / 0.422 / 0.422", "[0.578, 0.845]", "[0.58, 0.84]")


def test_seed000_four_d_vectors_make_xihuan_match_itself_most():
    p, r, ref, i = run("4-d embeddings of")
    assert rounded(r.scores[0, i], 0) == [1, 2, 1]
    assert rounded(r.weights[0, i], 3) == [0.274, 0.452, 0.274]
    assert r.weights[0, i].argmax() == 1  # frame 5 says 喜欢 scores itself low: not with these vectors
    in_caption(p, "1 / 2 / 1", "0.274 / 0.452 / 0.274")


def test_seed000_scores_8_5_7_and_the_exact_softmax():
    p, r, ref, i = run("Scores 8 / 5 / 7")
    assert r.scores[0, i].tolist() == [8, 5, 7]
    exact = np.exp([8.0, 5.0, 7.0]) / np.exp([8.0, 5.0, 7.0]).sum()
    np.testing.assert_allclose(r.weights[0, i], exact, atol=1e-6)
    assert rounded(r.weights[0, i], 3) == [0.705, 0.035, 0.259]
    assert rounded(r.weights[0, i], 1) != [0.7, 0.1, 0.2]  # the tutorial's numbers are wrong
    in_caption(p, "[0.705, 0.035, 0.259]", "3.5 %")


def test_seed000_frames_5_to_7():
    p, r, ref, i = run("Frames 5–7")
    assert r.scores[0, i].tolist() == [3, 0, 3]
    np.testing.assert_allclose(r.scaled[0, i], [1.5, 0, 1.5])
    assert rounded(r.weights[0, i], 2) == [0.45, 0.10, 0.45]  # the tutorial's frame 6, exactly
    assert rounded(r.weights[0, i], 3) == [0.450, 0.100, 0.450]
    np.testing.assert_allclose(r.output[i], r.weights[0, i] @ np.array([[1, 0, 1, 0], [0, 1, 1, 0], [1, 1, 0, 1]]),
                               atol=1e-6)  # frame 7: 0.45 × 小明V + 0.10 × 喜欢V + 0.45 × 苹果V
    assert rounded(r.output[i], 3) == [0.900, 0.550, 0.550, 0.450]
    in_caption(p, "3 / 0 / 3", "0.450 / 0.100 / 0.450", "[0.900, 0.550, 0.550, 0.450]", "[3, 0, 0, 0]")


def test_seed001_scores_with_custom_projections():
    p, r, ref, i = run("scores 1.3 / 0.4 / 1.6")
    texts = r.token_texts
    assert texts[i] == "cake" and r.config.projections is not None
    row = dict(zip(texts, r.scores[0, i]))
    assert (round(row["it"], 1), round(row["I"], 1), round(row["cake"], 1)) == (1.3, 0.4, 1.6)
    assert (round(row["it"], 2), round(row["I"], 2), round(row["cake"], 2)) == (1.30, 0.40, 1.60)
    assert r.scores[0, i].argmax() == i  # "when a word is compared with itself … 1.6": the largest of the row
    np.testing.assert_allclose(r.scaled[0, i], r.scores[0, i] / 2, rtol=1e-6)  # ÷√4 = 2
    assert round(float(r.output[i, 0]), 1) == 2.4 and round(float(r.output[i, 0]), 2) == 2.40
    assert (r.output[i] < 0).any()  # "输出结果也可能为负数"
    # "Q_cake 的第一个元素 = cake 的嵌入与 W_q 第一列的点积"
    x_cake, w_q = np.array(r.config.embeddings["cake"]), np.array(r.config.projections["w_q"])
    assert math.isclose(float(r.q[0, i, 0]), float(sum(x_cake[c] * w_q[c, 0] for c in range(4))), abs_tol=1e-6)
    in_caption(p, "1.30", "0.40", "1.60", "2.40")


def test_seed004_b1():
    p, r, ref, i = run("b₁ =")
    assert r.token_texts == ["我", "喜欢", "深度", "学习"] and i == 0
    assert rounded(r.weights[0, i], 3) == [0.245, 0.015, 0.245, 0.496]
    assert round(0.245 + 0.015 + 0.245 + 0.496, 3) == 1.001  # the caption's remark: the printed weights are rounded
    np.testing.assert_allclose(r.output[i], r.weights[0, i] @ r.v[0], atol=1e-6)  # b₁ = Σ wⱼ vʲ
    in_caption(p, "0.245 / 0.015 / 0.245 / 0.496", "1.001", "1 / −2.95 / 1 / 2")


def test_seed004_team_meeting():
    p, r, ref, i = run("The team meeting")
    assert r.token_texts[i] == "成员A"
    np.testing.assert_allclose(r.scores[0, i], [0, 0.3, 0.8, 0.5], atol=1e-6)
    assert rounded(r.weights[0, i], 3) == [0.161, 0.217, 0.358, 0.265] and r.weights[0, i].argmax() == 2
    in_caption(p, "0.3 / 0.8 / 0.5", "0.161 / 0.217 / 0.358 / 0.265")


def test_seed004_three_tokens_and_focus():
    p = by_title("three tokens")
    r = compute(p.config())
    assert r.token_texts == ["我", "喜欢", "深度学习"]
    assert r.token_texts[p.focus_index(r.token_texts)] == "喜欢"


def test_seed004_512_is_8_heads_of_64():
    p = by_title("512 dimensions")
    config = p.config()
    assert (config.d_model, config.heads, config.d_k) == (512, 8, 64) and p.head == 1
    in_caption(p, "65–128", "64–127")


def test_seed001_eight_heads_of_four_make_32():
    config = by_title("8 heads of d_v = 4").config()
    r = compute(config)
    assert (config.heads, config.d_k, r.concat.shape[1]) == (8, 4, 32)


def test_causal_mask_weights_are_exactly_zero():
    p = by_title("causal mask")
    r = compute(p.config())
    i = p.focus_index(r.token_texts)
    assert r.token_texts[i] == "北"
    assert (r.weights[:, i, i + 1:] == 0).all() and np.isneginf(r.scaled[:, i, i + 1:]).all()
    assert (r.weights >= 0).all()


@pytest.mark.parametrize("index", range(len(_TOY)))
def test_every_toy_preset_is_well_formed(index):
    p = _TOY[index]
    config = preset_config(index)
    r = compute(config)
    assert p.stage in STAGES and 0 <= p.head < config.heads
    assert p.focus is None or p.focus in r.token_texts
    assert p.caption and p.source and p.model == "toy"
    assert tuple.__getitem__(PRESETS, index) is p  # the menu's (title, settings) pairs are these presets


def test_model_presets_name_their_words():
    for p in MODEL_PRESETS:
        assert p.model in ("minilm", "e5", "smollm2") and p.focus and p.key  # smollm2: the minimal pair (issue 21)
        assert all(f"%{i}" in p.caption for i in range(2, 6)) and "%1" in p.caption
        with pytest.raises(EngineError):
            p.config()


# ----------------------------------------------------------------------------- projections
def _valid(d=2):
    rng = np.random.default_rng(3)
    return {name: rng.standard_normal((d, d)).round(3).tolist() for name in ("w_q", "w_k", "w_v")}


@pytest.mark.parametrize("bad", [
    [[1, 2], [3, 4]],  # not a mapping
    {"w_q": [[1, 0], [0, 1]], "w_k": [[1, 0], [0, 1]]},  # w_v missing
    {**_valid(), "w_x": [[1, 0], [0, 1]]},  # unknown name
    {**_valid(), "w_q": [[1, 0, 0], [0, 1, 0]]},  # 2 × 3
    {**_valid(), "w_q": [[1, 0]]},  # 1 row
    {**_valid(), "w_q": [[1, 0], [0]]},  # ragged
    {**_valid(), "w_q": [[1, float("nan")], [0, 1]]},
    {**_valid(), "w_k": [[1, float("inf")], [0, 1]]},
    {**_valid(), "w_v": [[1, 10**400], [0, 1]]},  # beyond float range
    {**_valid(), "w_v": [[1, 1e4], [0, 1]]},  # beyond the bound
    {**_valid(), "w_q": [["1", 0], [0, 1]]},
    {**_valid(), "w_q": [[True, 0], [0, 1]]},
    {**_valid(), "w_q": "[[1, 0], [0, 1]]"},
    {**_valid(), "w_q": [1, 0]},
    {**_valid(), "w_q": np.array([["a", "b"], ["c", "d"]])},
    {**_valid(), "w_o": [[1, 0], [0, 1], [0, 0]]},
])
def test_projections_are_validated(bad):
    with pytest.raises(EngineError) as error:
        AttentionConfig(text="a b", tokenizer="whitespace", d_model=2, heads=1, projections=bad)
    assert error.value.field == "projections"


def test_projections_are_for_teaching_sizes():
    eye = np.eye(1024)
    with pytest.raises(EngineError) as error:
        AttentionConfig(text="a b", d_model=1024, heads=8, projections={"w_q": eye, "w_k": eye, "w_v": eye})
    assert error.value.field == "projections"
    with pytest.raises(EngineError) as error:  # a table made for another d_model
        by_title("scores 1.3 / 0.4 / 1.6").config().replace(d_model=8, heads=2)
    assert error.value.field in ("projections", "embeddings", None)


def test_compute_uses_the_projections():
    rng = np.random.default_rng(11)
    d, tokens = 4, ["p", "q", "r", "s", "t"]
    table = {t: rng.standard_normal(d).round(4).tolist() for t in tokens}
    projections = {name: rng.standard_normal((d, d)).round(4) for name in ("W_Q", "W_K", "W_V", "W_O")}
    config = AttentionConfig(text=" ".join(tokens), tokenizer="whitespace", d_model=d, heads=1, positional="none",
                             embeddings=table, projections=projections)
    r = compute(config)
    scores, weights, output = reference(config, tokens)
    np.testing.assert_allclose(r.scores[0], scores, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(r.weights[0], weights, atol=1e-6)
    np.testing.assert_allclose(r.output, output, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(r.w_o, projections["W_O"], atol=1e-6)
    # W_O left out: the identity; the weights setting is ignored once projections are given
    without_o = config.replace(projections={k: v for k, v in projections.items() if k != "W_O"}, weights="random")
    assert np.array_equal(compute(without_o).w_o, np.eye(d))
    # several heads split the custom matrices' columns as usual
    two = AttentionConfig(text=" ".join(tokens), tokenizer="whitespace", d_model=d, heads=2, positional="none",
                          embeddings=table, projections=projections)
    x = np.array([table[t] for t in tokens], dtype=np.float64)
    q = x @ projections["W_Q"]
    np.testing.assert_allclose(compute(two).q[1], q[:, 2:], atol=1e-5)


def test_projections_round_trip_and_hash():
    config = AttentionConfig(text="a b", tokenizer="whitespace", d_model=2, heads=1, projections=_valid())
    again = AttentionConfig.from_dict(json.loads(json.dumps(config.to_dict())))
    assert again == config and hash(again) == hash(config)
    assert config != config.replace(projections=None)


def test_projections_file_loader(tmp_path):
    matrices = {name: np.arange(4.0).reshape(2, 2) + i for i, name in enumerate(("w_q", "w_k", "w_v"))}
    expected = AttentionConfig(text="a b", tokenizer="whitespace", d_model=2, heads=1,
                               projections={k: v.tolist() for k, v in matrices.items()})
    path = tmp_path / "w.json"
    path.write_text(json.dumps({"_comment": "note", **{k: v.tolist() for k, v in matrices.items()}}))
    np.savez(tmp_path / "w.npz", **matrices)
    np.save(tmp_path / "w.npy", np.stack(list(matrices.values())))
    for name in ("w.json", "w.npz", "w.npy"):
        loaded = load_projections(tmp_path / name)
        assert expected.replace(projections=loaded) == expected
    (tmp_path / "bad.json").write_text("{not json")
    np.save(tmp_path / "bad.npy", np.zeros((2, 2)))
    (tmp_path / "w.txt").write_text("1 2")
    for name in ("bad.json", "bad.npy", "w.txt", "missing.json"):
        with pytest.raises(EngineError) as error:
            load_projections(tmp_path / name)
        assert error.value.field == "projections"


# ----------------------------------------------------------------------------- real-model findings
def _fake_trace():
    tokens = ["[CLS]", "i", "ate", "the", "cake", "and", "it", "[SEP]"]
    n = len(tokens)
    layers = []
    for layer in range(3):
        w = np.full((2, n, n), 1.0 / n)
        layers.append(SimpleNamespace(weights=w))
    layers[2].weights[1, 6, 4] = 0.7  # it → cake, layer 2 head 1
    layers[0].weights[0, 6, 4] = 0.5
    return SimpleNamespace(token_texts=tokens, layers=layers)


def test_strongest_head_finds_the_largest_weight():
    finding = strongest_head(_fake_trace(), "it", "cake")
    assert (finding.layer, finding.head, finding.weight, finding.runner_up) == (2, 1, 0.7, 0.5)
    assert (finding.query_index, finding.key_index) == (6, 4)
    assert find_token(["[CLS]", "▁It", "Ġcake"], "it") == 1 and find_token(["x", "##cake"], "CAKE") == 1
    with pytest.raises(EngineError):
        strongest_head(_fake_trace(), "it", "pie")
    with pytest.raises(EngineError):
        find_token(["[CLS]", "[SEP]"], "[CLS]")


def test_minilm_findings_fill_the_captions():
    pytest.importorskip("tokenizers")
    from engine.errors import ModelNotInstalled
    from engine.minilm import load_minilm

    try:
        model = load_minilm()
    except ModelNotInstalled:
        pytest.skip("MiniLM is not installed")
    found = {}
    for p in MODEL_PRESETS:
        if p.model != "minilm":
            continue
        trace = model.run(p.settings["text"])
        finding = strongest_head(trace, p.focus, p.key)
        weights = trace.attentions[:, :, finding.query_index, finding.key_index]
        assert finding.weight == pytest.approx(float(weights.max()))
        values = p.caption_values(trace)
        assert values[2:4] == (finding.layer, finding.head) and values[4] == f"{finding.weight:.2f}"
        caption = p.caption_for(trace)
        assert f"layer {finding.layer}, head {finding.head}: {finding.weight:.2f}" in caption and "%" not in caption
        found[(p.focus, p.key)] = finding
    it_cake = found[("it", "cake")]
    assert (it_cake.layer, it_cake.head) == (5, 11) and round(it_cake.weight, 2) == 0.64
    assert found[("it", "animal")].weight > 0.5


# ----------------------------------------------------------------------------- the walkthrough's counts
def _marks(path, labels):
    import re

    text = path.read_text(encoding="utf-8")
    counts = {}
    for part in re.split(r"^## ", text, flags=re.M):
        rows = [line for line in part.splitlines() if re.match(r"\| \d\.\d+ \|", line)]
        if rows:
            seed = rows[0].split("|")[1].strip().split(".")[0]
            assert all(sum(f"**[{label}]**" in line for label in labels) == 1 for line in rows), seed
            counts[seed] = [len(rows)] + [sum(f"**[{label}]**" in line for line in rows) for label in labels]
    return counts


def test_seeds_doc_counts_match_its_table():
    from pathlib import Path

    docs = Path(__file__).resolve().parent.parent / "docs"
    labels = ("exact", "corrected", "partly", "impossible")
    counts = _marks(docs / "SEEDS.md", labels)
    table = (docs / "SEEDS.md").read_text(encoding="utf-8")
    for seed, row in counts.items():
        assert f"| {int(seed):03d} | " + " | ".join(map(str, row)) + " |" in table, (seed, row)
    total = [sum(column) for column in zip(*counts.values())]
    assert "| **All** | " + " | ".join(f"**{n}**" for n in total) + " |" in table, total
    zh = docs / "SEEDS.zh.md"
    if zh.exists():  # the Chinese walkthrough marks the same items the same way
        assert _marks(zh, ("完全呈现", "更正后呈现", "部分呈现", "无法呈现")) == counts


def test_a_session_keeps_the_custom_projections(tmp_path):
    from app.session import load_session, save_session

    config = by_title("scores 1.3 / 0.4 / 1.6").config()
    path = save_session(tmp_path / "cake.json", config, {"head": 0, "focus": 3, "stage": "scores"})
    loaded, view = load_session(path)
    assert loaded == config and view["focus"] == 3
    np.testing.assert_array_equal(compute(loaded).scores, compute(config).scores)
