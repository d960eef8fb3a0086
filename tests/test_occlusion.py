"""Leave-one-out (engine.analysis.occlusion) against runs of the model without the token, made here
independently: the decoder without its KV cache, the encoder from the text with the word deleted."""
from __future__ import annotations

import numpy as np
import pytest

from engine.core.errors import EngineError
from engine.analysis.occlusion import OCCLUSION_TOKENS, answer_token, cosine, occlusion, probability

SENTENCE = "The animal didn't cross the street because it was too tired."


@pytest.fixture(scope="module")
def decoder(smollm2_model):
    return smollm2_model  # loaded once per test process (tests/conftest.py)


def _mean(trace) -> np.ndarray:
    return trace.hidden_states[-1].astype(np.float64).mean(axis=0)


def test_encoder_equals_text_without_the_word(minilm):
    result = occlusion(minilm, SENTENCE)
    assert result.measure == "cosine" and result.complete
    full = _mean(minilm.run(SENTENCE))
    # "animal" (2), "street" (8), "tired" (13): deleting the word from the text removes exactly that piece
    for position, text in ((2, SENTENCE.replace("animal ", "")), (8, SENTENCE.replace("street ", "")),
                           (13, SENTENCE.replace(" tired", ""))):
        trace = minilm.run(text)
        assert len(trace.input_ids) == len(result.tokens) - 1
        expected = float(np.dot(full, _mean(trace)) / (np.linalg.norm(full) * np.linalg.norm(_mean(trace))))
        assert result.values[position] == pytest.approx(expected, abs=1e-5), result.tokens[position]
    assert result.values.shape == (len(result.tokens),)
    assert (result.values <= 1 + 1e-9).all() and result.values.min() < 0.95  # some token matters


def test_decoder_equals_runs_without_cache(decoder):
    prompt = "The Eiffel Tower is in the city of"
    result = occlusion(decoder, prompt, " Paris")
    ids = decoder.tokenize(prompt).input_ids
    target = answer_token(decoder, " Paris").id
    base = decoder.run_ids(ids, use_cache=False)
    assert result.baseline == pytest.approx(probability(decoder.next_token_logits(base), target), abs=1e-6)
    for k in (0, 2, len(ids) - 1):  # first, middle, the last token (the position read moves)
        trace = decoder.run_ids(np.delete(np.asarray(ids), k), use_cache=False)
        expected = probability(decoder.next_token_logits(trace), target)
        assert result.values[k] == pytest.approx(expected, abs=1e-5)
    # "Tower" matters more than "the"
    assert result.values[3] > result.values[2] or result.values[2] < 0.1


def test_multi_token_answer_uses_the_first(decoder):
    answer = answer_token(decoder, " Parisians of old")
    assert answer.pieces > 1 and answer.note.startswith("the answer")
    with pytest.raises(EngineError, match="answer is empty"):
        answer_token(decoder, "")


def test_decoder_needs_answer_and_refuses_long(decoder):
    with pytest.raises(EngineError, match="needs --answer"):
        occlusion(decoder, "Hello there")
    with pytest.raises(EngineError, match=str(OCCLUSION_TOKENS)):
        occlusion(decoder, "word " * (OCCLUSION_TOKENS + 5), " Paris")


def test_cancel_leaves_the_rest_nan(minilm):
    calls = []
    result = occlusion(minilm, SENTENCE, cancelled=lambda: len(calls) >= 3, progress=lambda d, t: calls.append(d))
    assert not result.complete
    assert np.isfinite(result.values[:3]).all() and np.isnan(result.values[3:]).all()


def test_helpers():
    assert cosine(np.array([1.0, 0.0]), np.array([0.0, 2.0])) == 0.0
    logits = np.array([1.0, 2.0, 3.0])
    assert probability(logits, 2) == pytest.approx(np.exp(3) / np.exp(logits).sum())
