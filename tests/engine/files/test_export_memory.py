"""What an export and the window hold beside the trace, counted before computing.

The export wrote a SmolLM2 trace at 1,245 tokens with a 6.2 GB peak for a 2 GiB budget: the word
view was rolled up whole ((L, H, n, w) and (L, H, w, w) at once) and np.savez got every array
first. The checks here: the budget arithmetic against sums written out by hand from the shapes
(not by calling the estimate), the memory the writer really allocates (tracemalloc sees NumPy's
buffers) against that arithmetic, the file's word view against a float64 loop, and the window's
decoder comparison leaving no whole trace behind.
"""
from __future__ import annotations

import tracemalloc

import numpy as np
import pytest

from engine.core.errors import EngineError
from engine.core.memory import EXPORT_FIXED_BYTES, check_export_budget, check_window_budget, word_view_bytes
from engine.files.export import Blocks, word_view, write_npz
from engine.text.tokenize import Token
from tests.shared_helpers import loop_roll_up


def pieces(words: int, split_every: int = 3) -> tuple[str, list[Token]]:
    """A text of ``words`` words; every ``split_every``-th word is cut into two pieces."""
    text, tokens = "", []
    for i in range(words):
        word = f"word{i}"
        start = len(text) + (1 if text else 0)
        text += (" " if text else "") + word
        if i % split_every == 0:
            tokens += [Token(word[:2], start, start + 2), Token(word[2:], start + 2, start + len(word))]
        else:
            tokens.append(Token(word, start, start + len(word)))
    return text, tokens


def attention(rng, leading: tuple[int, ...], n: int) -> np.ndarray:
    raw = rng.random((*leading, n, n)).astype(np.float32)
    return raw / raw.sum(axis=-1, keepdims=True)


def test_export_budget_is_the_hand_count():
    # n = 10 pieces, w = 7 words, 9 heads, a trace of 1,000 bytes: membership (n, w) and averages
    # (w, n) float32 = 8·70 = 560; one layer's A·M (9, 10, 7) and result (9, 7, 7) float32 =
    # 4·9·(70 + 49) = 4,284; plus the fixed 16 MiB for names, spans and the writer.
    total = 1000 + 560 + 4284 + 16 * 1024 * 1024
    assert check_export_budget(10, 1000, 7, 9, budget=total) == total
    with pytest.raises(EngineError) as refused:
        check_export_budget(10, 1000, 7, 9, budget=total - 1)
    assert refused.value.values["n"] == 10 and refused.value.values["words"] == 7
    assert "over the" in str(refused.value) and "shorten the text" in str(refused.value)


def test_window_budget_holds_two_computations():
    check_window_budget(5, 1000, budget=2000)
    with pytest.raises(EngineError) as refused:
        check_window_budget(5, 1000, budget=1999, longest=lambda: 4)
    assert refused.value.values["longest"] == 4


def test_the_writer_holds_one_layer_of_the_word_view(tmp_path):
    """Fails if the export rolls the word view up whole again, or copies arrays before writing."""
    rng = np.random.default_rng(0)
    layers, heads = 8, 4
    text, tokens = pieces(450)  # 600 pieces, 450 words
    n = len(tokens)
    attentions = attention(rng, (layers, heads), n)  # 46 MB, made before measuring (the trace)
    hidden = rng.standard_normal((layers + 1, n, 64)).astype(np.float32)
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        before = tracemalloc.get_traced_memory()[0]
        arrays = {"attentions": attentions, "hidden_states": hidden, **word_view(text, tokens, attentions)}
        with open(tmp_path / "t.npz", "wb") as stream:
            write_npz(stream, arrays)
        peak = tracemalloc.get_traced_memory()[1] - before
    finally:
        tracemalloc.stop()
    words = len(arrays["words"])
    assert words == 450
    whole = layers * heads * words * words * 4  # the word view held whole: 26 MB
    allowed = word_view_bytes(n, words, heads) + 2 * 1024**2  # one layer: 4.3 + 3.2 MB, M 2.2 MB, + names and zip
    assert peak <= allowed < whole, (peak, allowed, whole)
    with np.load(tmp_path / "t.npz") as saved:
        np.testing.assert_array_equal(saved["attentions"], attentions)
        np.testing.assert_array_equal(saved["hidden_states"], hidden)
        assert saved["word_attentions"].shape == (layers, heads, words, words)
        assert saved["word_attentions"].dtype == np.float32


def test_the_written_word_view_is_the_loop_roll_up(tmp_path):
    rng = np.random.default_rng(1)
    text, tokens = pieces(7)  # 10 pieces, 7 words
    attentions = attention(rng, (3, 2), len(tokens))
    with open(tmp_path / "t.npz", "wb") as stream:
        write_npz(stream, {"attentions": attentions, **word_view(text, tokens, attentions)})
    with np.load(tmp_path / "t.npz") as saved:
        np.testing.assert_array_equal(saved["word_index"], [0, 0, 1, 2, 3, 3, 4, 5, 6, 6])
        np.testing.assert_allclose(saved["word_attentions"], loop_roll_up(attentions, saved["word_index"]), atol=2e-7)
        np.testing.assert_array_equal(saved["words"], [f"word{i}" for i in range(7)])


def test_blocks_that_do_not_fill_their_shape_are_refused(tmp_path):
    short = Blocks((3, 2), np.float32, lambda: iter([np.zeros((2, 2), np.float32)]))
    with open(tmp_path / "t.npz", "wb") as stream, pytest.raises(EngineError, match="4 numbers written"):
        write_npz(stream, {"x": short})


@pytest.fixture(scope="module")
def tiny_decoder(tmp_path_factory):
    from engine.models.decoder import load_gguf
    from tests.tiny_gguf import write_tiny_gguf

    path = tmp_path_factory.mktemp("gguf") / "tiny.gguf"
    write_tiny_gguf(path, "llama")
    return load_gguf(path)


def test_decoder_export_is_refused_exactly_at_the_hand_count(tiny_decoder):
    from cli.commands import check_decoder_export

    c = tiny_decoder.config
    text = " the cat sat on the mat"
    n = len(tiny_decoder.tokenize(text).input_ids)
    words = 6  # the, cat, sat, on, the, mat
    L, H, kv, dk, d = c.num_layers, c.num_heads, c.num_kv_heads, c.head_dim, c.hidden_size
    trace = 4 * (L * H * n * n + (L + 1) * n * d + L * 2 * H * n * dk + L * 2 * kv * n * dk + c.vocab_size)
    view = 8 * n * words + 4 * H * (n * words + words * words)
    total = trace + view + EXPORT_FIXED_BYTES
    assert check_decoder_export(tiny_decoder, text, budget=total) == total
    with pytest.raises(EngineError, match="over the"):
        check_decoder_export(tiny_decoder, text, budget=total - 1)


def test_the_cli_refuses_an_export_that_does_not_fit(tmp_path, monkeypatch, capsys):
    """The forward pass alone fits; with the word view it does not: exit 2, no file, the sizes named."""
    from cli import commands as cli
    from engine.models import register_gguf
    from engine.models.llama import estimate_forward_bytes
    from tests.tiny_gguf import write_tiny_gguf

    path = tmp_path / "tiny.gguf"
    write_tiny_gguf(path, "llama")
    name = register_gguf(str(path))
    text = " the cat sat on the mat"
    import engine.core.memory as memory

    from engine.models.decoder import load_gguf

    model = load_gguf(path)
    n = len(model.tokenize(text).input_ids)
    forward = estimate_forward_bytes(n, model.config)
    assert forward < EXPORT_FIXED_BYTES  # a budget between the two: the forward fits, the export does not
    monkeypatch.setattr(memory, "DEFAULT_MEMORY_BUDGET", forward + 1024)
    out = tmp_path / "x.npz"
    assert cli.main(["main.py", "export", "--model", name, "--text", text, "--out", str(out)]) == 2
    assert not out.exists()
    assert "memory budget" in capsys.readouterr().err


# ---------------------------------------------------------------- the window (app side, no Qt)


def test_window_check_is_the_hand_count(tiny_decoder):
    from app.jobs.window_memory import check_window_memory

    c = tiny_decoder.config
    n = 6
    L, H, kv, dk, d, ff = c.num_layers, c.num_heads, c.num_kv_heads, c.head_dim, c.hidden_size, c.intermediate_size
    kept = L * H * n * n + (L + 1) * n * d + L * 2 * (H + kv) * n * dk + c.vocab_size
    temporary = 2 * H * n * n + 2 * n * ff + n * (H + 2 * kv) * dk * 2 + 6 * n * d  # the forward's, all positions new
    view = 4 * (3 * H * n * n + H * n * n + n * n + 12 * n * d) + n * n  # the layer view (n < 1024)
    each = 4 * (kept + temporary) + view
    assert check_window_memory(tiny_decoder, n, budget=2 * each) == 2 * each
    with pytest.raises(EngineError) as refused:
        check_window_memory(tiny_decoder, n, budget=2 * each - 1)
    assert refused.value.values["longest"] == n - 1  # the budget is one byte short for n; n − 1 needs less


def test_the_decoder_comparison_keeps_no_trace(tmp_path):
    """Failed before: the comparison kept whole decoder traces (two cached, one as the KV cache)."""
    from app.jobs import trained as minilm_mode
    from engine.models import cache as engine_cache
    from app.pretrained import take_pretrained_snapshot
    from engine.models import register_gguf
    from tests.tiny_gguf import write_tiny_gguf

    path = tmp_path / "tiny.gguf"
    write_tiny_gguf(path, "llama", seed=5)
    name = register_gguf(str(path))
    shown_text, other = " the cat sat on the mat", " a cat sat on the mat"
    try:
        shown = take_pretrained_snapshot(name, shown_text, 0)
        model = minilm_mode.model(name)
        on_screen = minilm_mode.shown_traces[name]
        compared = minilm_mode.compare_texts(name, shown_text, other)
        # the KV cache of the next keystroke is still the trace on screen, not sentence B's
        assert minilm_mode.shown_traces[name] is on_screen
        assert not [key for key in engine_cache._traces if key[0] == name]  # no decoder trace cached
        b = model.run(other, use_cache=False)
        for text, i, j in compared["pairs"]:  # the cosines are of the two texts' own hidden states
            for layer in range(on_screen.num_layers + 1):
                x = on_screen.hidden_states[layer, i].astype(np.float64)
                y = b.hidden_states[layer, j].astype(np.float64)
                expected = x @ y / (np.linalg.norm(x) * np.linalg.norm(y))
                assert abs(compared["cosines"][compared["pairs"].index((text, i, j)), layer] - expected) < 1e-5
        assert compared["pairs"]
        del shown
    finally:
        engine_cache.release(name)


def test_a_decoder_json_export_is_refused_before_loading(tmp_path, monkeypatch, capsys):
    """It loaded SmolLM2 (0.7 GB) before saying a decoder's trace is written as .npz."""
    from cli import commands as cli
    from engine.models import ModelEntry

    def no_load(self, progress=None):
        raise AssertionError("the model was loaded")

    monkeypatch.setattr(ModelEntry, "load", no_load)
    out = tmp_path / "x.json"
    assert cli.main(["main.py", "export", "--model", "smollm2", "--text", "hello", "--out", str(out)]) == 2
    assert "written as .npz" in capsys.readouterr().err and not out.exists()


def test_a_decoder_trace_on_screen_is_not_cached_again(tmp_path):
    """Ranking heads or finding the strongest head on the text on screen ran and cached its whole
    trace a second time (a third trace during the next edit)."""
    from app.jobs import trained as minilm_mode
    from engine.models import cache as engine_cache
    from app.pretrained import take_pretrained_snapshot
    from engine.models import register_gguf
    from tests.tiny_gguf import write_tiny_gguf

    path = tmp_path / "tiny.gguf"
    write_tiny_gguf(path, "llama", seed=6)
    name = register_gguf(str(path))
    text = " the cat sat on the mat"
    try:
        take_pretrained_snapshot(name, text, 0)
        assert minilm_mode.trace(name, text) is minilm_mode.shown_traces[name]
        assert not [key for key in engine_cache._traces if key[0] == name]
    finally:
        engine_cache.release(name)


def test_write_npz_reads_back_as_np_savez_does(tmp_path):
    """Every kind an export holds: float32, complex, big-endian, bool, 0-d, empty, strings, a transposed view."""
    arrays = {"f": np.arange(12, dtype=np.float32).reshape(3, 4), "c": np.array([1 + 2j, 3j], np.complex64),
              "be": np.arange(5, dtype=">f4"), "b": np.array([True, False]), "z": np.array(2.5),
              "e": np.zeros((0, 3), np.float32), "s": np.array(["小明", "apple"]), "t": np.arange(6.0).reshape(2, 3).T}
    with open(tmp_path / "a.npz", "wb") as stream:
        write_npz(stream, arrays)
    np.savez(tmp_path / "b.npz", **arrays)
    with np.load(tmp_path / "a.npz") as ours, np.load(tmp_path / "b.npz") as numpys:
        assert sorted(ours.files) == sorted(numpys.files)
        for name in arrays:
            assert ours[name].dtype == numpys[name].dtype and ours[name].shape == numpys[name].shape, name
            np.testing.assert_array_equal(ours[name], numpys[name])


def test_decoder_view_cosines_layer_by_layer(tiny_decoder):
    """DecoderView made a float64 copy of every hidden state at once (180 MB at 1,245 tokens); now one
    layer at a time: the same cosines as a loop over positions."""
    from app.jobs.decoder_view import DecoderView

    trace = tiny_decoder.run(" the cat sat on the mat", use_cache=False)
    view = DecoderView(trace)
    h = trace.hidden_states.astype(np.float64)
    for layer in range(h.shape[0]):
        for i in range(trace.n):
            x, y = h[layer, i], h[0, i]
            assert abs(view.cosine_to_layer0[layer, i] - x @ y / (np.linalg.norm(x) * np.linalg.norm(y))) < 1e-6
    assert view.cosine_to_layer0.dtype == np.float32
