"""The lines the patching dock writes beside its attribution-patching (AtP) grids: what AtP is and
where it fails, and per grid its correlation with the exact grid and the cells where they differ
most (app.jobs.atp computes them in the worker; here they only become text)."""
from __future__ import annotations

import math

from PySide6.QtCore import QCoreApplication

from ..i18n import error_text
from ..text import fill

translate = QCoreApplication.translate


def explanation() -> str:
    """What AtP is and where it fails, in full (the AtP line's tooltip)."""
    return translate(
        "AtpText",
        "AtP (attribution patching): each cell estimated to first order, (clean − corrupted activation) · "
        "gradient, from one backward pass of the corrupted run instead of one run a cell. It misses where "
        "attention saturates (a softmax weight near 1 has almost no gradient) and where the measure does "
        "(a corrupted p(answer) near 0).")


def refusal(error) -> str:
    """The AtP side's one line when the backward refused the model (the engine's error, translated)."""
    return fill(translate("AtpText", "No AtP estimate: %1"), error_text(error))


def correlation(title: str, agreement) -> str:
    """“residual stream r = 0.93 (480 cells)”."""
    if agreement.compared < 2 or math.isnan(agreement.correlation):
        return fill(translate("AtpText", "%1: no r yet (%2 cells)"), title, agreement.compared)
    return fill(translate("AtpText", "%1 r = %2 (%3 cells)"), title, f"{agreement.correlation:.3f}",
                agreement.compared)


def cell_name(grid: str, row: int, column: int, tokens) -> str:
    """“L3 “ Tower”” for a token grid's cell, “L3 H5” for a head's."""
    if grid == "head_z":
        return fill(translate("AtpText", "L%1 H%2"), row, column)
    token = tokens[column] if 0 <= column < len(tokens) else str(column)
    return fill(translate("AtpText", "L%1 “%2”"), row, token)


def lines(shown, tokens) -> str:
    """Two lines: what AtP is, where it fails and its correlation with each exact grid; then the
    cells where they differ most. ``shown``: [(grid's title, grid name, app.jobs.atp.Agreement)]."""
    first = translate("AtpText", "AtP (first-order, one backward pass; blind where attention saturates or the "
                                 "corrupted p(answer) is near 0) vs exact: %1.")
    if not shown:
        return fill(first, translate("AtpText", "waiting for its first row"))
    apart = "; ".join(", ".join(f"{cell_name(grid, r, c, tokens)} {a:.2g} / {b:.2g}" for r, c, a, b in agreement.cells)
                      for _, grid, agreement in shown if agreement.cells)
    text = fill(first, ", ".join(correlation(title, agreement) for title, _, agreement in shown))
    return text + "\n" + fill(translate("AtpText", "Differ most (AtP / exact): %1"), apart) if apart else text
