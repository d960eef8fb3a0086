"""The binding table (app/bindings.py): each field of the input form and the model bar is named
once and read, written and watched through it."""
from __future__ import annotations

import pytest
from PySide6.QtWidgets import QCheckBox, QComboBox, QSpinBox

from app import bindings
from app.panels.input_panel import ExactNumberBox
from engine import AttentionConfig


def test_read_write_and_changed_for_each_kind_of_widget(qtbot):
    combo, spin, check, exact = QComboBox(), QSpinBox(), QCheckBox(), ExactNumberBox(0, 2.0 ** 40, whole=True)
    combo.addItem("Shown A", "a")
    combo.addItem("Shown B", "b")
    spin.setRange(0, 99)
    seen = []
    for widget in (combo, spin, check, exact):
        bindings.changed(widget).connect(lambda *_, w=widget: seen.append(w))
    for widget, value in ((combo, "b"), (spin, 42), (check, True), (exact, 2.0 ** 35)):
        bindings.write(widget, value)
        assert bindings.read(widget) == value
    assert seen == [combo, spin, check, exact]  # each widget's own change signal, once


@pytest.mark.slow
def test_the_input_form_round_trips_every_bound_field(window):
    panel = window.panels["input"]
    config = AttentionConfig(text="the cat sat", tokenizer="whitespace", d_model=24, heads=3, seed=12345,
                             positional="rope", mask="causal", scale=False, temperature=2.5, weights="identity")
    panel.show_config(config)
    values = panel.values()
    assert set(panel.fields) | {"text"} == set(values)
    for name in values:
        assert values[name] == getattr(config, name), name
    assert window.controller.config != config  # shown, not applied: the signals were blocked
    assert window.wait_until_idle(30)


@pytest.mark.slow
def test_the_model_bar_follows_the_controller(window):
    assert set(window.model_bar.fields) == {"model", "layer"}
    assert bindings.read(window.model_combo) == window.controller.model
    assert bindings.read(window.layer_spin) == window.controller.layer
