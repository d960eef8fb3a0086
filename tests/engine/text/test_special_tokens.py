"""Special tokens come from the model's own tokenizer (ModelFacts.special_tokens), not from lists in
the engine: the words view, the head statistics' mask and find_token all take the model's set, and
the default (pieces the tokenizer gave a name but no characters) agrees with it on every bundled model."""
from __future__ import annotations

import pytest

from engine.analysis.head_stats import special_mask
from engine.analysis.meaning import find_token
from engine.text.tokenize import Token
from engine.text.words import is_special, special_of, words_of


def test_a_name_typed_in_the_text_is_special_only_when_the_model_says_so():
    text = "a [CLS] b"
    tokens = [Token("a", 0, 1), Token("[CLS]", 2, 7), Token("b", 8, 9)]  # "[CLS]" typed, with characters
    assert not is_special(tokens[1]) and is_special(tokens[1], frozenset({"[CLS]"}))
    words, _ = words_of(text, tokens, frozenset({"[CLS]"}))
    assert "[CLS]" in words
    assert special_mask(["a", "[CLS]", "b"], frozenset({"[CLS]"})).tolist() == [False, True, False]
    assert special_mask(["a", "[CLS]", "b"], frozenset()).tolist() == [False, False, False]  # the toy has none
    assert find_token(["[CLS]", "cls"], "[CLS]") == 0  # not the model's: a word like any other
    with pytest.raises(Exception):
        find_token(["[CLS]"], "[CLS]", special_tokens=frozenset({"[CLS]"}))


@pytest.mark.slow  # every bundled model
@pytest.mark.parametrize("name", ["minilm_model", "e5_model", "smollm2_model"])
def test_the_default_agrees_with_each_models_tokenizer(name, request):
    model = request.getfixturevalue(name)
    trace = model.run("The animal didn't cross the street because it was tired.")
    facts = model.facts.special_mask(trace.token_texts)
    assert special_of(trace.tokens).tolist() == facts.tolist()
    assert special_of(trace.tokens, model.facts.special_tokens).tolist() == facts.tolist()
    if model.facts.kind == "encoder":  # [CLS] … [SEP], <s> … </s>
        assert facts[0] and facts[-1] and not facts[1:-1].any()
