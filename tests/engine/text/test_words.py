"""engine/text/words.py: pieces rolled up into words, and attention rolled up with them.

The oracle for roll_up is an explicit float64 loop over query and key pieces; words_of is
checked on hand-written pieces of every model's kind (toy tokens, WordPiece with [CLS]/[SEP],
SentencePiece with ▁ and <s>, byte-level fragments of a decoder).
"""
from __future__ import annotations

import numpy as np
import pytest

from engine.toy.compute import compute
from engine.toy.config import AttentionConfig
from engine.core.errors import EngineError
from engine.text.tokenize import Token
from engine.text.words import is_special, roll_up, words_of
from tests.shared_helpers import loop_roll_up


def random_attention(shape, seed=0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    logits = rng.normal(size=shape) * 2.0
    weights = np.exp(logits)
    return (weights / weights.sum(axis=-1, keepdims=True)).astype(np.float32)


def test_roll_up_equals_the_loop_and_rows_sum_to_one():
    attentions = random_attention((2, 3, 7, 7))
    word_index = np.array([0, 1, 1, 2, 3, 3, 3])
    rolled = roll_up(attentions, word_index)
    assert rolled.shape == (2, 3, 4, 4) and rolled.dtype == np.float32
    np.testing.assert_allclose(rolled, loop_roll_up(attentions, word_index), atol=2e-7)
    np.testing.assert_allclose(rolled.sum(axis=-1), 1.0, atol=1e-6)


def test_roll_up_is_not_a_sum_over_queries():
    # A word of two pieces whose rows differ: the word's row is their mean, not their sum or the first row.
    attentions = np.array([[0.5, 0.5, 0.0], [0.0, 0.0, 1.0], [0.2, 0.3, 0.5]])
    rolled = roll_up(attentions, np.array([0, 0, 1]))
    np.testing.assert_allclose(rolled, [[0.5, 0.5], [0.5, 0.5]])
    rolled = roll_up(attentions, np.array([0, 1, 1]))
    np.testing.assert_allclose(rolled, [[0.5, 0.5], [0.1, 0.9]])


def test_one_piece_per_word_is_the_identity():
    attentions = random_attention((4, 5, 5), seed=1)
    np.testing.assert_array_equal(roll_up(attentions, np.arange(5)), attentions)


def test_roll_up_refuses_mismatched_or_gappy_indices():
    attentions = random_attention((3, 3))
    with pytest.raises(EngineError):
        roll_up(attentions, np.array([0, 1]))
    with pytest.raises(EngineError):
        roll_up(attentions, np.array([0, 2, 2]))  # word 1 has no piece


def test_toy_engine_word_view_equals_the_piece_view():
    result = compute(AttentionConfig(text="小明喜欢苹果。The cat sat.", heads=2, d_model=16))
    words, word_index = words_of(result.config.text, result.tokens)
    assert words == tuple(t.text for t in result.tokens)
    np.testing.assert_array_equal(word_index, np.arange(len(result.tokens)))
    np.testing.assert_array_equal(roll_up(result.weights, word_index), result.weights)


def test_toy_engine_characters_become_jieba_words():
    result = compute(AttentionConfig(text="小明喜欢苹果", tokenizer="chars", heads=2, d_model=16))
    words, word_index = words_of(result.config.text, result.tokens)
    assert words == ("小明", "喜欢", "苹果")
    assert word_index.tolist() == [0, 0, 1, 1, 2, 2]
    rolled = roll_up(result.weights, word_index)
    np.testing.assert_allclose(rolled, loop_roll_up(result.weights, word_index), atol=2e-7)
    np.testing.assert_allclose(rolled.sum(axis=-1), 1.0, atol=1e-6)


def test_sentencepiece_chinese_pieces_roll_up_to_words():
    # e5's pieces of "小明喜欢苹果": ▁小 | 明 | 喜欢 | 苹果 with <s> … </s>
    text = "小明喜欢苹果"
    tokens = [Token("<s>", 0, 0), Token("▁小", 0, 1), Token("明", 1, 2), Token("喜欢", 2, 4),
              Token("苹果", 4, 6), Token("</s>", 6, 6)]
    words, word_index = words_of(text, tokens)
    assert words == ("<s>", "小明", "喜欢", "苹果", "</s>")
    assert word_index.tolist() == [0, 1, 1, 2, 3, 4]


def test_lone_metaspace_joins_the_next_word_and_a_long_piece_merges_words():
    text = "苹果发布了新手机"  # jieba: 苹果 | 发布 | 了 | 新 | 手机 (or 新手机)
    tokens = [Token("<s>", 0, 0), Token("▁", 0, 0), Token("苹果", 0, 2), Token("发布了", 2, 5),
              Token("新", 5, 6), Token("手机", 6, 8), Token("</s>", 8, 8)]
    words, word_index = words_of(text, tokens)
    assert words[:3] == ("<s>", "苹果", "发布了")  # one piece over jieba's 发布 and 了: one word
    assert word_index[:4].tolist() == [0, 1, 1, 2]
    assert words[-1] == "</s>" and "".join(words[1:-1]) == text


def test_english_wordpieces_and_punctuation():
    text = "I didn't eat the apples."
    tokens = [Token("[CLS]", 0, 0), Token("i", 0, 1), Token("didn", 2, 6), Token("'", 6, 7), Token("t", 7, 8),
              Token("eat", 9, 12), Token("the", 13, 16), Token("apple", 17, 22), Token("##s", 22, 23),
              Token(".", 23, 24), Token("[SEP]", 0, 0)]
    words, word_index = words_of(text, tokens)
    assert words == ("[CLS]", "I", "didn't", "eat", "the", "apples", ".", "[SEP]")
    assert word_index.tolist() == [0, 1, 2, 2, 2, 3, 4, 5, 5, 6, 7]


def test_specials_stay_their_own_words_even_side_by_side():
    text = "hi"
    tokens = [Token("<s>", 0, 0), Token("<s>", 0, 0), Token("▁hi", 0, 2), Token("</s>", 2, 2)]
    words, word_index = words_of(text, tokens)
    assert words == ("<s>", "<s>", "hi", "</s>")
    assert word_index.tolist() == [0, 1, 2, 3]
    assert is_special(Token("<|endoftext|>", 5, 5)) and is_special(Token("[CLS]", 0, 0))
    assert not is_special(Token("▁", 3, 3)) and not is_special(Token("Ġ", 0, 0))
    assert not is_special(Token("[UNK]", 0, 1))  # an unknown piece is text


def test_byte_fragments_of_a_decoder_join_their_character():
    # A byte-level BPE cuts 小 into two fragments with the same span; Ġ (a space) has none.
    text = "小明 喜欢"
    tokens = [Token("å°", 0, 1), Token("ı", 0, 1), Token("æĺİ", 1, 2), Token("Ġ", 3, 3),
              Token("åĸľ", 3, 4), Token("æ¬¢", 4, 5)]
    words, word_index = words_of(text, tokens)
    assert words == ("小明", "喜欢")
    assert word_index.tolist() == [0, 0, 0, 1, 1, 1]


def test_every_piece_has_a_word_and_indices_do_not_decrease():
    text = "  猫追老鼠, and the cat   ran!  "
    tokens = [Token("<s>", 0, 0), Token("▁", 2, 2), Token("猫", 2, 3), Token("追", 3, 4), Token("老鼠", 4, 6),
              Token(",", 6, 7), Token("▁and", 8, 11), Token("▁the", 12, 15), Token("▁c", 16, 17),
              Token("at", 17, 19), Token("▁ran", 22, 25), Token("!", 25, 26), Token("▁", 28, 28),
              Token("</s>", 28, 28)]
    words, word_index = words_of(text, tokens)
    assert len(word_index) == len(tokens)
    assert np.all(np.diff(word_index) >= 0) and set(word_index.tolist()) == set(range(len(words)))
    assert words == ("<s>", "猫", "追", "老鼠", ",", "and", "the", "cat", "ran", "!", "</s>")
    assert word_index[-2] == word_index[-3]  # the trailing ▁ joins the last word before it


@pytest.mark.slow
def test_minilm_pieces_roll_up_to_words(minilm_model):
    text = "Unbelievably, the tokenizer splits words."
    trace = minilm_model.run(text)
    words, word_index = words_of(text, trace.tokens)
    assert words == ("[CLS]", "Unbelievably", ",", "the", "tokenizer", "splits", "words", ".", "[SEP]")
    assert len(word_index) > len(words)  # some words are several pieces
    rolled = roll_up(trace.attentions, word_index)
    assert rolled.shape == (6, 12, len(words), len(words))
    np.testing.assert_allclose(rolled.sum(axis=-1), 1.0, atol=1e-5)
    np.testing.assert_allclose(rolled[2, 3], loop_roll_up(trace.attentions[2, 3], word_index), atol=1e-6)
