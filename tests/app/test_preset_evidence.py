"""The decoder minimal pair's verdict is graded by the odds answer : rival after each sentence (SmolLM2's
p(animal) 0.0171 → 0.0211 and p(street) 0.0003 → 0.0011 were called "does not tell the two apart",
although the odds fall from 50:1 to 19:1)."""
from __future__ import annotations

from app.preset_evidence import DECODER_TELLS, decoder_verdict


def test_odds_that_fall_but_stay_above_one_are_a_shift_not_a_resolution():
    text = decoder_verdict((0.0171, 0.0211), (0.000338, 0.00109), "animal", "street")
    assert "from 51:1 to 19:1" in text and "towards “street”" in text and "shift" in text


def test_odds_that_cross_one_are_the_right_noun_in_each_sentence():
    assert decoder_verdict((0.30, 0.05), (0.10, 0.20), "animal", "street") == DECODER_TELLS


def test_odds_that_do_not_fall_say_no_move():
    text = decoder_verdict((0.02, 0.03), (0.001, 0.001), "animal", "street")
    assert "20:1 and 30:1" in text and "does not move" in text
