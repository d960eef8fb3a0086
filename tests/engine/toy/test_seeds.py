"""The seeds' numbers, reproduced by the presets (docs/SEEDS.md).

Each preset is computed through the engine from its own config and compared with (a) an
independent float64 loop over the same vectors and matrices and (b) the tutorial's printed
values at the tutorial's printed precision, or the exact value where the tutorial is wrong;
each caption's figures are checked against the computation. Also: AttentionConfig.projections
(validation and use), the projections file loader, and engine.analysis.meaning.strongest_head.
"""
from __future__ import annotations

import json
import math
from types import SimpleNamespace

import numpy as np
import pytest

from tests import ROOT
from app.presets import MODEL_PRESETS, PRESETS, STAGES, TOY, preset_config
from engine import AttentionConfig, EngineError, compute
from engine.analysis.meaning import find_token, strongest_head
from engine.toy.weights_file import load_projections


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
    matches = [p for p in TOY if fragment in p.title]
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


@pytest.mark.parametrize("index", range(len(TOY)))
def test_every_toy_preset_is_well_formed(index):
    p = TOY[index]
    config = preset_config(index)
    r = compute(config)
    assert p.stage in STAGES and 0 <= p.head < config.heads
    assert p.focus is None or p.focus in r.token_texts
    assert p.caption and p.source and p.model == "toy"
    assert tuple.__getitem__(PRESETS, index) is p  # the menu's (title, settings) pairs are these presets


def test_model_presets_name_their_words():
    for p in MODEL_PRESETS:
        assert p.model in ("minilm", "e5", "smollm2") and p.focus and p.key  # smollm2: the minimal pair
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
        find_token(["[CLS]", "[SEP]"], "[CLS]", special_tokens=frozenset({"[CLS]", "[SEP]"}))  # the model's own: never a word


@pytest.mark.slow
def test_minilm_findings_fill_the_captions(minilm_model):
    model = minilm_model  # loaded once per test process (tests/conftest.py)
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

    docs = ROOT / "docs"
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


# ----------------------------------------------------------------------------- the document's numbers
def doc_rows(number: str) -> tuple[str, str]:
    """Row ``number`` of docs/SEEDS.md and of docs/SEEDS.zh.md."""
    import re

    docs = ROOT / "docs"
    rows = []
    for name in ("SEEDS.md", "SEEDS.zh.md"):
        found = re.findall(r"^\| " + re.escape(number) + r" \|.*$", (docs / name).read_text(encoding="utf-8"), re.M)
        assert len(found) == 1, (name, number)
        rows.append(found[0])
    return rows[0], rows[1]


def findings_rows(query: str) -> tuple[str, str]:
    """The real-model findings table's row for ``query`` in both documents."""

    docs = ROOT / "docs"
    rows = []
    for name in ("SEEDS.md", "SEEDS.zh.md"):
        found = [line for line in (docs / name).read_text(encoding="utf-8").splitlines()
                 if line.startswith("| ") and f"| {query} |" in line]
        assert len(found) == 1, (name, query)
        rows.append(found[0])
    return rows[0], rows[1]


def cosine64(a, b) -> float:
    a, b = [float(v) for v in a], [float(v) for v in b]
    dot = sum(x * y for x, y in zip(a, b))
    return dot / math.sqrt(sum(x * x for x in a) * sum(y * y for y in b))


def toy_apple_cosine(text_b: str) -> float:
    """cos of 苹果's output in 苹果很好吃 and in ``text_b`` (the presets' toy settings), by the Compare
    panel's engine call, checked against a float64 cosine of the two outputs."""
    from engine.analysis.compare import compare_with_text

    a = compute(by_title("苹果很好吃").config())
    comparison = compare_with_text(a, text_b)
    (shared,) = [s for s in comparison.shared if s.text == "苹果"]
    b = comparison.result_b
    independent = cosine64(a.output[shared.index_a], b.output[shared.index_b])
    assert shared.cos_contextual == pytest.approx(independent, abs=1e-6)
    assert shared.cos_static == pytest.approx(1.0, abs=1e-6)
    return shared.cos_contextual


def test_doc_0_2_and_0_23_toy_apple_cosines():
    assert f"{toy_apple_cosine('苹果发布了新手机'):.3f}" == "0.855"
    assert f"{toy_apple_cosine('苹果发布会'):.3f}" == "0.965"
    for row in doc_rows("0.2"):
        assert "0.855" in row
    for row in doc_rows("0.23"):
        assert "0.965" in row and "苹果发布会" in row


def _lab_shuffle(positional: str):
    """The positional lab's shuffle test on 狗 坐在 沙发 上, with the un-permuting redone here."""
    from engine.toy.labs import shuffle_test

    config = AttentionConfig(text="狗 坐在 沙发 上", d_model=64, heads=4, positional=positional)
    shuffled = shuffle_test(config)
    assert shuffled.tokens == ["狗", "坐在", "沙发", "上"] and shuffled.shuffled_tokens == ["上", "沙发", "坐在", "狗"]
    original, other = shuffled.original, shuffled.shuffled
    where = {text: i for i, text in enumerate(other.token_texts)}  # token → position in the shuffled run
    n = original.n
    weight_gap = max(abs(float(other.weights[h, where[a], where[b]]) - float(original.weights[h, i, j]))
                     for h in range(config.heads) for i, a in enumerate(original.token_texts)
                     for j, b in enumerate(original.token_texts))
    output_gap = max(abs(float(other.output[where[a], c]) - float(original.output[i, c]))
                     for i, a in enumerate(original.token_texts) for c in range(config.d_model))
    assert n == 4
    assert shuffled.max_weight_difference == pytest.approx(weight_gap, abs=1e-6)
    assert shuffled.max_output_difference == pytest.approx(output_gap, abs=1e-6)
    return weight_gap, output_gap


def test_doc_1_4_and_1_5_the_labs_shuffle():
    weights, outputs = _lab_shuffle("none")
    assert weights < 1e-6 and outputs < 1e-6
    weights, outputs = _lab_shuffle("sinusoidal")
    assert (f"{weights:.3f}", f"{outputs:.3f}") == ("0.386", "0.963")
    for row in doc_rows("1.5"):
        assert "0.386" in row and "0.963" in row and "上 沙发 坐在 狗" in row
        assert "0.346" not in row and "0.739" not in row
    for row in doc_rows("1.4"):
        assert "上 沙发 坐在 狗" in row


def test_doc_4_22_rope_dot_products_by_the_formula_view():
    from app.panels.formula_view import rope_demo

    result = compute(AttentionConfig(text="猫 追 老鼠", d_model=64, heads=4, positional="rope"))
    assert result.token_texts == ["猫", "追", "老鼠"] and result.config.d_k == 16
    q, k = result.q_unrotated[0, 0], result.k_unrotated[0, 2]  # 猫's query, 老鼠's key, head 0

    def turned(vector, position):  # RoPE by hand: pair (2i, 2i+1) turns by position · 10000^(−2i/d_k)
        out = []
        for i in range(0, len(vector), 2):
            angle = position * 10000.0 ** (-i / len(vector))
            a, b = float(vector[i]), float(vector[i + 1])
            out += [a * math.cos(angle) - b * math.sin(angle), a * math.sin(angle) + b * math.cos(angle)]
        return out

    def dot(m, n):
        return sum(x * y for x, y in zip(turned(q, m), turned(k, n)))

    same, shifted, other = rope_demo(result, 0, 2, 0)
    assert (same, shifted, other) == pytest.approx((dot(0, 2), dot(5, 7), dot(0, 3)), abs=1e-5)
    figures = [f"{value:.3f}" for value in (same, shifted, other)]
    assert figures == ["-0.866", "-0.866", "0.556"]
    for row in doc_rows("4.22"):
        assert "−0.866" in row and "0.556" in row and "(5, 7)" in row and "−1.142" not in row


def test_doc_tutorial_mistakes_are_flagged_in_the_presets_captions():
    in_caption(by_title("我 爱 北 京 — causal"), "row 北 is the one that predicts 京")
    in_caption(by_title("512 dimensions"), "projection of all 512 features")
    in_caption(by_title("scores 1.3 / 0.4 / 1.6"), "V's first column")
    translations = {item["source"]: item["translation"] for item in json.loads(
        (ROOT / "resources/i18n/zh_CN/lessons.json")
        .read_text(encoding="utf-8"))}
    for fragment in ("我 爱 北 京 — causal", "512 dimensions", "scores 1.3 / 0.4 / 1.6"):
        assert by_title(fragment).caption in translations, fragment  # the Chinese caption comes with it
    # the numbers the flagged rows quote, from the engine
    cake = run("scores 1.3 / 0.4 / 1.6")[1]
    cake_index = cake.token_texts.index("cake")
    first = sum(float(cake.weights[0, cake_index, j]) * float(cake.v[0, j, 0]) for j in range(cake.n))
    assert f"{first:.3f}" == "2.400" and "2.400" in doc_rows("1.38")[0]
    for row in doc_rows("0.34") + doc_rows("1.38") + doc_rows("4.26"):
        assert "[corrected]" in row or "[更正后呈现]" in row


@pytest.fixture(scope="module")
def e5_words():
    """(model name, text → WordTrace) for multilingual-e5; skipped when it is not installed."""
    pytest.importorskip("tokenizers")
    from app.jobs.trained import trace
    from app.jobs.words import WordTrace
    from engine.models import MULTILINGUAL_MODEL

    try:
        trace(MULTILINGUAL_MODEL, "你好")
    except EngineError as error:
        pytest.skip(f"multilingual-e5 not installed: {error}")
    return MULTILINGUAL_MODEL, lambda text: (trace(MULTILINGUAL_MODEL, text), WordTrace(trace(MULTILINGUAL_MODEL, text), text))


def _e5_apple_cosines(e5_words, text_b):
    from app.jobs.words import compare_words, find_word, word_vectors

    name, words_of_text = e5_words
    cosines = compare_words(name, "苹果很好吃", "苹果", text_b, "苹果")["cosines"]  # (layers + 1,)
    (bert_a, words_a), (bert_b, words_b) = words_of_text("苹果很好吃"), words_of_text(text_b)
    vectors_a = word_vectors(bert_a, words_a.word_index, find_word(words_a.words, "苹果"))
    vectors_b = word_vectors(bert_b, words_b.word_index, find_word(words_b.words, "苹果"))
    independent = [cosine64(a, b) for a, b in zip(vectors_a, vectors_b)]
    np.testing.assert_allclose(cosines, independent, atol=1e-5)
    return independent


@pytest.mark.slow
def test_doc_0_2_and_0_23_e5_layers_counted_from_0(e5_words):
    cosines = _e5_apple_cosines(e5_words, "苹果发布了新手机")
    assert len(cosines) == 13  # the embeddings, then layers 0 … 11
    lowest = int(np.argmin(cosines))
    assert lowest - 1 == 10 and f"{cosines[lowest]:.3f}" == "0.788"
    english, chinese = doc_rows("0.2")
    assert "after layer 10 (0.788" in english and "第 10 层之后分得最开（0.788" in chinese
    cosines = _e5_apple_cosines(e5_words, "苹果发布会")
    lowest = int(np.argmin(cosines))
    assert lowest - 1 == 10 and f"{cosines[lowest]:.3f}" == "0.745" and f"{cosines[-1]:.3f}" == "0.904"
    english, chinese = doc_rows("0.23")
    assert "0.745 (after layer 10" in english and "0.904 (after layer 11" in english
    assert "0.745（第 10 层之后" in chinese and "0.904（第 11 层之后" in chinese


@pytest.mark.slow
def test_doc_findings_she_row_columns(e5_words):
    _name, words_of_text = e5_words
    _bert, words = words_of_text("小明把苹果给了小红，她很高兴。")
    finding = strongest_head(words, "她", "小红")
    qi, ki = words.token_texts.index("她"), words.token_texts.index("小红")
    pairs = sorted(((float(words.attentions[layer, head, qi, ki]), layer, head)
                    for layer in range(words.attentions.shape[0]) for head in range(words.attentions.shape[1])),
                   reverse=True)
    (weight, layer, head), (runner_up, _, _) = pairs[0], pairs[1]
    assert (finding.layer, finding.head) == (layer, head) == (11, 4)
    assert (f"{finding.weight:.3f}", f"{finding.runner_up:.3f}") == (f"{weight:.3f}", f"{runner_up:.3f}") == ("0.319", "0.297")
    english, chinese = findings_rows("她 → 小红")
    assert "| 11, 4 (multilingual-e5, by words) | 0.319 | 0.297 |" in english
    assert "| 11, 4（multilingual-e5，按词） | 0.319 | 0.297 |" in chinese


def test_doc_1_16_one_projection_element_by_the_formula_view():
    from app.panels.formula_view import projection_terms

    result = run("scores 1.3 / 0.4 / 1.6")[1]
    cake = result.token_texts.index("cake")
    column, x, w, total, engine_q = projection_terms(result, cake, 0)
    by_hand = sum(float(a) * float(b) for a, b in zip(result.x[cake], result.w_q[:, 0]))
    assert column == 0 and total == pytest.approx(by_hand, abs=1e-9) and engine_q == pytest.approx(by_hand, abs=1e-6)
    assert [round(float(v), 2) for v in x] == [0.3, 0.2, 1.0, 0.6] and [round(float(v), 2) for v in w] == [0.2, 0, -0.32, 0.1]
    assert f"{by_hand:.1f}" == "-0.2"
    for row in doc_rows("1.16"):
        assert "0.3·0.2 + 0.2·0 + 1.0·(−0.32) + 0.6·0.1 = −0.2" in row


def test_doc_0_16_and_1_29_the_gradient_w_times_1_minus_w():
    from engine.toy.labs import self_gradient

    def softmax(row):
        top = max(row)
        exps = [math.exp(v - top) for v in row]
        return [e / sum(exps) for e in exps]

    scores = [3.0, 0.5, -1.0, 2.0]
    weights = softmax(scores)
    step = 1e-6
    for i in range(len(scores)):  # central difference of w_i by its own score s_i
        up = softmax([s + (step if j == i else 0.0) for j, s in enumerate(scores)])[i]
        down = softmax([s - (step if j == i else 0.0) for j, s in enumerate(scores)])[i]
        assert self_gradient(np.array(weights))[i] == pytest.approx((up - down) / (2 * step), abs=1e-8)
    assert f"{self_gradient(np.array([0.994]))[0]:.3f}" == "0.006"
    assert f"{self_gradient(np.array([0.999999]))[0]:.0e}" == "1e-06"
    for row in doc_rows("0.16") + doc_rows("1.29"):
        assert "0.006" in row and "w(1 − w)" in row


def test_the_scaling_lab_shows_the_gradient(standalone_panel, qtbot):
    from app.panels.scaling_panel import ScalingPanel
    from engine.toy.labs import self_gradient, softmax_stats

    controller, panel = standalone_panel(ScalingPanel, 900, 600)
    config = AttentionConfig(text="I ate the cake and it was delicious.", d_model=64, heads=4)
    controller.set_config(config, immediate=True)
    qtbot.waitUntil(lambda: bool(controller.is_idle() and panel.comparison is not None and panel.gradient.text()),
                    timeout=20000)
    controller.select(head=2)
    _entropy, largest = softmax_stats(compute(config).weights)
    _entropy, largest_off = softmax_stats(compute(config.replace(scale=False)).weights)
    with_scale = float(np.mean([w * (1 - w) for w in largest[2]]))
    without = float(np.mean([w * (1 - w) for w in largest_off[2]]))
    assert f"{with_scale:.3g}" in panel.gradient.text() and f"{without:.3g}" in panel.gradient.text()
    assert self_gradient(largest[2]).mean() == pytest.approx(with_scale)


def test_doc_4_20_sinusoidal_dot_product_against_distance(standalone_panel, qtbot):
    from app.panels.positional_panel import PositionalPanel
    from engine.core.positional import dot_by_distance, sinusoidal

    dots, gap = dot_by_distance(sinusoidal(12, 64))
    # closed form: PE[m]·PE[m+Δ] = Σ_i cos(Δ·ω_i), ω_i = 10000^(−2i/d)
    closed = [sum(math.cos(delta / 10000 ** (2 * i / 64)) for i in range(32)) for delta in range(9)]
    np.testing.assert_allclose(dots, closed, atol=1e-5)
    assert gap < 1e-5
    figures = [f"{value:.2f}" for value in closed]
    assert figures[:5] == ["32.00", "30.92", "28.30", "25.59", "23.93"] and figures[8] == "22.41"
    for row in doc_rows("4.20"):
        assert all(figure in row for figure in figures[:5]) and "22.41" in row
    controller, panel = standalone_panel(PositionalPanel, 900, 600)
    controller.set_config(AttentionConfig(text="a b c d e f g h i j k l", tokenizer="whitespace", d_model=64,
                                          heads=4, positional="sinusoidal"), immediate=True)
    qtbot.waitUntil(lambda: "Δ 8 → 22.41" in panel.pe_caption.text(), timeout=20000)
    assert "Δ 1 → 30.92" in panel.pe_caption.text()
