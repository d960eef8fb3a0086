"""Cell inspector: inspect_cell's numbers against an independent float64 recomputation, and the panel."""
from __future__ import annotations

import math

import numpy as np
import pytest

from engine import AttentionConfig, EngineError, compute
from engine.analysis.inspect import inspect_cell

CONFIGS = [
    AttentionConfig(text="小明 喜欢 苹果", tokenizer="whitespace", d_model=8, heads=2),
    AttentionConfig(text="我 爱 北 京", tokenizer="whitespace", d_model=12, heads=3, mask="causal"),
    AttentionConfig(text="the cat sat on the mat", d_model=16, heads=2, positional="rope", mask="causal"),
    AttentionConfig(text="I ate the cake and it was delicious.", d_model=16, heads=4, scale=False, temperature=0.7),
    AttentionConfig(text="I ate the cake", d_model=32, heads=2, temperature=2.5, seed=7),
]


def reference_row(result, head: int, query: int) -> np.ndarray:
    """The loop-free textbook formula, in float64, from the trace's q and k only."""
    config = result.config
    q = result.q[head, query].astype(np.float64)  # (d_k,)
    keys = result.k[head].astype(np.float64)  # (n, d_k)
    scores = keys @ q  # (n,)
    divisor = (math.sqrt(config.d_k) if config.scale else 1.0) * config.temperature
    scaled = scores / divisor
    if config.mask == "causal":
        scaled[np.arange(result.n) > query] = -np.inf
    exps = np.exp(scaled - scaled.max())
    return exps / exps.sum()  # (n,)


@pytest.mark.parametrize("config", CONFIGS, ids=lambda c: f"{c.mask}-{c.positional}-scale{c.scale}-T{c.temperature}")
def test_weight_recomputed_from_q_and_keys(config):
    result = compute(config)
    heads, n = result.weights.shape[0], result.n
    for head in range(heads):
        for query in range(n):
            expected = reference_row(result, head, query)  # (n,)
            shares = 0.0
            for key in range(n):
                cell = inspect_cell(result, head, query, key)
                assert abs(cell.weight - expected[key]) <= 1e-6
                assert abs(cell.weight - float(result.weights[head, query, key])) <= 1e-6
                assert cell.engine_weight == float(result.weights[head, query, key])
                # products sum to the dot product, which is the engine's score
                np.testing.assert_array_equal(cell.q_i, result.q[head, query].astype(np.float64))
                np.testing.assert_array_equal(cell.k_j, result.k[head, key].astype(np.float64))
                np.testing.assert_allclose(cell.products, cell.q_i * cell.k_j, rtol=0, atol=0)
                assert cell.dot == pytest.approx(float(cell.products.sum()), rel=1e-12, abs=1e-12)
                assert cell.dot == pytest.approx(float(result.scores[head, query, key]), rel=1e-5, abs=1e-5)
                # scale, softmax pieces
                assert cell.divisor == pytest.approx((math.sqrt(config.d_k) if config.scale else 1) * config.temperature)
                if not cell.masked:
                    assert cell.scaled == pytest.approx(cell.dot / cell.divisor, rel=1e-12)
                    assert cell.exp_term == pytest.approx(math.exp(cell.scaled - cell.row_max), rel=1e-12)
                assert cell.weight == pytest.approx(cell.exp_term / cell.normaliser, rel=1e-12, abs=0)
                # the value side
                np.testing.assert_array_equal(cell.v_j, result.v[head, key].astype(np.float64))
                np.testing.assert_allclose(cell.weighted_v, cell.weight * cell.v_j, rtol=1e-12, atol=0)
                np.testing.assert_array_equal(cell.output, result.head_outputs[head, query].astype(np.float64))
                shares += cell.share
            assert shares == pytest.approx(1.0, abs=1e-9), "the shares of a row decompose its output exactly"


def test_masked_cell_has_weight_and_exp_exactly_zero():
    result = compute(CONFIGS[1])  # causal
    for query in range(result.n):
        for key in range(query + 1, result.n):
            cell = inspect_cell(result, 1, query, key)
            assert cell.masked
            assert cell.weight == 0.0 and cell.exp_term == 0.0
            assert cell.scaled == -math.inf and cell.engine_scaled == -math.inf
            assert cell.engine_weight == 0.0
            assert not cell.weighted_v.any()
            assert cell.share == 0.0
        assert not inspect_cell(result, 1, query, query).masked


def test_seed_000_hand_calculation():
    """Seed 000: W = I, X = [[1,0],[0,1],[1,1]], no √d_k: 喜欢's weights [0.16, 0.42, 0.42], new 喜欢 [0.58, 0.84]."""
    config = AttentionConfig(text="小明 喜欢 苹果", tokenizer="whitespace", d_model=2, heads=1, positional="none",
                             scale=False, weights="identity",
                             embeddings={"小明": [1, 0], "喜欢": [0, 1], "苹果": [1, 1]})
    result = compute(config)
    cells = [inspect_cell(result, 0, 1, key) for key in range(3)]
    assert [c.dot for c in cells] == [0.0, 1.0, 1.0]
    assert [round(c.weight, 3) for c in cells] == [0.155, 0.422, 0.422]
    np.testing.assert_allclose(cells[0].output, [0.578, 0.845], atol=1e-3)
    np.testing.assert_allclose(sum(c.weighted_v for c in cells), cells[0].output, atol=1e-6)
    assert cells[0].row_max == 1.0
    assert cells[0].exp_term == pytest.approx(math.exp(-1)) and cells[1].exp_term == 1.0
    assert cells[0].normaliser == pytest.approx(2 + math.exp(-1), rel=1e-12)


def test_bad_indices_are_engine_errors():
    result = compute(CONFIGS[0])
    for args in ((2, 0, 0), (0, 3, 0), (0, 0, -1)):
        with pytest.raises(EngineError):
            inspect_cell(result, *args)


def test_inspection_is_read_only():
    cell = inspect_cell(compute(CONFIGS[0]), 0, 0, 1)
    with pytest.raises(ValueError):
        cell.q_i[0] = 1.0
    with pytest.raises(AttributeError):
        cell.weight = 0.5  # type: ignore[misc]


# ---------------------------------------------------------------------- panel
@pytest.fixture
def inspector(standalone_panel):
    from app.panels.inspector_panel import InspectorPanel

    return standalone_panel(InspectorPanel, 900, 500)


def wait_for(qtbot, controller, panel, head: int, query: int, key: int) -> None:
    def ready() -> bool:
        c = panel.inspection
        return (controller.is_idle() and c is not None and (c.head, c.query, c.key) == (head, query, key)
                and panel.inspected_result is controller.snapshot.result)

    qtbot.waitUntil(ready, timeout=10000)


def test_panel_shows_the_inspected_numbers(qtbot, inspector):
    controller, panel = inspector
    config = CONFIGS[1]  # causal, 3 heads
    controller.set_config(config, immediate=True)
    qtbot.waitUntil(lambda: controller.is_idle(), timeout=10000)
    controller.select(head=2)
    controller.inspect(3, 1)
    wait_for(qtbot, controller, panel, 2, 3, 1)
    result = compute(config)
    expected = reference_row(result, 2, 3)
    assert panel.dimensions.rowCount() == config.d_k + 1
    products = [float(panel.dimensions.item(c, 3).text()) for c in range(config.d_k)]
    np.testing.assert_allclose(products, result.q[2, 3].astype(np.float64) * result.k[2, 1], rtol=1e-3, atol=1e-4)
    assert float(panel.value_text("dot")) == pytest.approx(float(result.scores[2, 3, 1]), rel=1e-5, abs=1e-6)
    assert float(panel.dimensions.item(config.d_k, 3).text()) == pytest.approx(float(result.scores[2, 3, 1]), rel=1e-5)
    assert float(panel.value_text("divisor")) == pytest.approx(math.sqrt(config.d_k))
    assert float(panel.value_text("weight")) == pytest.approx(expected[1], abs=1e-6)
    assert float(panel.value_text("weight")) == pytest.approx(float(result.weights[2, 3, 1]), abs=1e-6)
    assert float(panel.value_text("exp")) / float(panel.value_text("normaliser")) == pytest.approx(expected[1], rel=1e-5)
    assert panel.value_text("mask") == "visible"
    assert panel.value_text("share").endswith("%")
    assert "“爱”" in panel.header.text() and "“京”" in panel.header.text()

    controller.inspect(1, 3)  # a future key under the causal mask
    wait_for(qtbot, controller, panel, 2, 1, 3)
    assert panel.value_text("weight") == "0" and panel.value_text("exp") == "0"
    assert panel.value_text("scaled") == "−∞"
    assert "−∞" in panel.value_text("mask")

    controller.select(head=0)  # the inspector follows the selected head
    wait_for(qtbot, controller, panel, 0, 1, 3)
    controller.inspect(2, 0)
    wait_for(qtbot, controller, panel, 0, 2, 0)
    assert float(panel.value_text("weight")) == pytest.approx(float(result.weights[0, 2, 0]), abs=1e-6)


def test_panel_follows_a_new_sentence(qtbot, inspector):
    controller, panel = inspector
    controller.set_config(CONFIGS[0], immediate=True)
    qtbot.waitUntil(lambda: controller.is_idle(), timeout=10000)
    controller.inspect(2, 0)
    wait_for(qtbot, controller, panel, 0, 2, 0)
    config = CONFIGS[0].replace(text="苹果 发布 了 新 手机")
    controller.set_config(config, immediate=True)
    wait_for(qtbot, controller, panel, 0, 2, 0)
    result = compute(config)
    assert float(panel.value_text("weight")) == pytest.approx(float(result.weights[0, 2, 0]), abs=1e-6)
    assert "“了”" in panel.header.text()
