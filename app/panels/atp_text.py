"""The lines the patching dock writes beside its attribution-patching (AtP) grids: what AtP is and
where it fails, and per grid its correlation with the exact grid and the cells where they differ
most (app.jobs.atp computes them in the worker; here they only become text)."""
from __future__ import annotations

import math

from PySide6.QtCore import QCoreApplication

from ..i18n import error_text
from ..text import fill


def _tr(text: str) -> str:
    return QCoreApplication.translate("AtpText", text)


def explanation() -> str:
    return _tr("AtP (attribution patching): each cell estimated to first order, (clean − corrupted activation) · "
               "gradient, from one backward pass of the corrupted run instead of one run a cell. It misses where "
               "attention saturates (a softmax weight near 1 has almost no gradient) and where the measure does "
               "(a corrupted p(answer) near 0).")


def refusal(error) -> str:
    """The AtP side's one line when the backward refused the model (the engine's error, translated)."""
    return fill(_tr("No AtP estimate: %1"), error_text(error))


def cell_name(grid: str, row: int, column: int, tokens) -> str:
    """“L3 “ Tower”” for a token grid's cell, “L3 H5” for a head's."""
    if grid == "head_z":
        return fill(_tr("L%1 H%2"), row, column)
    token = tokens[column] if 0 <= column < len(tokens) else str(column)
    return fill(_tr("L%1 “%2”"), row, token)


def agreement_line(title: str, grid: str, agreement, tokens) -> str:
    """“residual stream: r = 0.93 over 480 cells; apart most: L3 “ Tower” AtP 0.41 / exact 0.12, …”."""
    if agreement.compared < 2 or math.isnan(agreement.correlation):
        head = fill(_tr("%1: no correlation yet (%2 cells)"), title, agreement.compared)
    else:
        head = fill(_tr("%1: r = %2 over %3 cells"), title, f"{agreement.correlation:.3f}", agreement.compared)
    if not agreement.cells:
        return head
    cells = ", ".join(fill(_tr("%1 AtP %2 / exact %3"), cell_name(grid, r, c, tokens), f"{a:.3g}", f"{b:.3g}")
                      for r, c, a, b in agreement.cells)
    return fill(_tr("%1; apart most: %2"), head, cells)
