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


@pytest.mark.slow
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


@pytest.mark.slow
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


@pytest.mark.slow
def test_multi_token_answer_uses_the_first(decoder):
    answer = answer_token(decoder, " Parisians of old")
    assert answer.pieces > 1 and answer.note.startswith("the answer")
    with pytest.raises(EngineError, match="answer is empty"):
        answer_token(decoder, "")


@pytest.mark.slow
def test_decoder_needs_answer_and_refuses_long(decoder):
    with pytest.raises(EngineError, match="needs --answer"):
        occlusion(decoder, "Hello there")
    with pytest.raises(EngineError, match=str(OCCLUSION_TOKENS)):
        occlusion(decoder, "word " * (OCCLUSION_TOKENS + 5), " Paris")


@pytest.mark.slow
def test_cancel_leaves_the_rest_nan(minilm):
    calls = []
    result = occlusion(minilm, SENTENCE, cancelled=lambda: len(calls) >= 3, progress=lambda d, t: calls.append(d))
    assert not result.complete
    assert np.isfinite(result.values[:3]).all() and np.isnan(result.values[3:]).all()


def test_helpers():
    assert cosine(np.array([1.0, 0.0]), np.array([0.0, 2.0])) == 0.0
    logits = np.array([1.0, 2.0, 3.0])
    assert probability(logits, 2) == pytest.approx(np.exp(3) / np.exp(logits).sum())


HEADS_OFF = frozenset((0, h) for h in range(5))  # heads 0.0 … 0.4


@pytest.mark.slow
def test_decoder_with_heads_off_equals_the_ablated_runs(decoder):
    """Switched-off heads are off in every run: the baseline is the ablated run's p(answer) (what
    Next token and `export --ablate` show), each bar the ablated run without that token."""
    from engine.analysis.occlusion import leave_one_out
    from engine.analysis.request import RunRequest

    prompt = "The Eiffel Tower is in the city of"
    seen = []
    result = leave_one_out(decoder, RunRequest(text=prompt, ablate=HEADS_OFF, answer=" Paris"),
                           partial=lambda r: seen.append(int(np.isfinite(r.values).sum())))
    ids = np.asarray(decoder.tokenize(prompt).input_ids)
    target = answer_token(decoder, " Paris").id
    base = decoder.run_ids(ids, ablate=HEADS_OFF, use_cache=False)
    assert result.baseline == pytest.approx(probability(base.next_token_logits, target), abs=1e-6)
    plain = probability(decoder.run_ids(ids, use_cache=False).next_token_logits, target)
    assert abs(result.baseline - plain) > 0.05  # the heads matter: the comparison is not vacuous
    for k in (0, 3, len(ids) - 1):
        trace = decoder.run_ids(np.delete(ids, k), ablate=HEADS_OFF, use_cache=False)
        assert result.values[k] == pytest.approx(probability(trace.next_token_logits, target), abs=1e-5)
    assert seen == list(range(1, len(ids)))  # one partial result a token, the last is the result itself


@pytest.mark.slow
def test_encoder_with_heads_off_equals_the_ablated_runs(minilm):
    from engine.analysis.occlusion import leave_one_out, without
    from engine.analysis.request import RunRequest

    off = frozenset({(1, 3), (4, 0)})
    result = leave_one_out(minilm, RunRequest(text=SENTENCE, ablate=off))
    tokenized = minilm.tokenize(SENTENCE)
    full = _mean(minilm.run(tokenized, ablate=off))
    for k in (2, 8):
        rest = _mean(minilm.run(without(tokenized, k), ablate=off))
        expected = float(np.dot(full, rest) / (np.linalg.norm(full) * np.linalg.norm(rest)))
        assert result.values[k] == pytest.approx(expected, abs=1e-6)
    assert np.abs(result.values - occlusion(minilm, SENTENCE).values).max() > 1e-4


@pytest.mark.slow
def test_heads_the_model_lacks_are_one_line(minilm):
    from engine.analysis.occlusion import leave_one_out
    from engine.analysis.request import RunRequest

    with pytest.raises(EngineError) as caught:
        leave_one_out(minilm, RunRequest(text=SENTENCE, ablate=frozenset({(9, 0)})))
    assert "\n" not in str(caught.value)
