"""Worked arithmetic: the first tutorial's hand calculation, for whatever the user typed.

For the focused query token and the selected head: every dot product (its element-wise
terms), the scaling, each softmax term, the normaliser, each weight, and the weighted sum of
V — the engine's own numbers (:class:`engine.Explanation`, built in the worker). Long rows
are abridged for reading; the sums always include every term.
"""
from __future__ import annotations

import html
import math

from PySide6.QtGui import QFont, QFontDatabase
from PySide6.QtWidgets import QTextBrowser, QVBoxLayout, QWidget

from engine import Explanation

from ..controller import Controller
from ..text import fill
from .base import Panel

MAX_KEYS = 24  # rows listed per step; with more keys the highest-weight ones are listed
MAX_TERMS = 6  # products written out per dot product; longer sums are abridged


def number(value: float, digits: int = 3) -> str:
    if math.isinf(value):
        return "−∞" if value < 0 else "∞"
    return f"{value:.{digits}f}"


def vector(values, limit: int = MAX_TERMS) -> str:
    """``[a, b, c, d, …, z]``: only the numbers shown are formatted (a 576-wide vector, 24 keys)."""
    if len(values) > limit:
        return "[" + ", ".join([number(v) for v in values[: limit - 2]] + ["…", number(values[-1])]) + "]"
    return "[" + ", ".join(number(v) for v in values) + "]"


class ArithmeticPanel(Panel):
    """A read-only rich-text view of the worked calculation."""

    def show_snapshot(self, snapshot) -> None:
        self.show_explanation(self.controller.explanation)

    def show_selection(self) -> None:
        pass  # the controller's explanationChanged follows the selection

    def __init__(self, controller: Controller, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("arithmeticPanel")
        self.controller = controller
        layout = QVBoxLayout(self)
        layout.setContentsMargins(2, 2, 2, 2)
        self.view = QTextBrowser()
        self.view.setObjectName("arithmeticText")
        font = QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont)
        font.setStyleHint(QFont.StyleHint.Monospace)
        self.view.setFont(font)
        # three lines of the page, which scrolls inside the view: the scroll bar's own minimum (70 px of
        # arrows and handle) made the panel 74 px, and it scrolled in its dock at 1024 × 600
        frame = 2 * self.view.frameWidth() + 2 * int(self.view.document().documentMargin())
        self.view.setMinimumHeight(3 * self.view.fontMetrics().lineSpacing() + frame)
        layout.addWidget(self.view)
        controller.explanationChanged.connect(self.show_explanation)
        self._shown: str | None = None  # the page on screen
        self._value_cell = None  # engine.analysis.value_norms.explain_cell of (head, focus, key), from the worker
        self._explained = None  # the explanation the value cell was asked for
        self._value_lane = self.lane("value-cell")
        self._value_lane.done.connect(self._on_value_cell)
        controller.cellChanged.connect(lambda *_: self.show_explanation(controller.explanation))

    def _on_value_cell(self, cell) -> None:
        self._value_cell = cell
        if self.controller.explanation is not None:
            self._show_text(self.render(self.controller.explanation))

    def _show_text(self, text: str) -> None:
        """setHtml only when the text changed: laying out the page is the panel's whole cost, and the
        snapshot, the explanation and the clicked cell often ask for the same page in one edit."""
        if text != self._shown:
            self._shown = text
            self.view.setHtml(text)

    def show_explanation(self, explanation: Explanation | None) -> None:
        if explanation is None:
            self._shown = None
            self.view.setPlainText(self.tr("No calculation to show."))
            return
        if explanation is not self._explained:  # a new result: the value cell shown belongs to the last one
            self._explained, self._value_cell = explanation, None
        self._show_text(self.render(explanation))
        snapshot = self.controller.snapshot
        if snapshot is not None and snapshot.result.v is not None:
            query, key = self.controller.cell
            result = snapshot.result
            self._value_lane.submit(value_cell, result.weights, result.v, result.w_o, explanation.head,
                                    explanation.query_index, key if query == explanation.query_index else None,
                                    result.token_texts)

    def _keys(self, explanation: Explanation):
        terms = list(explanation.terms)
        total = max(explanation.total_keys, len(terms))
        if len(terms) > MAX_KEYS:
            terms = sorted(sorted(terms, key=lambda t: -t.weight)[:MAX_KEYS], key=lambda t: t.key_index)
        return terms, total - len(terms)

    def render(self, e: Explanation) -> str:
        esc = html.escape
        q_name = f"q<sub>{esc(e.query_text)}</sub>"
        keys, hidden = self._keys(e)
        # (lupdate reads no tr() inside f-strings: the texts are taken out first)
        title = fill(self.tr("Head %1 · query token #%2 “%3” · d_k = %4"), e.head, e.query_index, e.query_text, e.d_k)
        out = [f"<h3>{esc(title)}</h3>"]
        out.append(f"<p>{q_name} = {vector(e.q)}</p>")
        if hidden:
            abridged = fill(self.tr("%1 keys: the %2 with the largest weights are listed; every sum includes all %1."),
                            len(keys) + hidden, len(keys))
            out.append(f"<p><i>{esc(abridged)}</i></p>")
        heading = self.tr("1 · Scores: the query’s dot product with every key")
        out.append(f"<p><b>{esc(heading)}</b><br>")
        for t in keys:
            products = t.products
            if len(products) > MAX_TERMS:
                shown = " + ".join(number(p) for p in products[:3]) + " + … + " + number(products[-1])
            else:
                shown = " + ".join(number(p) for p in products)
            out.append(f"{q_name} · k<sub>{esc(t.key_text)}</sub> = {vector(e.q)} · {vector(t.k)} = {shown} = <b>{number(t.score)}</b><br>")
        out.append("</p>")
        if e.query_scale:  # the model's own scale (Gemma), the number the engine divided by
            step = fill(self.tr("2 · Scale: divide by √query_pre_attn_scalar = √%1 = %2 (this model’s query scale, "
                                "not √d_k = √%3)"), f"{e.query_scale:g}", number(e.divisor), e.d_k)
        elif e.scale:
            step = fill(self.tr("2 · Scale: divide by √d_k = √%1 = %2"), e.d_k, number(math.sqrt(e.d_k)))
            if e.temperature != 1:
                step += fill(self.tr(" and by the temperature %1"), number(e.temperature))
        elif e.temperature != 1:
            step = fill(self.tr("2 · Scale: √d_k is off; divide by the temperature %1"), number(e.temperature))
        else:
            step = self.tr("2 · Scale: off (the scores are used as they are)")
        if e.softcap:
            cap = f"{e.softcap:g}"
            step += fill(self.tr(", then cap: %1 · tanh(s / %1)"), cap)
        out.append(f"<p><b>{esc(step)}</b><br>")
        masked = self.tr("(masked: a future token → −∞)")
        for t in keys:
            note = f" <span style='color:#c62828'>{esc(masked)}</span>" if t.masked else ""
            quotient = f"{number(t.score)} / {number(e.divisor)}"
            if e.softcap:
                quotient = f"{cap} · tanh({quotient} / {cap})"
            out.append(f"{esc(t.key_text)}: {quotient} = <b>{number(t.scaled)}</b>{note}<br>")
        out.append("</p>")
        heading = self.tr("3 · Softmax: exp of each scaled score, divided by their sum")
        out.append(f"<p><b>{esc(heading)}</b><br>")
        if e.shifted:
            shift = fill(self.tr("exp of (s − %1), the row maximum: the same weights without overflow"),
                         number(e.row_max))
            out.append(f"<i>{esc(shift)}</i><br>")
        for t in keys:
            argument = f"{number(t.scaled)} − {number(e.row_max)}" if e.shifted else number(t.scaled)
            out.append(f"exp({argument}) = {number(t.exp_value, 4)}<br>")
        total = self.tr("sum")
        out.append(f"{esc(total)} = <b>{number(e.normaliser, 4)}</b><br>")
        for t in keys:
            out.append(f"w<sub>{esc(t.key_text)}</sub> = {number(t.exp_value, 4)} / {number(e.normaliser, 4)} = <b>{number(t.weight)}</b><br>")
        out.append("</p>")
        heading = self.tr("4 · Weighted sum of the values")
        out.append(f"<p><b>{esc(heading)}</b><br>")
        for t in keys:
            out.append(f"{number(t.weight)} × v<sub>{esc(t.key_text)}</sub> {vector(t.v)} = {vector(t.weighted_v)}<br>")
        new = fill(self.tr("new “%1” (this head)"), e.query_text)
        out.append(f"{esc(new)} = <b>{vector(e.output)}</b></p>")
        cell = self._value_cell
        if cell is not None and (cell["head"], cell["query"]) == (e.head, e.query_index):
            heading = fill(self.tr("5 · Value-weighted: what key “%1” actually moves (‖α · f(x)‖)"),
                           cell["key_text"])
            out.append(f"<p><b>{esc(heading)}</b><br>")
            out.append(f"f(x) = v · W<sub>O,{e.head}</sub> = {vector(cell['f'])}<br>")
            out.append(f"‖f(x)‖ = <b>{number(cell['f_norm'])}</b><br>")
            out.append(f"α × ‖f(x)‖ = {number(cell['alpha'])} × {number(cell['f_norm'])} = "
                       f"<b>{number(cell['value_norm'])}</b></p>")
        return "".join(out)


def value_cell(weights, v, w_o, head: int, query: int, key: int | None, texts=()) -> dict:
    """Worker job: engine.analysis.value_norms.explain_cell of (head, query, key); key None: the key with the
    largest weight in the row."""
    from engine.analysis.value_norms import explain_cell

    if key is None:
        key = int(weights[head, query].argmax())
    cell = explain_cell(weights, v, w_o, head, query, key)
    return dict(cell, head=head, query=query, key=key, key_text=texts[key] if key < len(texts) else str(key))
