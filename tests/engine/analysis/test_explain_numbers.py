"""Numbers a newcomer reads must be right."""
from __future__ import annotations

import pytest

from engine import AttentionConfig, compute
from engine.analysis.explain import explain

STREET = "The animal didn't cross the street because it was too tired."
ROAD = "The animal didn't cross the road because it was too tired."


def test_worked_arithmetic_names_the_true_number_of_keys(standalone_panel):
    from app.panels.arithmetic_panel import MAX_KEYS, ArithmeticPanel

    _, panel = standalone_panel(ArithmeticPanel, 500, 400)
    words = 60
    result = compute(AttentionConfig(text=" ".join(f"w{i}" for i in range(words)), tokenizer="whitespace",
                                     d_model=8, heads=2))
    assert result.n == words
    text = panel.render(explain(result, 0, 3, max_terms=MAX_KEYS))  # the worker lists MAX_KEYS keys only
    assert f"{words} keys: the {MAX_KEYS} with the largest weights" in text
    assert f"every sum includes all {words}." in text
    assert f"all {MAX_KEYS}." not in text


def test_worked_arithmetic_abridges_long_vectors_and_lays_out_a_page_once(standalone_panel, monkeypatch):
    from app.panels.arithmetic_panel import ArithmeticPanel, vector

    assert vector([0.5, -1.0, 2.0]) == "[0.500, -1.000, 2.000]"
    assert vector([float(i) for i in range(576)]) == "[0.000, 1.000, 2.000, 3.000, …, 575.000]"
    assert vector([0.0] * 6) == "[" + ", ".join(["0.000"] * 6) + "]"  # six terms: all shown
    _, panel = standalone_panel(ArithmeticPanel, 500, 400)
    result = compute(AttentionConfig(text="the cat sat", d_model=8, heads=2))
    pages = []
    monkeypatch.setattr(panel.view, "setHtml", pages.append)
    explanation = explain(result, 0, 1)
    panel.show_explanation(explanation)
    panel.show_explanation(explanation)  # the same page again (snapshot, explanation, cell in one edit)
    assert len(pages) == 1 and "the" in pages[0]
    panel.show_explanation(explain(result, 1, 2))
    assert len(pages) == 2 and pages[1] != pages[0]
    panel.show_explanation(None)
    panel.show_explanation(explanation)  # after the empty state the page is laid out again
    assert len(pages) == 3


@pytest.fixture
def compare(standalone_panel):
    from app.panels.compare_panel import ComparePanel

    return standalone_panel(ComparePanel, 1100, 500)[1]


def _settle(qtbot, panel):
    qtbot.waitUntil(lambda: bool(panel.controller.is_idle() and panel.is_idle()), timeout=20000)


def test_comparison_names_the_token_that_differs(qtbot, compare):
    compare.controller.set_config(AttentionConfig(text=STREET), immediate=True)
    compare.text_b.setText(ROAD)
    _settle(qtbot, compare)
    message = compare.no_difference.text()
    assert compare.difference_stack.currentWidget() is compare.no_difference
    assert "street" in message and "road" in message, message
    assert "(12 vs 12)" not in message


def test_comparison_summary_follows_the_selected_token(qtbot, compare):
    controller = compare.controller
    controller.set_config(AttentionConfig(text=STREET), immediate=True)
    compare.text_b.setText(ROAD)
    _settle(qtbot, compare)
    tokens = controller.snapshot.result.token_texts
    shared = [row.text for row in compare.comparison.shared]
    assert "animal" in shared and shared[0] != "animal"
    controller.select(focus=tokens.index("animal"))
    row = compare.comparison.shared[shared.index("animal")]
    assert compare.summary.text().startswith("<b>animal</b>")
    assert f"{row.cos_contextual:.4f}" in compare.summary.text()
    compare.table.selectRow(shared.index("tired"))  # a click on another row of the table
    assert "<b>tired</b>" in compare.summary.text()


def test_comparison_status_line_elides_a_long_sentence(qtbot, compare):
    long_text = " ".join(["The animal didn't cross the street because it was too tired."] * 12)
    compare.controller.set_config(AttentionConfig(text=long_text), immediate=True)
    compare.text_b.setText(ROAD)
    _settle(qtbot, compare)
    status = compare.status.text()
    assert status.startswith("A = ") and "…" in status and len(status) < 300


def _axis_text(plot, name: str) -> str:
    return plot.getAxis(name).labelString()


def test_layer_charts_have_plain_cosines_and_whole_layer_ticks(standalone_panel, qtbot):
    import numpy as np
    from PySide6.QtWidgets import QApplication

    from app.panels.layers_panel import LayersPanel

    _, panel = standalone_panel(LayersPanel, 900, 600)
    cosines = np.array([1.0, 0.84, 0.61, 0.45, 0.29, 0.33, 0.4])
    panel.comparison = {"pairs": [("apple", 3, 0)], "cosines": [cosines]}
    panel.word_combo.addItem("apple")
    panel._show_comparison()
    for plot in (panel.compare_plot, panel.curve_plot):
        plot.resize(600, 300)
    QApplication.processEvents()
    axis = panel.compare_plot.getAxis("left")
    assert "x0.001" not in _axis_text(panel.compare_plot, "left") and axis.autoSIPrefixScale == 1.0
    bottom = panel.compare_plot.getAxis("bottom")
    major, minor = bottom._tickLevels  # the ticks drawn (pyqtgraph's own would add 0.5, 1.5 …)
    assert [v for v, _ in major] == list(range(7)) and minor == []


def test_worked_arithmetic_never_shows_the_last_results_value_cell_with_a_new_result(standalone_panel, monkeypatch):
    """The value-weighted step ("5 ·") comes from a second worker job: until the new result's answer
    arrives, the page must not show the previous result's numbers under the same head and query."""
    from app.panels.arithmetic_panel import ArithmeticPanel

    _, panel = standalone_panel(ArithmeticPanel, 500, 400)
    pages = []
    monkeypatch.setattr(panel.view, "setHtml", pages.append)
    old = explain(compute(AttentionConfig(text="the cat sat", d_model=8, heads=2)), 0, 1)
    panel.show_explanation(old)
    panel._value_cell = dict(head=0, query=1, key=0, key_text="the", f=[1.0, 2.0], f_norm=9.876, alpha=0.5,
                             value_norm=4.938)  # the old result's answer, arrived
    panel.show_explanation(old)  # the same result again (a cell clicked): its value cell stays
    assert "9.876" in pages[-1]
    new = explain(compute(AttentionConfig(text="the dog ran", d_model=8, heads=2)), 0, 1)
    panel.show_explanation(new)
    assert "9.876" not in pages[-1] and "Value-weighted" not in pages[-1]
