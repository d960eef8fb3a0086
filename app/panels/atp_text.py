"""The lines the patching dock writes beside its attribution-patching (AtP) grids: what AtP is and
where it fails, and per grid its correlation with the exact grid and the cells where they differ
most (app.jobs.atp computes them in the worker; here they only become text)."""
from __future__ import annotations

import math

from PySide6.QtCore import QCoreApplication

translate = QCoreApplication.translate

from ..i18n import error_text
from ..text import fill


def explanation() -> str:
    """What AtP is and where it fails, in full (the AtP line's tooltip)."""
    return translate(
        "AtpText",
        "AtP (attribution patching): each cell estimated to first order, (clean − corrupted activation) · "
        "gradient, from one backward pass of the corrupted run instead of one run a cell. It misses where "
        "attention saturates (a softmax weight near 1 has almost no gradient) and where the measure does "
        "(a corrupted p(answer) near 0).")


def summary() -> str:
    """The same in one line, above the agreement lines."""
    return translate("AtpText", "AtP: a first-order estimate of each cell from one backward pass; it misses where "
                                "attention saturates and where the corrupted p(answer) is near 0.")


def refusal(error) -> str:
    """The AtP side's one line when the backward refused the model (the engine's error, translated)."""
    return fill(translate("AtpText", "No AtP estimate: %1"), error_text(error))


def cell_name(grid: str, row: int, column: int, tokens) -> str:
    """“L3 “ Tower”” for a token grid's cell, “L3 H5” for a head's."""
    if grid == "head_z":
        return fill(translate("AtpText", "L%1 H%2"), row, column)
    token = tokens[column] if 0 <= column < len(tokens) else str(column)
    return fill(translate("AtpText", "L%1 “%2”"), row, token)


def agreement_line(title: str, grid: str, agreement, tokens) -> str:
    """“residual stream: r = 0.93 over 480 cells; AtP / exact where they differ most: L3 “ Tower” 0.41 / 0.12”"""
    if agreement.compared < 2 or math.isnan(agreement.correlation):
        head = fill(translate("AtpText", "%1: no correlation yet (%2 cells)"), title, agreement.compared)
    else:
        head = fill(translate("AtpText", "%1: r = %2 over %3 cells"), title, f"{agreement.correlation:.3f}",
                    agreement.compared)
    if not agreement.cells:
        return head
    cells = ", ".join(f"{cell_name(grid, r, c, tokens)} {a:.2g} / {b:.2g}" for r, c, a, b in agreement.cells)
    return fill(translate("AtpText", "%1; AtP / exact where they differ most: %2"), head, cells)
