"""Every number of docs/SEEDS.md (and SEEDS.zh.md) that no other test reproduced, computed with the app.

One test per tutorial item (or per group of items that share one computation), named after it:
``test_item_0_14_…``. Each computes the figure with the app's own code (presets, engine, labs, the
window's worker functions), checks it against an independent calculation where the app's code is
not the whole story (a float64 loop, a hand cosine, a finite sum), and checks that both documents'
rows print it. The item → test mapping, with the items tested elsewhere, is in docs/TESTING.md.
"""
from __future__ import annotations

import math
import statistics

import numpy as np
import pytest

from tests import ROOT
from engine import AttentionConfig, compute
from tests.engine.toy.test_seeds import by_title, cosine64, doc_rows, findings_rows, run


def printed(value: float, digits: int = 3) -> str:
    """A figure as the document prints it: fixed decimals, the typographic minus."""
    return f"{value:.{digits}f}".replace("-", "−")


def in_rows(number: str, *texts: str) -> None:
    """Every text in row ``number`` of both documents (the Chinese list comma 、 read as “, ”)."""
    for row in doc_rows(number):
        row = row.replace("、", ", ")
        for text in texts:
            assert text in row, (number, text, row)


def softmax64(row):
    finite = [s for s in row if s != -math.inf]
    top = max(finite)
    exps = [0.0 if s == -math.inf else math.exp(s - top) for s in row]
    return [e / sum(exps) for e in exps]


# ============================================================================ seed 000, toy engine
def test_item_0_3_and_0_50_and_0_51_the_hand_calculation_moves_xihuan():
    _p, r, ref, i = run("the hand calculation")  # run() already matches the engine to a float64 loop
    x, out = [float(v) for v in r.x[i]], [float(v) for v in ref[2][i]]
    assert [printed(v) for v in x] == ["0.000", "1.000"] and [printed(v) for v in out] == ["0.578", "0.845"]
    in_rows("0.3", "[0, 1]", "[0.578, 0.845]")
    in_rows("0.50", "[0.578, 0.845]")
    in_rows("0.51", f"[{printed(out[0] - x[0])}, {printed(out[1] - x[1])}]")  # output − x = [0.578, −0.155]
    assert printed(out[1] - x[1]) == "−0.155"


def test_item_0_4_jieba_cuts_xiaoming_xihuan_pingguo_in_three():
    result = compute(AttentionConfig(text="小明喜欢苹果", tokenizer="auto"))
    assert result.token_texts == ["小明", "喜欢", "苹果"]
    in_rows("0.4", "小明 / 喜欢 / 苹果")


def test_item_0_5_the_four_d_table_is_the_seeds():
    result = compute(by_title("4-d embeddings of").config())
    table = {t: [float(v) for v in result.embeddings[i]] for i, t in enumerate(result.token_texts)}
    assert table == {"小明": [1, 0, 1, 0], "喜欢": [0, 1, 1, 0], "苹果": [1, 1, 0, 1]}
    in_rows("0.5", "[1,0,1,0]", "[0,1,1,0]", "[1,1,0,1]")


def test_item_0_10_and_0_11_the_scores_8_5_7_and_0_20_the_new_xihuan():
    _p, r, ref, i = run("Scores 8 / 5 / 7")
    assert [float(s) for s in r.scores[0, i]] == [8.0, 5.0, 7.0]
    ordered = sorted(range(3), key=lambda j: -float(r.scores[0, i, j]))
    assert [r.token_texts[j] for j in ordered[:2]] == ["小明", "苹果"]  # 0.11: the two largest
    weights = softmax64([8.0, 5.0, 7.0])
    values = [[2.0, 3.0], [1.0, 2.0], [1.0, 3.0]]  # V = X
    by_hand = [sum(weights[j] * values[j][c] for j in range(3)) for c in range(2)]
    np.testing.assert_allclose(r.output[i], by_hand, atol=1e-6)
    assert [printed(v) for v in by_hand] == ["1.705", "2.965"]
    in_rows("0.10", "[2,3]", "[1,2]", "[1,3]", "8, 5, 7")
    in_rows("0.20", "[1.705, 2.965]", "0.705", "0.035", "0.259")


def test_item_0_21_and_0_43_cosine_of_xihuan_before_and_after():
    for fragment, item, figure in (("the hand calculation", "0.21", "0.825"), ("Frames 5–7", "0.43", "0.612")):
        _p, r, ref, i = run(fragment)
        assert printed(cosine64(r.x[i], ref[2][i])) == figure
        in_rows(item, figure)


def test_item_0_34_the_causal_row_of_bei():
    p = by_title("我 爱 北 京 — causal")
    r = compute(p.config())
    i = r.token_texts.index("北")
    assert r.token_texts == ["我", "爱", "北", "京"] and bool(r.mask[i, 3])
    scaled = [float(v) for v in r.scaled[0, i]]
    q, k = np.asarray(r.q[0], dtype=np.float64), np.asarray(r.k[0], dtype=np.float64)
    by_hand = [sum(q[i, c] * k[j, c] for c in range(r.config.d_k)) / math.sqrt(r.config.d_k) for j in range(3)]
    np.testing.assert_allclose(scaled[:3], by_hand, atol=1e-5)
    assert scaled[3] == -math.inf
    weights = softmax64(scaled)
    np.testing.assert_allclose(r.weights[0, i], weights, atol=1e-6)
    assert [printed(v) for v in scaled[:3]] == ["0.232", "1.389", "−1.871"]
    assert [printed(v) for v in weights] == ["0.232", "0.739", "0.028", "0.000"]
    in_rows("0.34", "[0.232, 1.389, −1.871, −∞]", "[0.232, 0.739, 0.028, 0]")


# ============================================================================ the scaling lab (0.14, 0.15, 0.17, 1.26, 1.27)
@pytest.fixture(scope="module")
def at_512():
    from engine.toy.labs import scaling_point, sweep_config

    out = {}
    for text in ("小明喜欢苹果", "I ate the cake and it was delicious."):
        config = AttentionConfig(text=text)
        point = scaling_point(config, 512)
        raw = compute(sweep_config(config).replace(d_model=512)).scores[0]  # (n, n) float32
        flat = [float(v) for v in raw.ravel()]
        assert point.score_std == pytest.approx(statistics.pstdev(flat), rel=1e-4)  # independent of numpy
        assert point.largest_score == pytest.approx(max(abs(v) for v in flat), rel=1e-6)
        largest = [max(softmax64([float(v) for v in row])) for row in raw]  # no ÷√d_k, by hand
        assert point.max_unscaled == pytest.approx(sum(largest) / len(largest), abs=1e-5)
        out[text] = point
    return out


def test_item_0_14_and_1_26_scores_spread_like_sqrt_dk(at_512):
    xiaoming, cake = at_512["小明喜欢苹果"], at_512["I ate the cake and it was delicious."]
    figures = [f"{v:.1f}" for v in (xiaoming.score_std, xiaoming.largest_score, cake.score_std, cake.largest_score)]
    assert figures == ["20.9", "40.8", "35.1", "105.1"] and f"{math.sqrt(512):.1f}" == "22.6"
    in_rows("0.14", "20.9", "40.8", "35.1", "105.1", "22.6")
    in_rows("1.26", "35.1")


def test_item_0_15_and_1_27_the_unscaled_softmax_saturates(at_512):
    assert printed(at_512["小明喜欢苹果"].max_unscaled) == "0.997"
    assert printed(at_512["I ate the cake and it was delicious."].max_unscaled) == "0.994"
    in_rows("0.15", "0.997", "0.994")
    in_rows("1.27", "0.994")


def test_item_0_17_with_the_scaling_the_row_stays_spread(at_512):
    point = at_512["小明喜欢苹果"]
    assert (printed(point.max_scaled), printed(point.entropy_scaled)) == ("0.503", "0.965")
    assert printed(point.uniform_entropy) == printed(math.log(3)) == "1.099"
    in_rows("0.17", "0.503", "0.965", "1.099")


# ============================================================================ seed 001, the cake preset
@pytest.fixture(scope="module")
def cake():
    _p, r, ref, i = run("scores 1.3 / 0.4 / 1.6")
    return r, ref, i, r.token_texts


def test_item_1_18_and_1_19_q_cake_and_k_it(cake):
    r, _ref, i, texts = cake
    x = {t: [float(v) for v in r.config.embeddings[t]] for t in texts}
    w = {name: [[float(v) for v in row] for row in m] for name, m in r.config.projections.items()}
    q_cake = [sum(x["cake"][a] * w["w_q"][a][c] for a in range(4)) for c in range(4)]
    k_it = [sum(x["it"][a] * w["w_k"][a][c] for a in range(4)) for c in range(4)]
    np.testing.assert_allclose(r.q[0, i], q_cake, atol=1e-6)
    np.testing.assert_allclose(r.k[0, texts.index("it")], k_it, atol=1e-6)
    assert [f"{v:.1f}" for v in q_cake] == ["-0.2", "0.8", "1.0", "0.9"]
    assert [f"{v:.2f}" for v in k_it] == ["0.47", "0.24", "0.52", "0.76"]
    in_rows("1.18", "[−0.2, 0.8, 1.0, 0.9]")
    in_rows("1.19", "[0.47, 0.24, 0.52, 0.76]", "0.76")


def test_item_1_22_1_23_1_25_the_cake_row_at_three_decimals(cake):
    _r, ref, i, texts = cake
    row = dict(zip(texts, ref[0][i]))  # the float64 loop's scores
    assert (printed(row["it"]), printed(row["I"]), printed(row["cake"])) == ("1.302", "0.400", "1.604")
    in_rows("1.22", "1.302")
    in_rows("1.23", "0.400")
    in_rows("1.25", "1.604")


def test_item_1_24_the_row_of_it(cake):
    _r, ref, _i, texts = cake
    row = ref[0][texts.index("it")]
    low, high = int(np.argmin(row)), int(np.argmax(row))
    assert (texts[low], printed(row[low]), texts[high], printed(row[high])) == (".", "0.067", "cake", "1.016")
    assert ref[0].shape == (9, 9)
    in_rows("1.24", "9 × 9", "0.067", "1.016")


def test_item_1_30_the_cake_row_halved(cake):
    r, ref, i, texts = cake
    row = dict(zip(texts, [float(s) / 2 for s in ref[0][i]]))
    np.testing.assert_allclose(r.scaled[0, i], [float(s) / 2 for s in ref[0][i]], atol=1e-6)
    assert (printed(row["it"]), printed(row["I"]), printed(row["cake"])) == ("0.651", "0.200", "0.802")
    in_rows("1.30", "0.651", "0.200", "0.802")


def test_item_1_35_the_cake_row_after_softmax(cake):
    _r, ref, i, _texts = cake
    figures = [printed(w) for w in ref[1][i]]
    assert figures == ["0.093", "0.109", "0.086", "0.170", "0.083", "0.146", "0.089", "0.143", "0.080"]
    in_rows("1.35", *figures)


def test_item_1_39_the_new_cake_vector(cake):
    _r, ref, i, _texts = cake
    figures = [printed(v) for v in ref[2][i]]
    assert figures == ["2.400", "−0.081", "0.046", "−0.032"]
    in_rows("1.39", "[2.400, −0.081, 0.046, −0.032]")


def test_item_1_43_eight_heads_concatenated():
    r = compute(by_title("8 heads of d_v = 4").config())
    assert r.concat.shape == (9, 32)
    in_rows("1.43", "9 × 32", "4 × 8 = 32")


def test_item_1_44_random_weights_send_it_to_delicious():
    r = compute(by_title("random toy weights").config())
    it = r.token_texts.index("it")
    q, k = np.asarray(r.q[0], dtype=np.float64), np.asarray(r.k[0], dtype=np.float64)
    scores = [sum(q[it, c] * k[j, c] for c in range(r.config.d_k)) / math.sqrt(r.config.d_k) for j in range(r.n)]
    weights = softmax64(scores) if r.mask is None and r.config.temperature == 1 else None
    if weights is not None:  # the preset has no mask and temperature 1: the row by hand
        np.testing.assert_allclose(r.weights[0, it], weights, atol=1e-5)
    best = int(np.argmax(r.weights[0, it]))
    assert (r.token_texts[best], printed(float(r.weights[0, it, best]))) == ("delicious", "0.421")
    in_rows("1.44", "0.421", "delicious")


# ============================================================================ seed 004, toy engine
def test_item_4_5_4_6_4_8_three_tokens_head_by_head():
    p = by_title("three tokens")
    r = compute(p.config())
    i = p.focus_index(r.token_texts)
    assert r.token_texts[i] == "喜欢" and r.mask is None
    q, k = np.asarray(r.q, dtype=np.float64), np.asarray(r.k, dtype=np.float64)
    divisor = math.sqrt(r.config.d_k) * r.config.temperature
    rows = []
    for h in range(r.config.heads):
        scores = [sum(q[h, i, c] * k[h, j, c] for c in range(r.config.d_k)) for j in range(3)]
        rows.append((scores, softmax64([s / divisor for s in scores])))
    np.testing.assert_allclose(r.scores[0, i], rows[0][0], atol=1e-4)
    assert [printed(s) for s in rows[0][0]] == ["1.960", "−0.529", "−5.826"]
    assert [printed(w) for w in rows[0][1]] == ["0.595", "0.320", "0.085"]
    assert [printed(w[2]) for _s, w in rows] == ["0.085", "0.001", "0.174", "0.255"]
    in_rows("4.5", "1.960", "−0.529", "−5.826")
    in_rows("4.6", "0.595", "0.320", "0.085")
    in_rows("4.8", "0.085", "0.001", "0.174", "0.255")


def _cat_mouse_gaps(positional: str) -> tuple[float, float]:
    """The positional lab's shuffle of 猫 追 老鼠, un-permuted here by token."""
    from engine.toy.labs import shuffle_test

    config = AttentionConfig(text="猫 追 老鼠", d_model=64, heads=4, positional=positional)
    shuffled = shuffle_test(config)
    assert shuffled.shuffled_tokens == ["老鼠", "追", "猫"]
    a, b = shuffled.original, shuffled.shuffled
    where = {t: j for j, t in enumerate(b.token_texts)}
    weights = max(abs(float(b.weights[h, where[s], where[t]]) - float(a.weights[h, i, j]))
                  for h in range(4) for i, s in enumerate(a.token_texts) for j, t in enumerate(a.token_texts))
    outputs = max(abs(float(b.output[where[s], c]) - float(a.output[i, c]))
                  for i, s in enumerate(a.token_texts) for c in range(64))
    assert shuffled.max_weight_difference == pytest.approx(weights, abs=1e-7)
    assert shuffled.max_output_difference == pytest.approx(outputs, abs=1e-7)
    return weights, outputs


def test_item_4_17_and_4_18_cat_chases_mouse_shuffled():
    weights, outputs = _cat_mouse_gaps("none")
    assert (f"{weights:.0e}", f"{outputs:.1e}") == ("6e-08", "2.5e-07")  # float32 rounding: only permuted
    in_rows("4.17", "6·10⁻⁸", "2.5·10⁻⁷")
    sinusoidal, _ = _cat_mouse_gaps("sinusoidal")
    rope, _ = _cat_mouse_gaps("rope")
    assert (printed(sinusoidal), printed(rope)) == ("0.176", "0.315")
    in_rows("4.18", "0.176", "0.315")


def test_item_4_25_512_is_8_heads_of_64():
    r = compute(by_title("512 dimensions").config())
    assert r.q.shape == (8, 4, 64) and r.concat.shape == (4, 512)
    in_rows("4.25", "8 × 4 × 64")
    in_rows("4.35", "4 × 512")


def test_item_4_33_b1():
    _p, r, ref, i = run("b₁ =")
    assert [printed(v) for v in ref[2][i]] == ["1.437", "0.755"]
    in_rows("4.33", "[1.437, 0.755]")


# ============================================================================ trained models
@pytest.fixture(scope="module")
def minilm_trace(minilm_model):
    return lambda text: minilm_model.run(text)


@pytest.mark.slow
def test_item_0_2_and_0_23_minilm_apple_layer_by_layer(minilm_model):
    pytest.importorskip("tokenizers")
    from app.jobs.words import compare_words, find_word, word_vectors
    from engine.text.words import words_of

    found = compare_words("minilm", "I ate an apple, it was sweet.", "apple", "Apple released a new phone.", "Apple")
    independent = []
    vectors = []
    for text, word in (("I ate an apple, it was sweet.", "apple"), ("Apple released a new phone.", "Apple")):
        trace = minilm_model.run(text)
        words, index = words_of(text, trace.tokens)
        vectors.append(word_vectors(trace, index, find_word(words, word)))
    independent = [cosine64(a, b) for a, b in zip(*vectors)]
    np.testing.assert_allclose(found["cosines"], independent, atol=1e-5)
    figures = [printed(c) for c in independent]
    assert figures == ["0.955", "0.800", "0.754", "0.724", "0.761", "0.777", "0.686"]
    in_rows("0.2", *figures)
    in_rows("0.23", "0.686")


@pytest.mark.slow
def test_item_0_2_e5_all_thirteen_values(e5_model):
    from app.jobs.words import compare_words

    cosines = compare_words("e5", "苹果很好吃", "苹果", "苹果发布了新手机", "苹果")["cosines"]
    figures = [printed(c) for c in cosines]  # test_seeds.test_doc_0_2… checks these against a float64 cosine
    assert figures == ["1.000", "0.990", "0.972", "0.955", "0.949", "0.937", "0.921", "0.868", "0.884", "0.872",
                       "0.881", "0.788", "0.901"]
    in_rows("0.2", *figures)


def _similarities(model, name: str, words):
    """The word-similarity view's worker job, and the input-embedding cosines by hand."""
    from app.jobs.trained import word_similarities

    found = word_similarities(name, list(words))
    table = model.weights.word_embeddings
    special = model.facts.special_tokens
    rows = []
    for word in words:
        trace = model.run(word)
        ids = [int(i) for i, t in zip(trace.input_ids, trace.tokens) if t.text not in special]
        rows.append([sum(float(table[i][c]) for i in ids) / len(ids) for c in range(table.shape[1])])
    for a in range(len(words)):
        for b in range(len(words)):
            assert found["static"][a, b] == pytest.approx(cosine64(rows[a], rows[b]), abs=1e-6)
    return found


@pytest.mark.slow
def test_item_0_12_and_1_3_minilm_word_similarity(minilm_model):
    found = _similarities(minilm_model, "minilm", ("dog", "cat", "car"))
    assert (printed(found["static"][0, 1]), printed(found["static"][0, 2])) == ("0.424", "0.248")
    in_rows("0.12", "0.424", "0.248")
    found = _similarities(minilm_model, "minilm", ("cake", "pie", "keyboard"))
    assert (printed(found["static"][0, 1]), printed(found["static"][0, 2])) == ("0.357", "0.040")
    in_rows("1.3", "0.357", "0.040")


@pytest.mark.slow
def test_item_0_12_and_1_3_e5_word_similarity(e5_model):
    found = _similarities(e5_model, "e5", ("狗", "猫", "汽车"))
    figures = [printed(found[kind][0, j]) for kind in ("static", "contextual") for j in (1, 2)]
    assert figures == ["0.552", "0.537", "0.884", "0.876"]
    in_rows("0.12", *figures)
    found = _similarities(e5_model, "e5", ("蛋糕", "派", "键盘"))
    figures = [printed(found[kind][0, j]) for kind in ("static", "contextual") for j in (1, 2)]
    assert figures == ["0.496", "0.428", "0.825", "0.847"]
    in_rows("1.3", *figures)


def _strongest(trace, query, key):
    """engine.analysis.meaning.strongest_head, and the same by a plain search over every (layer, head)."""
    from engine.analysis.meaning import find_token, strongest_head

    finding = strongest_head(trace, query, key)
    qi, ki = find_token(trace.token_texts, query), find_token(trace.token_texts, key)
    pairs = sorted(((float(trace.attentions[l, h, qi, ki]), l, h) for l in range(trace.attentions.shape[0])
                    for h in range(trace.attentions.shape[1])), reverse=True)
    assert (finding.weight, finding.layer, finding.head) == (pytest.approx(pairs[0][0]), pairs[0][1], pairs[0][2])
    assert finding.runner_up == pytest.approx(pairs[1][0])
    return finding


CAKE = "I ate the cake and it was delicious."
ANIMAL = "The animal didn't cross the street because it was too tired."


@pytest.mark.slow
def test_item_1_7_1_42_0_29_and_the_findings_table(minilm_trace):
    cake = minilm_trace(CAKE)
    rows = {}
    for query, key, sentence in (("it", "cake", cake), ("delicious", "cake", cake), ("ate", "cake", cake),
                                 ("it", "animal", minilm_trace(ANIMAL))):
        finding = _strongest(sentence, query, key)
        rows[(query, key)] = (finding.layer, finding.head, printed(finding.weight), printed(finding.runner_up))
    assert rows == {("it", "cake"): (5, 11, "0.636", "0.473"), ("delicious", "cake"): (5, 11, "0.646", "0.396"),
                    ("ate", "cake"): (1, 7, "0.647", "0.641"), ("it", "animal"): (3, 1, "0.677", "0.673")}
    for (query, key), (layer, head, weight, runner_up) in rows.items():
        english, chinese = findings_rows(f"{query} → {key}")
        assert f"| {layer}, {head} | {weight} | {runner_up} |" in english and f"| {weight} | {runner_up} |" in chinese
    in_rows("1.7", "0.636", "0.473", "0.646")
    in_rows("1.42", "0.636", "0.647", "0.646")
    in_rows("0.29", "0.677")


@pytest.mark.slow
def test_item_1_14_where_it_looks_in_l5h11_and_elsewhere(minilm_trace):
    from engine.analysis.meaning import find_token

    trace = minilm_trace(CAKE)
    texts = trace.token_texts
    it, cake, i_, and_ = (find_token(texts, w) for w in ("it", "cake", "I", "and"))
    row = trace.attentions[5, 11, it]
    assert sum(float(w) for w in row) == pytest.approx(1.0, abs=1e-5)
    assert (printed(row[cake]), printed(row[i_]), printed(row[and_])) == ("0.636", "0.007", "0.006")
    to_and, to_i = trace.attentions[:, :, it, and_], trace.attentions[:, :, it, i_]
    assert f"{float(to_and.max()):.4f}" == "0.9998"
    assert printed(float(to_i.max())) == "0.458" and np.unravel_index(int(to_i.argmax()), to_i.shape) == (4, 1)
    in_rows("1.14", "0.636", "0.007", "0.006", "0.9998", "0.458")


@pytest.mark.slow
def test_item_4_34_e5_wo_to_xuexi_by_words(e5_model):
    from app.jobs.trained import trace
    from app.jobs.words import WordTrace

    text = "我 喜欢 深度学习"
    words = WordTrace(trace("e5", text), text)
    finding = _strongest(words, "我", "学习")
    assert (finding.layer, finding.head, printed(finding.weight)) == (0, 3, "0.356")
    in_rows("4.34", "0.356")


def test_the_helpers_can_fail():
    """A number absent from a row fails; the printed form uses the document's minus sign."""
    with pytest.raises(AssertionError):
        in_rows("0.14", "20.8")
    assert printed(-0.0812) == "−0.081"


def test_item_4_3_three_tokens_by_whitespace_four_by_jieba():
    assert compute(by_title("three tokens").config()).token_texts == ["我", "喜欢", "深度学习"]
    assert len(compute(by_title("(jieba)").config()).token_texts) == 4
    in_rows("4.3", "3", "4")


def test_item_1_9_eleven_boxes_for_the_players_nine_stages():
    from app.diagram_view import BOXES
    from app.panels.player_panel import STAGE_KEYS

    assert len(BOXES) == 11 and len(STAGE_KEYS) == 9 and {key for _l, key, *_r in BOXES} == set(STAGE_KEYS)
    in_rows("1.9", "11", "9")


# ============================================================================ the meaning presets' table
def meaning_rows(prefix: str) -> list[str]:
    """The issue-21 table's row starting with ``prefix`` in both documents (the row with a mark)."""

    docs = ROOT / "docs"
    rows = []
    for name in ("SEEDS.md", "SEEDS.zh.md"):
        found = [line for line in (docs / name).read_text(encoding="utf-8").splitlines()
                 if line.startswith(f"| {prefix}") and "**[" in line]
        assert len(found) == 1, (name, prefix, found)
        rows.append(found[0])
    return rows


def has(rows, *texts) -> None:
    for row in rows:
        for text in texts:
            assert text in row, (text, row)


@pytest.mark.slow
def test_meaning_table_minilm_it_cake_column(minilm_model):
    from engine.analysis import pronoun_evidence as pe

    trace = minilm_model.run(CAKE)
    finding = _strongest(trace, "it", "cake")
    col = pe.column(trace, "it", "cake", finding.layer, finding.head)
    assert (col.rows_with_key_top, len(col.weights), col.top, f"{col.top_weight:.2f}", col.query_rank) == \
        (11, 11, "the", "0.74", 4)
    has(meaning_rows("MiniLM it → cake"), "L5H11", "0.636", "11", "0.74", "4")


@pytest.mark.slow
def test_meaning_table_minilm_it_animal(minilm_model):
    from engine.analysis import pronoun_evidence as pe

    trace = minilm_model.run(ANIMAL)
    finding = _strongest(trace, "it", "animal")
    c = pe.contrast(trace, "it", "animal", "street")
    col = pe.column(trace, "it", "animal", finding.layer, finding.head)
    assert (c.heads, c.key_wins, c.key_top, c.rival_top) == (72, 36, 3, 1)
    assert (f"{float(col.weights[trace.token_texts.index('it')]):.2f}", col.rows_with_key_top, len(col.weights)) == \
        ("0.68", 3, 16)
    ev = pe.minimal_pair(minilm_model, ANIMAL, ANIMAL.replace("tired", "wide"), query="it")
    share = lambda value: f"{pe.restored_share(value, ev):.2f}"  # noqa: E731
    assert (f"{ev.corrupt:.3f}", share(ev.word_restored[0]), share(ev.word_restored[-1]),
            share(ev.query_restored[-1]), pe.crossover_layer(ev)) == ("0.851", "1.00", "0.50", "0.67", 3)
    rows = meaning_rows("MiniLM it → animal")
    has(rows, "L3H1", "0.677", "72", "36", "0.68", "0.851", "1.00", "0.50", "0.67")
    has(rows[:1], "only 36", "3 heads", "*street* in 1", "3 of 16 rows", "from layer 3")


@pytest.mark.slow
def test_meaning_table_e5_she_and_the_cat(e5_model):
    from app.jobs.trained import trace
    from app.jobs.words import WordTrace
    from engine.analysis import pronoun_evidence as pe

    text = "小明把苹果给了小红，她很高兴。"
    words = WordTrace(trace("e5", text), text)
    finding = _strongest(words, "她", "小红")
    c = pe.contrast(words, "她", "小红", "小明")
    col = pe.column(words, "她", "小红", finding.layer, finding.head)
    assert (c.heads, c.key_wins, c.key_top, c.rival_top) == (144, 61, 7, 8)
    assert (f"{c.rival_best[2]:.3f}", c.rival_best[:2]) == ("0.473", (8, 8))
    assert (col.rows_with_key_top, len(col.weights), col.top, f"{col.top_weight:.2f}", col.query_rank) == \
        (7, 11, "小明", "0.41", 5)
    ev = pe.minimal_pair(e5_model, "小明把苹果给了小刚，他饿了。", "小明把苹果给了小刚，他饱了。", query="他")
    share = lambda value: f"{pe.restored_share(value, ev):.2f}"  # noqa: E731
    assert (f"{ev.corrupt:.3f}", share(ev.word_restored[0]), share(ev.word_restored[-1]),
            share(ev.query_restored[-1]), pe.crossover_layer(ev)) == ("0.991", "1.00", "0.30", "0.62", 11)
    has(meaning_rows("e5 她 → 小红"), "L11H4", "0.319", "0.473", "L8H8", "61", "144", "0.41", "0.991", "1.00", "0.30",
        "0.62")
    cat = WordTrace(trace("e5", "猫追老鼠"), "猫追老鼠")
    chase = _strongest(cat, "追", "老鼠")
    matrix = np.asarray(cat.layers[chase.layer].weights, dtype=np.float64)[chase.head]
    by_hand = sum(float(matrix[i, i + 1]) for i in range(1, matrix.shape[0] - 1)) / (matrix.shape[0] - 2)
    assert pe.next_word_share(matrix) == pytest.approx(by_hand)
    assert ((chase.layer, chase.head), f"{chase.weight:.2f}", f"{by_hand:.2f}") == ((2, 6), "1.00", "0.83")
    has(meaning_rows("e5 猫追老鼠"), "L2H6", "1.00", "0.83")


@pytest.mark.slow
def test_meaning_table_smollm2(smollm2_model):
    from engine.analysis import pronoun_evidence as pe

    text = "The animal didn't cross the street because it was too tired. It was the"
    wide = text.replace("tired", "wide")
    trace = smollm2_model.run(text)
    finding = _strongest(trace, "it", "animal")
    c = pe.contrast(trace, "it", "animal", "street")
    assert ((finding.layer, finding.head), f"{finding.weight:.2f}") == ((13, 8), "0.75")
    assert (c.heads, c.key_wins, c.key_top, c.rival_top) == (270, 112, 5, 5)
    animal, street = pe.decoder_pair(smollm2_model, text, wide, " animal"), pe.decoder_pair(smollm2_model, text, wide,
                                                                                              " street")
    assert (f"{animal[0]:.3f}", f"{animal[1]:.3f}", f"{street[0]:.4f}", f"{street[1]:.4f}") == \
        ("0.017", "0.021", "0.0003", "0.0011")
    has(meaning_rows("SmolLM2 it → animal"), "L13H8", "0.75", "270", "112", "5", "0.017", "0.021", "0.0003", "0.0011")
