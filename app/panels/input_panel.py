"""Input panel: the sentence and every setting, bound by name to the controller's config.

Each widget writes one field of :class:`AttentionConfig`; the panel keeps no copy of the
settings. Any change recomputes. An invalid value shows a message next to its field and
leaves the last good pictures on screen.
"""
from __future__ import annotations

import sys
from pathlib import Path

from PySide6.QtCore import QCoreApplication, QEvent, QObject, QSettings, QSignalBlocker, Qt
from PySide6.QtGui import QValidator
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDoubleSpinBox,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QSpinBox,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from engine import AttentionConfig, EngineError
from engine.toy.config import (
    MASKS, MAX_D_MODEL, MAX_HEADS, MAX_SEED, MIN_TEMPERATURE, POSITIONALS, TOKENIZERS, WEIGHTS,
)
from engine.files.documents import load_embeddings_table
from engine.toy.weights_file import load_projections

from .. import bindings
from ..controller import Controller
from ..i18n import error_text, setting_label
from ..text import fill
from .base import Panel

ERROR_STYLE = "color: #c62828;"
FIELD_LABELS = {"d_model": "heads"}  # d_model and heads share the message under the heads box
EXAMPLES = Path(__file__).resolve().parents[2] / "examples"  # examples/table.json: a table to start from
PROJECTIONS = EXAMPLES.parent / "resources" / "presets"  # seed001_cake_projections.json
MORE_SETTINGS = ("tokenizer", "seed", "weights")  # behind "More settings", in this order, with the table and W_Q… rows
MORE_KEY = "input/moreSettings"  # QSettings: "open" / "closed" as the user last chose (none: by the room there is)
CUSTOM = "custom"  # the weights combo's extra item while W_Q, W_K, W_V come from a file (config.projections)


def as_shown(text: str) -> str:
    """``text`` as a QPlainTextEdit gives it back: every line break a \n."""
    return text.replace("\r\n", "\n").replace("\r", "\n").replace("\u2028", "\n").replace("\u2029", "\n")


class _KeepMinimumHeight(QObject):
    """Keeps ``widget``'s minimum height at its layout's minimum, recomputed when the layout changes."""

    def __init__(self, widget: QWidget) -> None:
        super().__init__(widget)
        self._widget = widget
        widget.installEventFilter(self)
        self._update()

    def _update(self) -> None:
        self._widget.setMinimumHeight(self._widget.layout().minimumSize().height())

    def eventFilter(self, watched, event) -> bool:  # noqa: N802 - Qt name
        if event.type() in (QEvent.Type.LayoutRequest, QEvent.Type.Show):
            self._update()
        return False


class InputPanel(Panel):
    """The sentence box and the settings form."""

    def show_snapshot(self, snapshot) -> None:
        self.show_config(self.controller.config)

    def show_selection(self) -> None:
        pass  # the settings do not depend on the selection

    def __init__(self, controller: Controller, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("inputPanel")
        self.controller = controller
        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 6, 6, 6)

        self.text = QPlainTextEdit()
        self.text.setObjectName("textEdit")
        self.text.setPlaceholderText(self.tr("Type a sentence, e.g. 小明喜欢苹果 or I ate the cake and it was delicious."))
        self.text.setToolTip(self.tr("The sentence. Every edit recomputes attention."))
        self.text.setMaximumHeight(90)
        self.text.setTabChangesFocus(True)
        layout.addWidget(self.text)
        self.messages: dict[str, QLabel] = {}
        self.messages["text"] = self._message_label()
        layout.addWidget(self.messages["text"])
        from ..model_facts import PrefixBar

        self.prefix_bar = PrefixBar(controller)  # passage: / query: for a model trained with them (e5)
        layout.addWidget(self.prefix_bar)

        form = QFormLayout()
        form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
        self.tokenizer = self._combo("tokenizer", TOKENIZERS,
                                     self.tr("auto: jieba for Chinese, words and punctuation otherwise"))
        self.d_model = self._spin(1, MAX_D_MODEL, self.tr("Width of every token vector"))
        self.heads = self._spin(1, MAX_HEADS, self.tr("Number of heads; d_k = d_model / heads must be a whole number"))
        self.seed = ExactNumberBox(0, MAX_SEED, whole=True)  # QSpinBox stops at 2**31 - 1
        self.seed.setToolTip(self.tr("Seeds the static embeddings and the random projections"))
        self.positional = self._combo("positional", POSITIONALS,
                                      self.tr("none, sinusoidal (added to x) or RoPE (rotates q and k)"))
        self.mask = self._combo("mask", MASKS, self.tr("none = encoder (see every token), causal = decoder (no future)"))
        self.scale = QCheckBox(self.tr("divide scores by √d_k"))
        self.scale.setToolTip(self.tr("Without it the softmax saturates at large d_k"))
        self.temperature = ExactNumberBox(MIN_TEMPERATURE, sys.float_info.max)
        self.temperature.setSingleStep(0.1)
        self.temperature.setToolTip(self.tr("Extra divisor of the scores: > 1 flattens the softmax, < 1 sharpens it"))
        self.weights = self._combo("weights", WEIGHTS,
                                   self.tr("random (seeded) or identity (W_Q = W_K = W_V = I, as in the hand calculation)"))
        rows = [
            ("tokenizer", self.tr("Tokenizer"), self.tokenizer),
            ("d_model", self.tr("d_model"), self.d_model),
            ("heads", self.tr("Heads"), self.heads),
            ("seed", self.tr("Seed"), self.seed),
            ("positional", self.tr("Positions"), self.positional),
            ("mask", self.tr("Mask"), self.mask),
            ("scale", self.tr("Scale"), self.scale),
            ("temperature", self.tr("Temperature"), self.temperature),
            ("weights", self.tr("Weights"), self.weights),
        ]
        # the rarely changed settings after the others, behind "More settings" (MORE_SETTINGS)
        rows = [row for row in rows if row[0] not in MORE_SETTINGS] + [row for row in rows if row[0] in MORE_SETTINGS]
        self.fields = {name: widget for name, _label, widget in rows}  # the binding table: config field → widget
        labels = {name: label for name, label, _widget in rows}
        for name, label, widget in rows:
            widget.setObjectName(f"{name}Field")
            if name == "d_model":
                continue  # on the heads' row, its messages under them (FIELD_LABELS)
            self.messages[name] = self._message_label()
            if name == "heads":
                # d_model and heads share a row, and their message the whole width under it: at 1366 × 768
                # the form scrolled under a row of its own and a narrow message's three reserved lines
                pair = QHBoxLayout()
                pair.addWidget(self.d_model, 1)
                heads_label = QLabel(labels["heads"])
                heads_label.setBuddy(self.heads)
                pair.addWidget(heads_label)
                pair.addWidget(self.heads, 1)
                form.addRow(labels["d_model"], pair)
                form.addRow(self._reserved(self.messages[name]))
            else:
                if name == MORE_SETTINGS[0]:
                    form.addRow(self._build_disclosure())
                form.addRow(label, widget)
                form.addRow("", self.messages[name])
        self.settings_box = QWidget()
        self.settings_box.setObjectName("toySettings")
        form.setContentsMargins(0, 0, 0, 0)
        self.settings_box.setLayout(form)
        self.form = form
        # the form's word-wrapped message rows make it report a height for its width below the rows'
        # own heights, and the panel's layout then squashed the spin boxes to slivers at 1024 × 600 (issue
        # 25.9): its minimum height is kept at what its rows need, so the panel scrolls instead
        self._form_guard = _KeepMinimumHeight(self.settings_box)
        layout.addWidget(self.settings_box)
        self.model_facts = QLabel()  # in place of the toy settings when a pretrained model computes
        self.model_facts.setObjectName("modelFacts")
        self.model_facts.setWordWrap(True)
        self.model_facts.setTextFormat(Qt.TextFormat.PlainText)
        self.model_facts.setVisible(False)
        layout.addWidget(self.model_facts)

        table_row = QHBoxLayout()
        self.embeddings_label = QLabel()
        self.embeddings_label.setWordWrap(True)
        self.load_table = QPushButton(self.tr("Embeddings…"))
        self.load_table.setToolTip(self.tr(
            "Load a JSON table token → vector: {\"小明\": [1, 0], \"喜欢\": [0, 1], \"苹果\": [1, 1]}.\n"
            "Every vector has d_model numbers; tokens not in the table keep their generated embedding.\n"
            "examples/table.json is the tutorial's table (d_model 2, tokenizer whitespace)."))
        self.clear_table = QPushButton(self.tr("Clear"))
        self.clear_table.setToolTip(self.tr("Go back to generated embeddings"))
        table_row.addWidget(self.embeddings_label, 1)
        table_row.addWidget(self.load_table)
        table_row.addWidget(self.clear_table)
        layout.addLayout(table_row)
        self.messages["embeddings"] = self._message_label()
        layout.addWidget(self.messages["embeddings"])
        projections_row = QHBoxLayout()
        self.projections_label = QLabel()
        self.projections_label.setWordWrap(True)
        self.load_projections = QPushButton(self.tr("Load W_Q, W_K, W_V…"))
        self.load_projections.setObjectName("loadProjections")
        self.load_projections.setToolTip(self.tr(
            "Custom projection matrices from a file: JSON {\"w_q\": [[…], …], \"w_k\": …, \"w_v\": …} (w_o optional),\n"
            ".npz with arrays w_q, w_k, w_v, or .npy of shape (3, d, d). Each is d_model × d_model; q = x · W_Q.\n"
            "resources/presets/seed001_cake_projections.json reproduces the cake tutorial's scores."))
        projections_row.addWidget(self.projections_label, 1)
        projections_row.addWidget(self.load_projections)
        layout.addLayout(projections_row)
        self.messages["projections"] = self._message_label()
        layout.addWidget(self.messages["projections"])
        layout.addStretch(1)
        self._more_rows = [self.tokenizer, self.seed, self.weights]  # … and the table and projections rows
        self._more_widgets = [self.embeddings_label, self.load_table, self.clear_table, self.projections_label,
                              self.load_projections]
        self._facts_shown = False
        self._set_more_shown(self._remembered_more() is not False, remember=False)

        self.show_config(controller.config)
        self.text.textChanged.connect(lambda: self._on_field_changed("text"))
        for name, widget in self.fields.items():
            bindings.changed(widget).connect(lambda _=None, n=name: self._on_field_changed(n))
        self.load_table.clicked.connect(self._on_load_table)
        self.load_projections.clicked.connect(self._on_load_projections)
        self.clear_table.clicked.connect(self._on_clear_table)
        controller.configChanged.connect(self._on_config_changed)

    # ---------------------------------------------------------------- the disclosure
    def _build_disclosure(self) -> QToolButton:
        """"More settings": the rarely changed settings (tokenizer, seed, weights, the embeddings table and
        W_Q, W_K, W_V files) shown or hidden. The user's choice is remembered; until there is one they are
        shown when the column has the height for them and hidden when not (1024 × 600: the form needed
        399 px in a 321-pixel column and scrolled)."""
        self.more_button = QToolButton()
        self.more_button.setObjectName("moreSettings")
        self.more_button.setCheckable(True)
        self.more_button.setAutoRaise(True)
        self.more_button.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
        self.more_button.setToolTip(self.tr("Tokenizer, seed, weights, the embeddings table and W_Q, W_K, W_V "
                                            "from a file"))
        self.more_button.clicked.connect(lambda shown: self._set_more_shown(shown, remember=True))
        return self.more_button

    @staticmethod
    def _remembered_more():
        """True / False as the user last chose, None when never chosen."""
        value = QSettings("AttentionExplorer", "AttentionExplorer").value(MORE_KEY, "")
        return {"open": True, "closed": False}.get(str(value))

    def more_shown(self) -> bool:
        return self.more_button.isChecked()

    def _set_more_shown(self, shown: bool, remember: bool) -> None:
        with QSignalBlocker(self.more_button):
            self.more_button.setChecked(shown)
        self.more_button.setArrowType(Qt.ArrowType.DownArrow if shown else Qt.ArrowType.RightArrow)
        self.more_button.setText(self.tr("Fewer settings") if shown else self._more_summary())
        for widget in self._more_rows:
            widget.setVisible(shown)
            label = self.form.labelForField(widget)
            if label is not None:
                label.setVisible(shown)
        for widget in self._more_widgets:
            widget.setVisible(shown and not self._facts_shown)
        if remember:
            QSettings("AttentionExplorer", "AttentionExplorer").setValue(MORE_KEY, "open" if shown else "closed")

    def _more_summary(self) -> str:
        """The closed disclosure's text: what the hidden settings are set to."""
        config = self.controller.config
        values = [self.tokenizer.currentText(), fill(self.tr("seed %1"), config.seed), self.weights.currentText()]
        if config.embeddings:
            values.append(self.tr("own embeddings"))
        return fill(self.tr("More: %1"), " · ".join(values))

    def fit_room(self) -> None:
        """Without a remembered choice: the more settings shown when the dock's height holds them."""
        if self._remembered_more() is not None or self._facts_shown:
            return
        scroll = self.room()
        if scroll is None:
            return
        need = self.minimumSizeHint().height()
        if not self.more_shown():
            need += self._more_height()
        shown = scroll.height() >= need
        if shown != self.more_shown():
            self._set_more_shown(shown, remember=False)

    def _more_height(self) -> int:
        """Height the more settings add to the form (their rows and the rows below it)."""
        spacing = max(self.form.verticalSpacing(), 0)
        rows = sum(max(w.sizeHint().height(), self.form.labelForField(w).sizeHint().height()) + spacing
                   for w in self._more_rows)
        below = max(self.embeddings_label.sizeHint().height(), self.load_table.sizeHint().height()) \
            + max(self.projections_label.heightForWidth(max(self.width() - 160, 60)),
                  self.load_projections.sizeHint().height())
        return rows + below + 2 * max(self.layout().spacing(), 0) + 12

    # ---------------------------------------------------------------- helpers
    @staticmethod
    def _reserved(message: QLabel) -> QWidget:
        """``message`` in a holder that keeps two lines of a smaller font reserved: "d_model must be
        divisible by heads" comes and goes while typing, and the form below must not jump."""
        font = message.font()
        font.setPointSizeF(font.pointSizeF() * 0.85)
        message.setFont(font)
        holder = QWidget()
        holder_layout = QVBoxLayout(holder)
        holder_layout.setContentsMargins(0, 0, 0, 0)
        holder_layout.addWidget(message)
        holder_layout.addStretch(1)
        holder.setMinimumHeight(2 * message.fontMetrics().lineSpacing() + 2)
        return holder

    def _message_label(self) -> QLabel:
        label = QLabel()
        label.setStyleSheet(ERROR_STYLE)
        label.setWordWrap(True)
        label.setVisible(False)
        return label

    def _combo(self, name: str, values, tip: str) -> QComboBox:
        combo = QComboBox()
        for value in values:
            combo.addItem(setting_label(name, value), value)  # shown translated, the value as data
        combo.setToolTip(tip)
        return combo

    def _spin(self, low: int, high: int, tip: str) -> QSpinBox:
        spin = QSpinBox()
        spin.setRange(low, high)
        spin.setToolTip(tip)
        spin.setKeyboardTracking(True)
        return spin

    def _text_value(self) -> str:
        """The box's text; a text set from a session or the state comes back exactly as it was
        while the box still shows it (the box turns \r\n, \r, U+2028 and U+2029 into \n)."""
        shown = self.text.toPlainText()
        exact = getattr(self, "_exact_text", None)
        return exact if exact is not None and as_shown(exact) == shown else shown

    def values(self) -> dict:
        """The settings as the widgets show them now (possibly invalid)."""
        values = {"text": self._text_value(), **{name: bindings.read(w) for name, w in self.fields.items()}}
        values["seed"] = int(values["seed"])  # an ExactNumberBox: a float of a whole number
        if values["weights"] == CUSTOM:  # projections from a file: the config keeps its weights setting
            values["weights"] = self.controller.config.weights
        return values

    def show_config(self, config: AttentionConfig) -> None:
        """Set every widget from ``config`` without triggering recomputation."""
        blockers = [QSignalBlocker(w) for w in (self.text, *self.fields.values())]
        if self.text.toPlainText() != as_shown(config.text):
            self.text.setPlainText(config.text)
        self._exact_text = config.text
        custom = self.weights.findData(CUSTOM)
        if config.projections is not None and custom < 0:
            self.weights.addItem(self.tr("custom (W_Q, W_K, W_V from a file)"), CUSTOM)
        elif config.projections is None and custom >= 0:
            self.weights.removeItem(custom)
        for name, widget in self.fields.items():
            bindings.write(widget, getattr(config, name))
        if config.projections is not None:
            self.weights.setCurrentIndex(self.weights.findData(CUSTOM))
        del blockers
        table = config.embeddings
        self.embeddings_label.setText(
            self.tr("Embeddings: generated from (token, seed)") if not table
            else self.tr("Embeddings: custom table, %n token(s)", "", len(table))
        )
        self.clear_table.setEnabled(bool(table))
        self.projections_label.setText(
            self.tr("W_Q, W_K, W_V: custom, from a file (choose random or identity under Weights to drop them)")
            if config.projections is not None else self.tr("W_Q, W_K, W_V: from the Weights setting"))
        for label in self.messages.values():
            label.setVisible(False)
        if hasattr(self, "more_button") and not self.more_shown():
            self.more_button.setText(self._more_summary())

    def set_settings_enabled(self, enabled: bool) -> None:
        """Grey out the toy engine's settings (the pretrained model has its own); the text stays."""
        for widget in (*self.fields.values(), self.load_table, self.clear_table, self.load_projections):
            widget.setEnabled(enabled)
        if enabled:
            self.clear_table.setEnabled(bool(self.controller.config.embeddings))

    def show_model_facts(self, facts: str) -> None:
        """A pretrained model's own facts instead of the toy settings; "" shows the settings again."""
        self.model_facts.setText(facts)
        self.model_facts.setVisible(bool(facts))
        self.settings_box.setVisible(not facts)
        self._facts_shown = bool(facts)
        self._set_more_shown(self.more_shown(), remember=False)  # the table and projections rows with the settings
        self.fit_room()

    def show_message(self, field: str, message: str) -> None:
        """Show ``message`` (in the interface language) under ``field``'s box, hiding the others."""
        field = FIELD_LABELS.get(field, field)
        for other, label in self.messages.items():
            if other != field:
                label.setVisible(False)
        label = self.messages.get(field, self.messages["text"])
        if message and field in (*MORE_SETTINGS, "embeddings", "projections") and not self.more_shown():
            self._set_more_shown(True, remember=False)  # a message about a hidden setting shows it
        label.setText(message)
        label.setVisible(bool(message))

    def show_error(self, error: BaseException, field: str = "text") -> None:
        """Show ``error`` under the box of the setting at fault (``error.field``, else ``field``)."""
        self.show_message(getattr(error, "field", None) or field, error_text(error))

    # ---------------------------------------------------------------- handlers
    def _on_field_changed(self, name: str) -> None:
        values = self.values()
        try:
            keep = self.weights.currentData() == CUSTOM  # choosing random or identity drops the file's matrices
            config = AttentionConfig(**values, embeddings=self.controller.config.embeddings,
                                     projections=self.controller.config.projections if keep else None,
                                     memory_budget=self.controller.config.memory_budget)
        except EngineError as error:
            self.show_error(error, name)
            self.controller.refuse(error, values.get("text"))  # the result on screen is out of date
            return
        for label in self.messages.values():
            label.setVisible(False)
        self.controller.set_config(config)

    def _on_config_changed(self, config: AttentionConfig) -> None:
        self.show_config(config)

    def _on_load_table(self) -> None:
        settings = QSettings("AttentionExplorer", "AttentionExplorer")  # the window's settings
        folder = settings.value("lastFolder/embeddings", "") or str(EXAMPLES)
        path, _ = QFileDialog.getOpenFileName(
            self, self.tr("Load embeddings table: JSON {\"token\": [numbers], …}, e.g. examples/table.json"),
            folder, self.tr("JSON (*.json)"))
        if path:
            settings.setValue("lastFolder/embeddings", str(Path(path).resolve().parent))
            self.load_table_file(path)

    def load_table_file(self, path: str) -> bool:
        """Read a token → vector JSON table; on error show why and change nothing."""
        try:
            table = load_embeddings_table(path)  # size-capped, guarded, null/empty refused (engine/files/documents.py)
            config = self.controller.config.replace(embeddings=table)
        except (OSError, ValueError) as error:
            self.show_message("embeddings", fill(self.tr("Could not use %1: %2"), path, error_text(error)))
            return False
        self.controller.set_config(config)
        return True

    def _on_load_projections(self) -> None:
        settings = QSettings("AttentionExplorer", "AttentionExplorer")  # the window's settings
        folder = settings.value("lastFolder/projections", "") or str(PROJECTIONS)
        path, _ = QFileDialog.getOpenFileName(
            self, self.tr("Load W_Q, W_K, W_V"), folder, self.tr("Projection matrices (*.json *.npz *.npy)"))
        if path:
            settings.setValue("lastFolder/projections", str(Path(path).resolve().parent))
            self.load_projections_file(path)

    def load_projections_file(self, path: str) -> bool:
        """Read W_Q, W_K, W_V (and optionally W_O) from ``path`` for the current d_model; on error show
        why under the button and change nothing (as for the embeddings table)."""
        try:
            projections = load_projections(path)  # size-capped; shapes and numbers checked by AttentionConfig
            config = self.controller.config.replace(projections=projections)
        except (OSError, ValueError) as error:
            self.show_message("projections", fill(self.tr("Could not use %1: %2"), path, error_text(error)))
            return False
        self.controller.set_config(config)
        return True

    def _on_clear_table(self) -> None:
        self.controller.set_config(self.controller.config.replace(embeddings=None))


class ExactNumberBox(QDoubleSpinBox):
    """A spin box that keeps exactly the number it holds (5000, 1.23456, 0.0004, 4294967295): shown
    in the shortest form that reads back the same float, never rounded to a fixed number of decimals."""

    def __init__(self, minimum: float, maximum: float, *, whole: bool = False) -> None:
        super().__init__()
        self.whole = whole
        self.setDecimals(0 if whole else 17)  # 17 significant decimals round-trip every double ≥ 1e-6
        self.setRange(minimum, maximum)
        self.setKeyboardTracking(True)

    def textFromValue(self, value: float) -> str:  # noqa: N802 - Qt name
        return str(int(value)) if self.whole else repr(float(value))

    def valueFromText(self, text: str) -> float:  # noqa: N802 - Qt name
        return float(text)

    def validate(self, text: str, position: int):
        try:
            value = float(text)
        except ValueError:
            return QValidator.State.Intermediate, text, position
        inside = self.minimum() <= value <= self.maximum() and (not self.whole or value.is_integer())
        return (QValidator.State.Acceptable if inside else QValidator.State.Intermediate), text, position

    def sizeHint(self):  # noqa: N802 - Qt name: the 17 decimals would make a huge box
        hint = super().sizeHint()
        hint.setWidth(min(hint.width(), 140))
        return hint

    def minimumSizeHint(self):  # noqa: N802 - Qt name
        hint = super().minimumSizeHint()
        hint.setWidth(min(hint.width(), 80))
        return hint


def _reject_constant(name: str):
    raise EngineError("{name} is not a finite number", field="embeddings", name=name)
