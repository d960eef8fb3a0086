"""SmolLM2 bugs that once survived the suite, each checked against a number computed
here: sampling draws from the distribution (not always the argmax), the logit lens caption names
the first layer where the final answer is top-1, and the command line's --ablate reaches the decoder.
(The untied output head and the one-digit-per-token pre-tokenizer are in tests/engine/models/test_gguf_tiny.py.)
"""
from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("gguf")
pytest.importorskip("tokenizers")

from tests.app.models.test_decoder_window import CAPITAL, show, wait_for  # noqa: E402

pytestmark = pytest.mark.slow  # SmolLM2's forward passes and its window


def _softmax64(logits) -> np.ndarray:
    z = np.asarray(logits, dtype=np.float64)
    z = np.exp(z - z.max())
    return z / z.sum()


def test_sampling_draws_from_the_distribution_not_the_argmax(smollm2_model):
    """generated_text (the window's Generate job), sampled with 40 fixed seeds at temperature 1:
    " Paris" has p ≈ 0.77, so about 31 of 40 draws, and some other tokens (always " Paris" is the
    greedy bug); the greedy job gives " Paris" every time."""
    from app.jobs.decoder_view import generated_text

    trace = smollm2_model.run(CAPITAL, use_cache=False)
    p = _softmax64(trace.next_token_logits)
    best = int(np.argmax(p))
    best_text = smollm2_model.tokenizer.display([best])[0]
    assert best_text == " Paris" and 0.6 < p[best] < 0.9
    draws = [generated_text("smollm2", trace, False, 1.0, 0, 1.0, seed)[len(CAPITAL):] for seed in range(40)]
    hits = draws.count(best_text)
    # binomial(40, p): mean 40p, sd √(40p(1−p)) ≈ 2.7; ±4 sd is a bound no seed set crosses by chance
    sd = (40 * p[best] * (1 - p[best])) ** 0.5
    assert abs(hits - 40 * p[best]) < 4 * sd, (hits, draws)
    assert hits < 40, "sampling always appended the most likely token"
    assert draws == [generated_text("smollm2", trace, False, 1.0, 0, 1.0, seed)[len(CAPITAL):] for seed in range(40)]
    assert generated_text("smollm2", trace, True, 1.0, 0, 1.0, 3) == CAPITAL + best_text


def test_the_sample_button_samples_and_the_greedy_button_does_not(window, smollm2_model, monkeypatch):
    import app.jobs.decoder_view as decoder_mode

    calls = []
    real = decoder_mode.generated_text

    def recording(name, trace, greedy, *rest):
        calls.append(greedy)
        return real(name, trace, greedy, *rest)

    monkeypatch.setattr(decoder_mode, "generated_text", recording)
    show(window, "smollm2", CAPITAL)
    panel = window.panel("next")
    wait_for(lambda: panel.sample_button.isEnabled())
    panel.sample_button.click()
    wait_for(lambda: len(calls) == 1 and window.controller.config.text != CAPITAL and window.controller.is_idle())
    window.controller.undo()
    wait_for(lambda: window.controller.config.text == CAPITAL and window.controller.is_idle())
    wait_for(lambda: panel.greedy_button.isEnabled())
    panel.greedy_button.click()
    wait_for(lambda: len(calls) == 2 and window.controller.config.text != CAPITAL and window.controller.is_idle())
    assert calls == [False, True]


@pytest.mark.parametrize("position", [1, 2])
def test_lens_caption_names_the_first_layer_where_the_answer_is_top_1(window, smollm2_model, position):
    """Position 1 (“capital”): top-1 from layer 19, most probable at layer 26; position 2: top-1
    at layer 1, then not again before 24. The caption must name the first such layer."""
    show(window, "smollm2", CAPITAL)
    panel = window.panel("lens")
    trace = window.controller.snapshot.bert.trace
    lens = smollm2_model.logit_lens(trace, position, 5)
    first = next(row for row in range(lens.top_ids.shape[0]) if lens.top_ids[row, 0] == lens.final_id)
    highest = int(np.argmax(lens.final_probability))
    assert first != highest, "this position must tell the two apart"
    stays = max(row for row in range(lens.top_ids.shape[0]) if lens.top_ids[row, 0] != lens.final_id) + 1
    window.controller.select(focus=position)
    wait_for(lambda: panel.value is not None and panel.value["trace"] is trace and panel.value["position"] == position)
    caption = panel.note.text()
    assert f"after layer {first}." in caption, caption
    assert f"after layer {highest}." not in caption and (stays == first or f"after layer {stays}." not in caption)


def test_command_line_ablate_switches_a_decoder_head_off(tmp_path, smollm2_model):
    """`export --model smollm2 --ablate 23.4` writes the ablated run: layers 0 … 23 attend as
    before, the later ones differently, every array as the engine's own ablated run."""
    from cli import commands as cli

    text = "The capital of France is"
    out = tmp_path / "ablated.npz"
    assert cli.main(["main.py", "export", "--model", "smollm2", "--ablate", "23.4", "--text", text,
                     "--out", str(out)]) == 0
    plain = smollm2_model.run(text, use_cache=False)
    ablated = smollm2_model.run(text, ablate=frozenset({(23, 4)}), use_cache=False)
    with np.load(out, allow_pickle=False) as data:
        attentions = data["attentions"]
    np.testing.assert_allclose(attentions[:24], plain.attentions[:24], atol=1e-6)
    assert not np.allclose(attentions[24:], plain.attentions[24:], atol=1e-6), "--ablate was ignored"
    np.testing.assert_allclose(attentions, ablated.attentions, atol=1e-6)
