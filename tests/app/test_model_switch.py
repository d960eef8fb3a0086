"""The controller's pieces of a model switch, without a window: the focused word found again in
another tokenizer's pieces, and the model's loading messages in the interface language."""
from __future__ import annotations

from app.controller import same_token


def test_the_focus_follows_the_same_occurrence_of_the_word_into_another_tokenizer():
    smollm2 = ["The", " animal", " crossed", " the", " street", " and", " the", " road"]
    minilm = ["[CLS]", "the", "animal", "crossed", "the", "street", "and", "the", "road", "[SEP]"]
    e5 = ["<s>", "▁The", "▁animal", "▁crossed", "▁the", "▁street", "▁and", "▁the", "▁road", "</s>"]
    assert same_token(smollm2, 6, minilm, 0) == 7  # the second "the" (the first is "The"), not the first
    assert same_token(smollm2, 1, e5, 0) == 2
    assert same_token(minilm, 0, smollm2, 3) == 3  # [CLS] has no counterpart: the fallback
    assert same_token(minilm, 9, e5, 9) == 9
    assert same_token(["a", "b"], 5, ["b"], 0) == 0  # a focus outside the tokens


def test_loading_messages_are_translated_with_their_values(qapp):
    from PySide6.QtCore import QCoreApplication, QTranslator

    from app.shell.model_bar import progress_text

    class Upper(QTranslator):
        def translate(self, context, text, disambiguation=None, n=-1):  # noqa: D401 - Qt's signature
            return text.upper() if context == "MainWindow" else ""

    translator = Upper()
    QCoreApplication.installTranslator(translator)
    try:
        assert progress_text("layer 3 of 30") == "LAYER 3 OF 30"
        assert progress_text("reading blk.0.attn_q.weight") == "READING blk.0.attn_q.weight"
        assert progress_text("ready") == "READY"
        assert progress_text("something new") == "something new"
    finally:
        QCoreApplication.removeTranslator(translator)
