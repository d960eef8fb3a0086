"""Corpus jobs in this process: the reduction against single-sentence tables computed one by one,
the head-pair distances and MDS against float64 loops written here, resume, refusals."""
import math
import os
import unicodedata
from pathlib import Path

import numpy as np
import pytest

from engine.analysis.head_stats import head_stats
from engine.core.errors import EngineError
from engine.corpus.clusters import classical_mds
from engine.corpus.measures import CORPUS_MEASURES, pair_distance_sums, punctuation_mask
from engine.corpus.runner import InProcess, JobSpec, run_job
from engine.corpus.shards import read_shard, shard_name
from engine.corpus.texts import MAX_TEXT_CHARS, read_corpus
from engine.models import load_model

SUBJECTS = ["The cat", "A teacher", "My brother", "The old man", "Every student", "Her friend", "The committee"]
VERBS = ["saw", "liked", "followed", "painted", "found", "helped", "ignored"]
OBJECTS = ["the bird", "a red car", "the quiet river", "his notes", "the long letter", "our neighbour"]
TAILS = [".", ", and then it rained.", "; nobody knew why!", "", " in the morning, of course."]


def sentences(count: int = 50) -> list[str]:
    rng = np.random.default_rng(7)
    return [f"{rng.choice(SUBJECTS)} {rng.choice(VERBS)} {rng.choice(OBJECTS)}{rng.choice(TAILS)}"
            for _ in range(count)]


@pytest.fixture(scope="module")
def toy():
    return load_model("toy")


@pytest.fixture
def corpus_file(tmp_path) -> Path:
    path = tmp_path / "texts.txt"
    path.write_text("\n".join(sentences()) + "\n", encoding="utf-8")
    return path


def is_punctuation(text: str) -> bool:
    core = text.replace("##", "").replace("Ġ", "").replace("▁", "").strip()
    return bool(core) and all(unicodedata.category(c)[0] == "P" for c in core)


def one_by_one(model, texts, ablate=frozenset()):
    """Each text's head table computed alone, with punctuation weight by a plain loop: {measure: (T, L, H)}."""
    tables = {m: [] for m in CORPUS_MEASURES}
    for text in texts:
        trace = model.run(text, ablate=ablate)
        a = trace.attentions.astype(np.float64)
        special = model.facts.special_mask(trace.token_texts)
        stats = head_stats(a, special)
        punct = np.zeros(a.shape[:2])
        # the punctuation keys once per text (asking each key in every row of every head was most of
        # this file's time: 518,400 calls of is_punctuation for MiniLM's 50 texts)
        keys = [j for j, t in enumerate(trace.token_texts) if is_punctuation(t) and not special[j]]
        for layer in range(a.shape[0]):
            for head in range(a.shape[1]):
                rows = [sum(a[layer, head, i, j] for j in keys) for i in range(trace.n)]
                punct[layer, head] = sum(rows) / len(rows)
        stats["punctuation"] = punct
        for m in CORPUS_MEASURES:
            tables[m].append(stats[m])
    return {m: np.array(v) for m, v in tables.items()}


def check_against_one_by_one(model, name, path, out, ablate=frozenset()):
    texts = sentences()
    result = run_job(JobSpec(name, str(path), str(out), ablate=ablate, batch_size=7), InProcess())
    expected = one_by_one(model, texts, ablate)
    assert result.summary.texts == 50 and result.summary.skipped == 0
    for m in CORPUS_MEASURES:
        np.testing.assert_allclose(result.summary.mean[m], expected[m].mean(axis=0), rtol=1e-12, atol=1e-14)
        np.testing.assert_allclose(result.summary.std[m], expected[m].std(axis=0), rtol=1e-9, atol=1e-12)
    saved = np.load(Path(out) / "head_stats.npz")
    assert saved["count"].tolist() == [50] * expected["entropy"][0].size
    np.testing.assert_allclose(saved["previous"], expected["previous"].mean(axis=0).reshape(-1), rtol=1e-12)
    return result, expected


def test_means_equal_single_sentence_tables_toy(toy, corpus_file, tmp_path):
    result, expected = check_against_one_by_one(toy, "toy", corpus_file, tmp_path / "job")
    assert expected["punctuation"].max() > 0.05  # the sentences have punctuation the heads see
    # each head's most typical text: the least sum over measures of squared deviations in standard deviations
    for head in range(4):
        scores = []
        for t in range(50):
            score = 0.0
            for m in CORPUS_MEASURES:
                spread = expected[m][:, 0, head].std()
                score += ((expected[m][t, 0, head] - expected[m][:, 0, head].mean()) / (spread or 1.0)) ** 2
            scores.append(score)
        assert result.summary.typical[0, head] == int(np.argmin(scores))


@pytest.mark.slow
def test_means_equal_single_sentence_tables_minilm_with_a_head_off(minilm_model, corpus_file, tmp_path, monkeypatch):
    # the joint query-key maps are checked on the toy and a decoder below: here they were 72 t-SNEs,
    # 90 % of the job's time (16 s of CPU for 50 texts), for no number this test reads
    from engine.corpus import runner

    monkeypatch.setattr(runner, "write_qk_map", lambda *args, **kwargs: None)
    ablate = frozenset({(0, 3)})
    result, expected = check_against_one_by_one(minilm_model, "minilm", corpus_file, tmp_path / "job", ablate)
    # switching 0.3 off changes what the later layers attend to, so a job that dropped it would differ
    plain = one_by_one(minilm_model, sentences(3))["entropy"][:, 1:]
    assert np.abs(plain - expected["entropy"][:3, 1:]).max() > 1e-3


def js_distance_loop(p, q) -> float:
    m = [(x + y) / 2 for x, y in zip(p, q)]
    h = lambda d: -sum(x * math.log2(x) for x in d if x > 0)  # noqa: E731
    return math.sqrt(max(0.0, h(m) - h(p) / 2 - h(q) / 2))


def test_head_distances_equal_a_float64_loop(toy, corpus_file, tmp_path):
    result = run_job(JobSpec("toy", str(corpus_file), str(tmp_path / "job"), batch_size=9), InProcess())
    heads = toy.facts.layers * toy.facts.heads
    total, rows = np.zeros((heads, heads)), 0
    for text in sentences():
        a = toy.run(text).attentions.astype(np.float64).reshape(heads, -1, toy.run(text).attentions.shape[-1])
        for i in range(a.shape[1]):
            for h in range(heads):
                for g in range(heads):
                    total[h, g] += js_distance_loop(list(a[h, i]), list(a[g, i]))
        rows += a.shape[1]
    np.testing.assert_allclose(result.summary.distance, total / rows, rtol=1e-10, atol=1e-13)
    assert result.summary.distance[0, 1] > 0.01 and np.all(np.diag(result.summary.distance) < 1e-7)
    saved = np.load(tmp_path / "job" / "head_clusters.npz")
    np.testing.assert_array_equal(saved["distance"], result.summary.distance)


def test_pair_distances_of_a_causal_pattern():
    """Rows with zeros (a decoder's future keys): 0·log 0 counts as 0, identical heads are 0 apart."""
    rng = np.random.default_rng(1)
    n = 6
    a = np.tril(rng.random((2, 3, n, n)))
    a /= a.sum(axis=-1, keepdims=True)
    a[1, 2] = a[0, 0]
    sums = pair_distance_sums(a)
    flat = a.reshape(6, n, n)
    for h in range(6):
        for g in range(6):
            assert sums[h, g] == pytest.approx(sum(js_distance_loop(list(flat[h, i]), list(flat[g, i]))
                                                   for i in range(n)), rel=1e-10, abs=1e-12)
    assert sums[5, 0] < 1e-6


def mds_reference(d: np.ndarray) -> np.ndarray:
    """Torgerson's MDS by the book: B = −½ J D² J with J formed, eigen-decomposition, top two axes."""
    k = len(d)
    j = np.eye(k) - np.ones((k, k)) / k
    b = -0.5 * j @ (d ** 2) @ j
    values, vectors = np.linalg.eig(b)
    order = np.argsort(values.real)[::-1][:2]
    return vectors[:, order].real * np.sqrt(np.maximum(values[order].real, 0))


def test_mds_recovers_points_of_a_plane():
    points = np.random.default_rng(3).normal(size=(9, 2)) * [3.0, 1.0]
    d = np.sqrt(((points[:, None] - points[None]) ** 2).sum(-1))
    embedding = classical_mds(d)
    recovered = np.sqrt(((embedding[:, None] - embedding[None]) ** 2).sum(-1))
    np.testing.assert_allclose(recovered, d, atol=1e-10)
    for axis in range(2):  # the sign rule: each axis's largest coordinate is positive
        assert embedding[np.abs(embedding[:, axis]).argmax(), axis] > 0


def test_mds_equals_the_reference_on_head_distances(corpus_file, tmp_path):
    result = run_job(JobSpec("toy", str(corpus_file), str(tmp_path / "job")), InProcess())
    d = result.summary.distance
    reference = mds_reference(d)
    reference *= np.sign(reference[np.abs(reference).argmax(axis=0), [0, 1]])
    np.testing.assert_allclose(result.arrays["embedding"], reference, atol=1e-10)
    assert np.abs(reference).max() > 1e-3


def test_punctuation_mask():
    texts = ["[CLS]", "hello", ",", "Ġ.", "##!", "▁«", "it's", "[SEP]", "...", "$", ""]
    mask = punctuation_mask(texts, np.array([True] + [False] * 6 + [True, False, False, False]))
    assert mask.tolist() == [False, False, True, True, True, True, False, False, True, False, False]


def folder_arrays(folder: Path) -> dict:
    arrays = {}
    for name in ("head_stats.npz", "head_clusters.npz", "qk_map.npz"):
        with np.load(folder / name) as data:
            arrays.update({f"{name}:{key}": data[key] for key in data.files})
    return arrays


def test_resume_equals_an_uninterrupted_run(corpus_file, tmp_path):
    whole = run_job(JobSpec("toy", str(corpus_file), str(tmp_path / "whole"), batch_size=6), InProcess())
    assert whole.computed == 9
    spec = JobSpec("toy", str(corpus_file), str(tmp_path / "resumed"), batch_size=6)
    run_job(spec, InProcess())
    for index in (2, 8):  # as if the job died before these two batches were saved
        (tmp_path / "resumed" / shard_name(index)).unlink()
    (tmp_path / "resumed" / "head_stats.npz").unlink()
    half = tmp_path / "resumed" / ".ae-half0000.tmp"  # a shard a killed job was writing, an hour ago
    half.write_bytes(b"half a shard")
    os.utime(half, (half.stat().st_mtime - 3600,) * 2)
    seen = []
    resumed = run_job(spec, InProcess(), progress=lambda *args: seen.append(args))
    assert resumed.computed == 2
    assert seen[0][:2] == (50 - 6 - 2, 50) and seen[-1][:2] == (50, 50) and seen[-1][3] == 8
    assert not (tmp_path / "resumed" / ".ae-half0000.tmp").exists()
    expected, got = folder_arrays(tmp_path / "whole"), folder_arrays(tmp_path / "resumed")
    assert expected.keys() == got.keys()
    for key in expected:
        np.testing.assert_array_equal(got[key], expected[key], err_msg=key)


def test_a_folder_of_another_job_is_refused(corpus_file, tmp_path):
    out = tmp_path / "job"
    run_job(JobSpec("toy", str(corpus_file), str(out), limit=20), InProcess())
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    other = tmp_path / "other.txt"
    other.write_text("A different corpus.\n", encoding="utf-8")
    for spec, differs in ((JobSpec("toy", str(corpus_file), str(out), limit=21), "texts"),
                          (JobSpec("toy", str(corpus_file), str(out), limit=20, ablate=frozenset({(0, 1)})), "ablate"),
                          (JobSpec("toy", str(other), str(out)), "texts_sha256"),
                          (JobSpec("toy", str(corpus_file), str(out), limit=20, batch_size=4), "batch_size")):
        with pytest.raises(EngineError, match=f"holds another job's results .*{differs}"):
            run_job(spec, InProcess())
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before  # nothing touched
    (out / "manifest.json").unlink()
    with pytest.raises(EngineError, match="without its manifest"):
        run_job(JobSpec("toy", str(corpus_file), str(out), limit=20), InProcess())


def test_texts_over_the_token_limit_are_skipped_and_counted(toy, corpus_file, tmp_path):
    long = sum(toy.tokenize(text).n > 8 for text in sentences())
    assert 0 < long < 50
    result = run_job(JobSpec("toy", str(corpus_file), str(tmp_path / "job"), max_tokens=8), InProcess())
    assert (result.summary.skipped, result.summary.texts) == (long, 50 - long)
    kept = [text for text in sentences() if toy.tokenize(text).n <= 8]
    np.testing.assert_allclose(result.summary.mean["self"], one_by_one(toy, kept)["self"].mean(axis=0), rtol=1e-12)


def write(tmp_path, data: bytes) -> str:
    path = tmp_path / "corpus.txt"
    path.write_bytes(data)
    return str(path)


def test_corpus_files_that_hold_no_text_are_refused(tmp_path):
    cases = [(b"", "is empty"), (b"\n \n\r\n", "is empty"), (b"text\x00\x01\x02binary", "is binary"),
             (b"x" * 10_000_000, "holds no text of at most 100,000 characters"),
             ("caf\u00e9 cr\u00e8me\nna\u00efve\n".encode("latin-1"), "is not UTF-8 text")]
    for data, message in cases:
        with pytest.raises(EngineError, match=message):
            read_corpus(write(tmp_path, data))
    with pytest.raises(EngineError, match="does not exist"):
        read_corpus(tmp_path / "missing.txt")
    with pytest.raises(EngineError, match="no line .* is a JSON object with a string 'text'"):
        read_corpus(write(tmp_path, b'{"body": "x"}\n[1, 2]\n'), field="text")


def test_utf16_and_utf32_files_are_named_not_called_binary(tmp_path):
    """Notepad's "Unicode" is UTF-16 with a byte-order mark: NUL bytes beside every ASCII letter."""
    text = "One text.\n小明喜欢苹果。\n"
    for data, encoding in ((text.encode("utf-16"), "UTF-16"), (b"\xfe\xff" + text.encode("utf-16-be"), "UTF-16"),
                           (text.encode("utf-32"), "UTF-32"), (b"\x00\x00\xfe\xff" + text.encode("utf-32-be"), "UTF-32")):
        with pytest.raises(EngineError, match=f"is {encoding} text, not UTF-8: save it as UTF-8"):
            read_corpus(write(tmp_path, data))
    assert read_corpus(write(tmp_path, text.encode("utf-8-sig"))).texts == ("One text.", "小明喜欢苹果。")


def test_lines_that_cannot_be_read_are_skipped_and_counted(tmp_path):
    data = ("\ufeffOne.\r\n" + "Two\u2028still two.\n").encode() + "caf\u00e9\n".encode("latin-1") \
        + b"y" * (MAX_TEXT_CHARS + 1) + b"\n\nThree.\n" + "\u00e9".encode("latin-1") + b"\n"
    corpus = read_corpus(write(tmp_path, data))
    assert corpus.texts == ("One.", "Two\u2028still two.", "Three.")
    assert corpus.skipped == {"encoding": 2, "long": 1, "json": 0}
    assert corpus.skipped_line() == "skipped 3 lines: 2 not UTF-8, 1 over 100,000 characters"
    jsonl = read_corpus(write(tmp_path, b'{"text": "A."}\n{"text": 3}\nnot json\n{"text": "B.", "id": 1}\n'), "text")
    assert jsonl.texts == ("A.", "B.") and jsonl.skipped["json"] == 2


def test_means_equal_single_sentence_tables_of_a_decoder_with_a_head_off(corpus_file, tmp_path):
    """A llama-style decoder (a tiny random GGUF: causal rows, byte-level pieces, its end token special)."""
    from engine.models import load_model, register_gguf
    from tests.tiny_gguf import write_tiny_gguf

    path = tmp_path / "tiny.gguf"
    write_tiny_gguf(path, "llama")
    name = register_gguf(path)
    model = load_model(name)
    ablate = frozenset({(0, 2)})
    result, expected = check_against_one_by_one(model, name, corpus_file, tmp_path / "job", ablate)
    assert model.facts.kind == "decoder" and expected["previous"].max() > 0
    plain = one_by_one(model, sentences(3))["entropy"][:, 1:]
    assert np.abs(plain - expected["entropy"][:3, 1:]).max() > 1e-6  # layer 1 sees head 0.2 switched off
    # the joint map of query head 1 pairs its queries after RoPE with the keys of its key/value head,
    # 1 // (4 query heads / 2 kv heads) = 0
    from engine.corpus.qk_map import joint_map

    names = ["blocks.0.attn.hook_rot_q", "blocks.0.attn.hook_rot_k"]
    caches = [model.run_with_cache(text, names, ablate=ablate)[1] for text in sentences()]
    q = np.concatenate([cache[names[0]][:, 1] for cache in caches])
    k = np.concatenate([cache[names[1]][:, 0] for cache in caches])
    saved = np.load(tmp_path / "job" / "qk_map.npz")
    np.testing.assert_allclose(saved["points"][1], joint_map(q, k), rtol=1e-4, atol=1e-4)


def test_joint_query_key_map_equals_a_float64_reference():
    """AttentionViz's normalisation by hand (keys moved to the queries' mean, both scaled to one mean
    norm keeping every q·k), then PCA by the covariance's eigenvectors; the map equals it up to signs."""
    from engine.corpus.qk_map import joint_map, normalise

    rng = np.random.default_rng(5)
    q = rng.normal(size=(30, 8)) * 2.0 + 1.0
    k = rng.normal(size=(30, 8)) * 0.5 - 3.0
    nq, nk = normalise(q, k)
    k_moved = np.array([row - k.mean(axis=0) + q.mean(axis=0) for row in k])
    mean_q = sum(math.sqrt(sum(x * x for x in row)) for row in q) / 30
    mean_k = sum(math.sqrt(sum(x * x for x in row)) for row in k_moved) / 30
    c = math.sqrt(mean_k / mean_q)
    np.testing.assert_allclose(nq, q * c, rtol=1e-12)
    np.testing.assert_allclose(nk, k_moved / c, rtol=1e-12)
    np.testing.assert_allclose(nq @ nk.T, q @ k_moved.T, rtol=1e-10)  # every dot product kept
    assert np.linalg.norm(nq, axis=1).mean() == pytest.approx(np.linalg.norm(nk, axis=1).mean(), rel=1e-12)
    both = np.concatenate([nq, nk])
    centred = both - both.mean(axis=0)
    values, vectors = np.linalg.eigh(centred.T @ centred)
    reference = centred @ vectors[:, np.argsort(values)[::-1][:2]]
    reference *= np.sign(reference[np.abs(reference).argmax(axis=0), [0, 1]])
    np.testing.assert_allclose(joint_map(q, k), reference, atol=1e-9)


def test_a_job_keeps_the_joint_map_of_its_first_texts(toy, corpus_file, tmp_path):
    from engine.corpus.qk_map import QK_SAMPLE_TEXTS, joint_map

    assert QK_SAMPLE_TEXTS >= 50
    run_job(JobSpec("toy", str(corpus_file), str(tmp_path / "job"), batch_size=8), InProcess())
    saved = np.load(tmp_path / "job" / "qk_map.npz")
    tokens = [toy.tokenize(text) for text in sentences()]
    assert saved["token"].tolist() == [piece.text for t in tokens for piece in t.tokens]
    assert saved["text_index"].tolist() == [i for i, t in enumerate(tokens) for _ in range(t.n)]
    assert saved["sentence"][-1] == sentences()[-1]
    n = sum(t.n for t in tokens)
    assert saved["points"].shape == (4, 2 * n, 2) and saved["points"].dtype == np.float32
    head = 3
    q = np.concatenate([toy.run_with_cache(text, ["blocks.0.attn.hook_q"])[1]["blocks.0.attn.hook_q"][:, head]
                        for text in sentences()])  # (N, d_head)
    k = np.concatenate([toy.run_with_cache(text, ["blocks.0.attn.hook_k"])[1]["blocks.0.attn.hook_k"][:, head]
                        for text in sentences()])
    np.testing.assert_allclose(saved["points"][head], joint_map(q, k), rtol=1e-5, atol=1e-5)
    # the t-SNE view: the first QK_TSNE_TOKENS tokens' queries then keys, from the same vectors the PCA view used
    from engine.corpus.qk_map import QK_TSNE_TOKENS, joint_tsne, normalise
    from engine.corpus.tsne import tsne

    m = min(n, QK_TSNE_TOKENS)
    assert n > QK_TSNE_TOKENS and saved["tsne"].shape == (4, 2 * m, 2) and saved["tsne"].dtype == np.float32
    shards = [read_shard(tmp_path / "job", index) for index in range(-(-len(sentences()) // 8))]
    q32 = np.concatenate([s["qk_queries"] for s in shards if "qk_queries" in s], axis=1)[head]
    k32 = np.concatenate([s["qk_keys"] for s in shards if "qk_keys" in s], axis=1)[head]
    np.testing.assert_array_equal(saved["tsne"][head], joint_tsne(q32, k32).astype(np.float32))
    nq, nk = normalise(q32, k32)  # scaled over all n tokens, then the first m queries and their m keys
    np.testing.assert_array_equal(joint_tsne(q32, k32), tsne(np.concatenate([nq[:m], nk[:m]])))
