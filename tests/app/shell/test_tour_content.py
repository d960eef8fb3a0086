"""The window tour, by content: after every model switch each visible panel shows numbers of the
model on screen (a cell inspector kept the previous model's head and cell through a
switch, and the tour only checked exceptions and sizes).

The tour goes toy (12 heads) → each installed model → toy (4 heads) → …, and before every
switch selects the last head, the last token and the bottom-right cell, so that anything kept from
the model before is out of range or from another text on the next one.
"""
from __future__ import annotations

import numpy as np
import pytest
from PySide6.QtWidgets import QApplication

pytestmark = pytest.mark.slow  # every installed model in one window

TEXT = "The animal didn't cross the street because it was tired."
DOCKS = ("tokens", "attention", "heads", "arithmetic", "inspector")


def _installed(request) -> list[str]:
    names = []
    for name in ("minilm", "e5", "smollm2"):
        try:
            request.getfixturevalue(f"{name}_model")
        except pytest.skip.Exception:
            continue
        names.append(name)
    return names


def _settle(window, qtbot) -> None:
    assert window.wait_until_idle(120)
    for key in DOCKS:
        panel = window.panel(key)
        if hasattr(panel, "is_idle"):
            qtbot.waitUntil(lambda: bool(panel.is_idle()), timeout=60000)
    inspector = window.panel("inspector")
    qtbot.waitUntil(lambda: inspector.controller.worker.is_idle(), timeout=60000)
    for _ in range(3):  # deferred panel updates: one event-loop turn each
        QApplication.processEvents()
    assert window.wait_until_idle(120)


def _check_panels(window, model: str, explanations: list) -> None:
    c = window.controller
    snapshot = c.snapshot
    assert snapshot.model == model
    result = snapshot.result
    heads, n = result.weights.shape[0], result.n
    texts = [token.text for token in result.tokens]
    where = f"after switching to {model} ({heads} heads, {n} tokens)"
    assert c.head < heads and c.focus < n and max(c.cell) < n, (where, c.head, c.focus, c.cell)
    # the heatmap: this model's matrix of the selected head
    shown = window.panels["attention"].heatmap.matrix()
    expected = snapshot.display_of(c.stage, c.head)
    expected = snapshot.stage_matrix(c.stage)[c.head] if expected is None else expected
    assert shown.shape == expected.shape, where
    np.testing.assert_allclose(shown, expected, atol=1e-6, err_msg=where)
    # the head grid: one thumbnail per head of this model
    grid = window.panel("heads")
    assert len(grid.views) == heads, where
    assert all(h < heads for h in grid.switched_off()), where
    # the token chips: this text's tokens
    tokens = window.panel("tokens")
    assert tokens.count() == n, where
    # the cell inspector: computed from the result on screen, head and cell within it
    inspector = window.panel("inspector")
    if inspector.inspection is not None:
        assert inspector.inspected_result is result, f"{where}: the inspector shows another result"
        i = inspector.inspection
        assert i.head < heads and i.query < n and i.key < n, (where, i.head, i.query, i.key)
        assert (i.query_text, i.key_text) == (texts[i.query], texts[i.key]), where
        header = inspector.header.text()
        assert header.startswith(f"Head {i.head} ") and f"#{i.query} " in header, (where, header)
    # the worked arithmetic: the last explanation is of this model's head and token
    if explanations and explanations[-1] is not None:
        e = explanations[-1]
        assert e.head < heads and e.query_index < n, (where, e.head, e.query_index)
        assert e.query_text == texts[e.query_index], where


def _select_the_far_corner(window) -> None:
    c = window.controller
    result = c.snapshot.result
    c.select(head=result.weights.shape[0] - 1)
    c.inspect(result.n - 1, result.n - 1)


def test_every_panel_shows_the_model_on_screen_after_each_switch(window, qtbot, request):
    models = _installed(request)
    if not models:
        pytest.skip("no pretrained model installed: the tour needs two models")
    c = window.controller
    explanations = []
    c.explanationChanged.connect(explanations.append)
    window.resize(1500, 950)
    for key in DOCKS:
        window.docks[key].show()
        window.panel(key)
    c.set_config(c.config.replace(text=TEXT, heads=12, d_model=48), immediate=True)
    _settle(window, qtbot)
    tour = []
    for name in models:
        tour += [name, "toy"]
    tour += list(reversed(models))  # from one pretrained model straight to another
    for model in ["toy"] + tour:
        if model != "toy" or c.model != "toy":
            window.model_combo.setCurrentIndex(window.model_combo.findData(model))
        _settle(window, qtbot)
        _check_panels(window, model, explanations)
        _select_the_far_corner(window)
        _settle(window, qtbot)
        _check_panels(window, model, explanations)
        if model == "toy" and c.config.heads == 12:
            c.set_config(c.config.replace(heads=4, d_model=16), immediate=True)  # fewer heads than any model
            _settle(window, qtbot)
