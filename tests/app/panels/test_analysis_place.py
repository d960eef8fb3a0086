"""The window's Analysis place and File → Export data on every model kind: the rollout, the head
dashboard and the switched-off heads on SmolLM2 (after a switch from MiniLM, whose picture must
not stay up), and Export data writing what ``./run export --model M`` writes for the model shown."""
from __future__ import annotations

import numpy as np
import pytest

from cli import commands as cli
from engine.analysis.arrays import analysis_arrays
from tests.shared_helpers import dock, settle

pytest.importorskip("gguf")

EIFFEL = "The Eiffel Tower is in the city of"  # nine SmolLM2 tokens
ANIMAL = "The animal didn't cross the street because it was too tired."
OFF = frozenset({(0, 1), (2, 4)})


def show(window, qtbot, model: str, text: str) -> None:
    window.controller.set_config(window.controller.config.replace(text=text), immediate=True)
    window.controller.set_model(model)
    settle(window, qtbot)


def cli_arrays(tmp_path, *args) -> dict:
    out = tmp_path / "cli.npz"
    assert cli.main(["main.py", "export", *args, "--out", str(out)]) == 0
    with np.load(out) as data:
        return {name: data[name] for name in data.files}


@pytest.mark.slow
def test_analysis_place_on_smollm2_after_minilm(window, qtbot, minilm_model, smollm2_model):
    rollout = dock(window, "rollout")
    dashboard = dock(window, "dashboard")
    ablation = dock(window, "ablation")
    show(window, qtbot, "minilm", ANIMAL)
    assert rollout.matrix() is not None  # MiniLM's rollout is up
    show(window, qtbot, "smollm2", EIFFEL)
    trace = smollm2_model.run(EIFFEL, use_cache=False)
    expected = analysis_arrays(trace, smollm2_model.weights,
                               special=smollm2_model.facts.special_mask(trace.token_texts))
    assert trace.n == 9
    # the rollout after the last layer is SmolLM2's, over SmolLM2's tokens (not MiniLM's left up)
    np.testing.assert_allclose(rollout.matrix(), expected["rollout"][-1], atol=1e-6)
    np.testing.assert_allclose(rollout.heatmap.matrix(), expected["rollout"][-1], atol=1e-6)
    assert rollout.layer.maximum() == 29
    assert "“" in rollout.caption.text() and "[CLS]" not in rollout.caption.text()
    # the head dashboard on nine tokens: a row per head, no "too many tokens"
    assert dashboard.table_model.rowCount() == 30 * 9
    np.testing.assert_array_equal(dashboard.table(), expected["head_stats"])
    assert "Too many" not in dashboard.caption.text()
    # switched-off heads are listed, with their cosines
    window.controller.set_ablation(OFF)
    settle(window, qtbot)
    assert "L0H1" in ablation.status.text() and "L2H4" in ablation.status.text(), ablation.status.text()
    ablated = smollm2_model.run(EIFFEL, ablate=OFF, use_cache=False)
    cosines = ablation.bars.opts["height"]
    first = trace.hidden_states[-1].astype(np.float64)
    second = ablated.hidden_states[-1].astype(np.float64)
    loop = [first[i] @ second[i] / np.linalg.norm(first[i]) / np.linalg.norm(second[i]) for i in range(trace.n)]
    np.testing.assert_allclose(cosines, loop, atol=1e-5)


@pytest.mark.slow
def test_export_data_on_smollm2_writes_what_export_writes(window, qtbot, tmp_path, smollm2_model):
    show(window, qtbot, "smollm2", EIFFEL)
    out = tmp_path / "window.npz"
    window.export_data(str(out))
    assert window.controller.worker.wait_until_idle(60)
    expected = cli_arrays(tmp_path, "--model", "smollm2", "--text", EIFFEL)
    with np.load(out) as data:
        assert sorted(data.files) == sorted(expected), (sorted(data.files), sorted(expected))
        for name in expected:
            if expected[name].dtype.kind in "fc":
                np.testing.assert_allclose(data[name], expected[name], atol=1e-6, err_msg=name)
            else:
                np.testing.assert_array_equal(data[name], expected[name], err_msg=name)
    for name in ("value_norms", "rollout", "value_rollout", "head_stats", "attentions", "next_token_logits"):
        assert name in expected, name


@pytest.mark.slow
def test_flow_then_rollout_never_shows_one_under_the_others_label(window, qtbot, smollm2_model):
    rollout = dock(window, "rollout")
    show(window, qtbot, "smollm2", EIFFEL)
    expected = rollout.matrix()
    rollout.kind.setCurrentIndex(rollout.kind.findData("flow"))
    assert rollout.heatmap.matrix() is None or rollout.flow() is not None  # computing: no rollout under "flow"
    settle(window, qtbot)
    flow = rollout.flow()
    np.testing.assert_allclose(rollout.heatmap.matrix(), flow)
    rollout.kind.setCurrentIndex(rollout.kind.findData("rollout"))
    np.testing.assert_allclose(rollout.heatmap.matrix(), expected)  # the rollout again, under its own label
    assert "flow" not in rollout.caption.text() and "where" in rollout.plot.plotItem.titleLabel.text


@pytest.mark.slow
def test_over_the_token_limit_the_panels_say_so_and_keep_no_picture(window, qtbot):
    rollout, dashboard = dock(window, "rollout"), dock(window, "dashboard")
    settle(window, qtbot)
    assert rollout.heatmap.matrix() is not None  # a picture of the short default text
    window.controller.set_config(window.controller.config.replace(text=" ".join(["a"] * 1025)), immediate=True)
    settle(window, qtbot)
    assert window.controller.snapshot.result.n == 1025
    assert rollout.heatmap.matrix() is None and rollout.matrix() is None
    assert "at most 1024 tokens; this text has 1025" in rollout.caption.text(), rollout.caption.text()
    assert "at most 1024 tokens; this text has 1025" in dashboard.caption.text()
    assert dashboard.table_model.rowCount() == 0


def test_heads_the_model_lacks_are_one_line(qtbot):
    from app.jobs.snapshot import take_snapshot
    from engine import AttentionConfig
    from engine.core.errors import EngineError

    with pytest.raises(EngineError) as raised:
        take_snapshot(AttentionConfig(text="a b c", heads=2, d_model=8), ablate=frozenset({(0, 3)}))
    assert "layer 0 head 3" in str(raised.value) and "heads 0 … 1" in str(raised.value)
    assert "\n" not in str(raised.value)
