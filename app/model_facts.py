"""A pretrained model's facts for the input panel, and the e5 prefix bar.

The facts come from the loaded model's declared ModelFacts (layers, heads, d_model, positions,
tokenizer note; engine/models/contract.py) and its registry entry (title, licence, credit): no
model is described by hand here. A model whose registry line lists ``prefixes`` (e5: "passage: ",
"query: ") gets the :class:`PrefixBar`: one click puts the prefix in front of the sentence.
"""
from __future__ import annotations

from PySide6.QtCore import QCoreApplication
from PySide6.QtWidgets import QHBoxLayout, QLabel, QPushButton, QVBoxLayout, QWidget

from engine.models import model_info

from .text import fill


def QT_TRANSLATE_NOOP(context: str, text: str) -> str:  # noqa: N802 - the marker lupdate looks for
    return text


# the engine modules' TOKENIZER_NOTE texts, for lupdate (the engine cannot call Qt)
TOKENIZER_NOTES = (
    QT_TRANSLATE_NOOP("Model", "WordPiece tokenizer (English, lower case)"),
    QT_TRANSLATE_NOOP("Model", "SentencePiece unigram tokenizer (XLM-R, 250,002 pieces, about 100 languages, cased)"),
)


def prefixes_of(name: str) -> tuple[str, ...]:
    """The text prefixes model ``name`` was trained with (() for most models): its registry line."""
    return model_info(name).prefixes


def model_facts(snapshot) -> str:
    """The input panel's description of the pretrained model that made ``snapshot`` (its declared
    engine.models.contract.ModelFacts)."""
    entry = model_info(snapshot.model)
    facts = snapshot.facts
    translate = QCoreApplication.translate
    return fill(translate(
        "ModelFacts",
        "%1 (trained weights, %2 licence): %4 layers × %5 heads, d_model %6 (d_k %7), learned position "
        "embeddings (up to %8), %9, no mask, scores ÷ √d_k. The toy settings do not apply; choose “Toy engine” in "
        "the Model toolbar to use them."),
        translate("Model", entry.title), entry.licence, entry.credit, facts.layers, facts.heads, facts.d_model,
        facts.d_head, facts.max_positions, translate("Model", facts.tokenizer_note) if facts.tokenizer_note else "")


def strip_prefix(text: str, prefixes) -> str:
    for prefix in prefixes:
        if text.startswith(prefix):
            return text[len(prefix):]
    return text


class PrefixBar(QWidget):
    """passage: / query: / as typed, one click away, for a model trained with prefixes (e5)."""

    def __init__(self, controller, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("prefixBar")
        self.controller = controller
        self.prefixes: tuple[str, ...] = ()
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        row = QHBoxLayout()
        row.addWidget(QLabel(self.tr("Prefix:")))
        self.buttons: dict[str, QPushButton] = {}
        for key, label in (("passage: ", "passage:"), ("query: ", "query:"), ("", self.tr("none"))):
            button = QPushButton(label)
            button.setObjectName(f"prefix{(key.strip(': ') or 'none').title()}Button")
            button.setCheckable(True)
            # as wide as its word: the style's 80-px minimum made the row 305 px, past the input's 279 at 1024 × 600
            button.setStyleSheet("QPushButton { padding: 3px 8px; }")
            button.clicked.connect(lambda _=False, k=key: self.apply(k))
            row.addWidget(button)
            self.buttons[key] = button
        row.addStretch(1)
        layout.addLayout(row)
        self.why = QLabel(self.tr("Trained on texts that begin with “query: ” (a question) or “passage: ” (a text "
                                  "to be found); without one it reads text unlike its training."))
        self.why.setObjectName("prefixWhy")
        self.why.setWordWrap(True)
        self.why.setStyleSheet("color: #555;")
        layout.addWidget(self.why)
        self.setVisible(False)
        controller.modelChanged.connect(self._on_model_changed)
        controller.configChanged.connect(lambda _config: self._show_checked())

    def _on_model_changed(self, name: str) -> None:
        self.prefixes = prefixes_of(name)
        self.setVisible(bool(self.prefixes))
        self._show_checked()

    def current(self) -> str:
        text = self.controller.config.text
        return next((p for p in self.prefixes if text.startswith(p)), "")

    def _show_checked(self) -> None:
        current = self.current()
        for key, button in self.buttons.items():
            button.setChecked(key == current)

    def apply(self, prefix: str) -> None:
        """Put ``prefix`` ("" = none) in front of the sentence, replacing the one there."""
        text = prefix + strip_prefix(self.controller.config.text, self.prefixes)
        if text != self.controller.config.text:
            self.controller.update_config(text=text)
        self._show_checked()
