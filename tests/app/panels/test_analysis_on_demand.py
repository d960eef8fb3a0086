"""A decoder's Analysis arrays (value norms, rollouts, head table, the switched-off heads' cosines)
are a worker job of their own, made for the snapshot on screen only while a view that reads them is
shown (a dock of the Analysis place, or the heatmap's value-weighted stage), with the snapshot's own
request; a newer snapshot drops an older job's answer. They were computed on every edit before,
whether or not a view read them (SmolLM2 at 376 tokens: ~0.7 s beside a ~30 ms KV-cached step)."""
from __future__ import annotations

import time

import numpy as np
import pytest

from app.jobs import trained
from engine.analysis.request import RunRequest
from engine.analysis.table import run_all
from engine.models import register_folder
from tests import FIXTURES
from tests.shared_helpers import settle

pytestmark = pytest.mark.slow  # a window

FOLDER = FIXTURES / "families" / "llama"  # a tiny decoder (grouped keys)
TEXT = "the cat sat on the mat"
OFF = frozenset({(0, 1)})


def _open(window, qtbot) -> str:
    name = register_folder(FOLDER)
    c = window.controller
    c.set_config(c.config.replace(text=TEXT), immediate=True)
    c.set_model(name)
    settle(window, qtbot)
    assert c.model == name and c.snapshot.model == name
    return name


def test_the_analysis_place_asks_for_a_decoders_arrays(window, qtbot):
    c = window.controller
    name = _open(window, qtbot)
    assert window.dock_groups.current != "analysis" and c.stage != "value_norms"
    assert c.snapshot.analysis is None  # no view reads them: not computed with the edit
    c.set_ablation(OFF)
    settle(window, qtbot)
    assert c.snapshot.analysis is None and c.snapshot.ablate == OFF
    window.dock_groups.select("analysis")
    settle(window, qtbot)
    analysis = c.snapshot.analysis
    assert analysis is not None and analysis.ablate == OFF
    model = trained.model(name)
    expected = run_all(model, RunRequest(text=TEXT, ablate=OFF))  # the engine's table on the same request
    np.testing.assert_allclose(analysis.value_norms, expected["value_norms"].value_norms, rtol=1e-6)
    assert not analysis.value_norms[0, 1].any() and analysis.value_norms[0, 0].any()  # head 0.1 moves nothing
    np.testing.assert_allclose(analysis.rollout, expected["rollout"].rollout, atol=1e-9)
    np.testing.assert_allclose(analysis.cosines, expected["ablation_cosines"].cosines, atol=1e-6)
    assert c.snapshot.value_thumbnails is not None  # the head grid's value-weighted thumbnails came with them
    rollout = window.panel("rollout")
    np.testing.assert_allclose(rollout.matrix(), analysis.rollout[-1], atol=1e-9)


def test_the_value_weighted_stage_asks_for_them(window, qtbot, monkeypatch):
    from app.jobs import analysis_job as jobs

    slow = jobs.with_analysis
    monkeypatch.setattr(jobs, "with_analysis", lambda *args: (time.sleep(0.5), slow(*args))[1])
    c = window.controller
    _open(window, qtbot)
    assert c.snapshot.analysis is None
    c.select(stage="value_norms")
    panel = window.panels["attention"]
    qtbot.waitUntil(lambda: c.analysis_pending(), timeout=10000)
    panel.refresh()
    assert panel.caption.text().startswith("softmax weights until value-weighted attention is computed")
    np.testing.assert_array_equal(panel.heatmap.matrix(), c.snapshot.result.weights[c.head])  # said, not mislabelled
    settle(window, qtbot)
    analysis = c.snapshot.analysis
    assert analysis is not None
    np.testing.assert_array_equal(panel.heatmap.matrix(), analysis.value_norms[c.layer, c.head])
    assert "until value-weighted" not in panel.caption.text()


def test_an_edit_drops_the_arrays_of_the_text_before(window, qtbot, monkeypatch):
    from app.jobs import analysis_job as jobs

    made = []
    slow = jobs.with_analysis

    def with_analysis(snapshot, earlier=None):
        time.sleep(0.5)  # still computing when the next edit's snapshot arrives
        made.append(snapshot.result.config.text)
        return slow(snapshot, earlier)

    monkeypatch.setattr(jobs, "with_analysis", with_analysis)
    c = window.controller
    _open(window, qtbot)
    window.dock_groups.select("analysis")
    qtbot.waitUntil(lambda: c.analysis_pending(), timeout=10000)
    longer = TEXT + " and the dog"
    c.set_config(c.config.replace(text=longer), immediate=True)
    settle(window, qtbot)
    snapshot = c.snapshot
    assert snapshot.result.config.text == longer
    assert snapshot.analysis is not None and snapshot.analysis.value_norms.shape[-1] == snapshot.result.n
    assert made[-1] == longer
    assert window.panel("rollout").matrix().shape == (snapshot.result.n, snapshot.result.n)


def test_another_layer_of_the_same_run_keeps_its_arrays(window, qtbot):
    from app.jobs.snapshot import THUMBNAIL_SIZE, block_average

    c = window.controller
    name = _open(window, qtbot)
    window.dock_groups.select("analysis")
    settle(window, qtbot)
    first = c.snapshot.analysis
    assert first is not None and c.layer == 0
    c.set_model(name, 1)
    settle(window, qtbot)
    assert c.snapshot.layer == 1
    assert c.snapshot.analysis is first  # not computed again for a layer of the same text
    np.testing.assert_array_equal(c.snapshot.value_thumbnails, block_average(first.value_norms[1], THUMBNAIL_SIZE))
    c.set_ablation(OFF)  # another run: its own arrays
    settle(window, qtbot)
    assert c.snapshot.analysis is not first and c.snapshot.analysis.ablate == OFF
