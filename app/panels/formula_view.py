"""The formula view (inside the step-through player): the whole equation with each symbol linked to
its stage, one projection written out with the current result's numbers, self- versus
cross-attention said with the same sentence, and RoPE's relative-position property shown with the
engine's own rotation (shift both positions by s: q·k unchanged).

Everything is O(d) arithmetic on arrays the result already holds (no new computation in the GUI
thread beyond a few dot products); the numbers are the engine's.
"""
from __future__ import annotations

import html

import numpy as np
from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QLabel, QVBoxLayout, QWidget

from engine.core.positional import apply_rope, rope_angles

from ..text import fill

SHIFT = 5  # positions both tokens move by in the RoPE demonstration
TERMS = 4  # products written out in the projection before "…"
LINK_STYLE = "color:#1565c0; text-decoration:none; font-weight:bold"


def projection_terms(result, focus: int, head: int) -> tuple[int, np.ndarray, np.ndarray, float, float]:
    """(column c of the full Q, x_i, W_Q[:, c], Σ x_i[r]·W_Q[r, c] in float64, the engine's q_i[c])
    for the first column of ``head`` (before RoPE's rotation)."""
    d_k = result.config.d_k
    column = head * d_k
    x = np.asarray(result.x[focus], dtype=np.float64)
    w = np.asarray(result.w_q[:, column], dtype=np.float64)
    q = result.q_unrotated if result.q_unrotated is not None else result.q
    return column, x, w, float(x @ w), float(q[head, focus, 0])


def rope_dot(q: np.ndarray, k: np.ndarray, m: int, n: int) -> float:
    """q rotated to position m · k rotated to position n, by the engine's RoPE (engine.core.positional)."""
    d_k = q.shape[-1]
    angles = rope_angles(max(m, n) + 1, d_k)
    rq = apply_rope(q.reshape(1, 1, d_k).astype(np.float64), angles[m : m + 1])[0, 0]
    rk = apply_rope(k.reshape(1, 1, d_k).astype(np.float64), angles[n : n + 1])[0, 0]
    return float(rq @ rk)


def rope_demo(result, focus: int, key: int, head: int, shift: int = SHIFT) -> tuple[float, float, float] | None:
    """(q·k at positions m, n; at m + shift, n + shift; at m, n + 1) for the focus and ``key``, or None
    when d_k is odd (RoPE turns pairs)."""
    if result.config.d_k % 2:
        return None
    q = result.q_unrotated if result.q_unrotated is not None else result.q
    k = result.k_unrotated if result.k_unrotated is not None else result.k
    qv, kv = np.asarray(q[head, focus]), np.asarray(k[head, key])
    return (rope_dot(qv, kv, focus, key), rope_dot(qv, kv, focus + shift, key + shift),
            rope_dot(qv, kv, focus, key + 1))


class FormulaView(QWidget):
    """Rich text with stage links; ``stageRequested(key)`` names the player stage to show."""

    stageRequested = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("formulaView")
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        self.formula = QLabel()
        self.formula.setObjectName("formulaEquation")
        self.formula.setTextFormat(Qt.TextFormat.RichText)
        self.formula.setAlignment(Qt.AlignmentFlag.AlignCenter)
        font = self.formula.font()
        font.setPointSizeF(font.pointSizeF() * 1.35)
        self.formula.setFont(font)
        self.formula.setToolTip(self.tr("Click a symbol to show its stage"))
        self.formula.linkActivated.connect(lambda link: self.stageRequested.emit(link.removeprefix("stage:")))
        self.details = QLabel()
        self.details.setObjectName("formulaDetails")
        self.details.setTextFormat(Qt.TextFormat.RichText)
        self.details.setWordWrap(True)
        self.details.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        layout.addWidget(self.formula)
        layout.addWidget(self.details)
        self.formula.setText(self._equation())

    def _equation(self) -> str:
        def link(stage: str, text: str) -> str:
            return f'<a href="stage:{stage}" style="{LINK_STYLE}">{text}</a>'

        return ("Attention(" + link("qkv", "Q") + ", " + link("qkv", "K") + ", " + link("qkv", "V") + ") = "
                + link("weights", "softmax") + "(" + link("scores", "Q·Kᵀ") + " " + link("scaled", "/ √d_k")
                + ") " + link("weighted_sum", "· V") + " &nbsp; → " + link("concat", "· W_O")
                + " &nbsp; (Q = " + link("embeddings", "X") + "·W_Q, K = X·W_K, V = X·W_V)")

    def show_result(self, result, focus: int, head: int, key: int) -> None:
        """Fill the details for ``result`` (focused token, head, a key for the RoPE line)."""
        focus = min(focus, result.n - 1)
        key = min(key, result.n - 1)
        head = min(head, result.q.shape[0] - 1)
        token = html.escape(result.tokens[focus].text)
        lines = []
        column, x, w, total, engine_value = projection_terms(result, focus, head)
        products = " + ".join(f"{a:.3g}·{b:.3g}" for a, b in zip(x[:TERMS], w[:TERMS]))
        if len(x) > TERMS:
            products += fill(self.tr(" + … (%1 products)"), len(x))
        lines.append(fill(self.tr("Projection, one element: q_%1[%2] = x_%1 · W_Q[:, %2] = %3 = <b>%4</b> "
                                  "(the engine's q: %5). Each element of q is the dot product of x with one column "
                                  "of W_Q; head %6's first column is column %2."),
                          token, column, products, f"{total:.4f}", f"{engine_value:.4f}", head))
        sentence = html.escape(result.config.text if len(result.config.text) <= 60 else result.config.text[:57] + "…")
        lines.append(fill(self.tr("<b>Self</b>-attention: Q, K and V all come from the same X, the %1 tokens of "
                                  "“%2”: the sentence asks questions of itself. <b>Cross</b>-attention (a translator's "
                                  "decoder reading the source sentence) takes Q from one sequence and K, V from "
                                  "another; the formula is the same."), result.n, sentence))
        demo = rope_demo(result, focus, key, head)
        if demo is None:
            lines.append(self.tr("RoPE turns pairs of numbers: it needs an even d_k."))
        else:
            same, shifted, other = demo
            rope_now = result.config.positional == "rope"
            lines.append(fill(self.tr(
                "RoPE (engine.core.positional.apply_rope on this head's q of “%1” and k of “%2”): at positions %3 and %4, "
                "q·k = %5; both shifted by %6 (to %7 and %8): q·k = %9 — unchanged, only the distance counts. "
                "One position further apart: %10."),
                token, html.escape(result.tokens[key].text), focus, key, f"{same:.4f}", SHIFT, focus + SHIFT,
                key + SHIFT, f"{shifted:.4f}", f"{other:.4f}")
                + ("" if rope_now else " " + self.tr("(Positions is not RoPE now: the heatmap's scores are not rotated.)")))
        self.details.setText("<br>".join(lines))
