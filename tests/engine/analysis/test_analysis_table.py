"""The table of analyses (engine/analysis/table.py): one forward run shared by every analysis of
a request, no two analyses writing the same export key, and NotApplicable with its reason for a
kind an analysis does not read or a text over its token limit."""
from __future__ import annotations

import numpy as np

from engine import AttentionConfig
from engine.analysis.request import NotApplicable, RunRequest
from engine.analysis.runs import Runs
from engine.analysis.table import ANALYSES, BY_NAME, export_arrays, run_all, run_analysis
from engine.models.toy import ToyModel


class CountingToy(ToyModel):
    """The toy engine, counting its forward runs."""

    runs = 0

    def _forward(self, tokenized, **options):
        CountingToy.runs += 1
        return super()._forward(tokenized, **options)


def test_every_analysis_of_a_request_shares_its_two_runs():
    model = CountingToy(AttentionConfig(text="the cat sat"))
    CountingToy.runs = 0
    results = run_all(model, RunRequest(text="the cat sat", ablate=frozenset({(0, 1)}), by_words=True))
    assert CountingToy.runs == 2  # the run with the head off, and the plain one for its effect
    assert set(results) == set(BY_NAME)


def test_no_two_analyses_write_the_same_key():
    model = ToyModel(AttentionConfig(text="the cat sat"))
    runs = Runs(model, RunRequest(text="the cat sat", ablate=frozenset({(0, 1)}), by_words=True))
    seen = {}
    for row in ANALYSES:
        result = run_analysis(row.name, model, runs=runs)
        if isinstance(result, NotApplicable):
            continue
        for key in result.arrays():
            assert key not in seen, (key, row.name, seen.get(key))
            seen[key] = row.name
    assert len(export_arrays(run_all(model, runs=runs))) == len(seen)


def test_a_kind_an_analysis_does_not_read_is_one_line_naming_it():
    model = ToyModel(AttentionConfig(text="the cat sat"))
    result = run_analysis("logit_lens", model, RunRequest(text="the cat sat"))
    assert isinstance(result, NotApplicable)
    assert str(result.reason) == "the logit lens reads decoder models, not toy models (toy)"


def test_over_the_token_limit_rollout_says_the_limit_and_value_norms_still_apply():
    text = " ".join(["a"] * 1025)
    model = ToyModel(AttentionConfig(text=text, d_model=8, heads=2))
    results = run_all(model, RunRequest(text=text))
    assert isinstance(results["rollout"], NotApplicable)
    assert "at most 1024 tokens; this text has 1025" in str(results["rollout"].reason)
    assert isinstance(results["head_stats"], NotApplicable)
    norms = results["value_norms"].value_norms
    assert norms.shape == (1, 2, 1025, 1025) and np.isfinite(norms).all()
