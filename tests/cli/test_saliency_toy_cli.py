"""``export --saliency`` on the toy engine: the saliency of the run's own settings, its target (the
cosine of the mean output to --answer's, with the same heads off) read back against the toy's own
forward, and integrated gradients refused with one line and exit 2 before anything is written."""
from __future__ import annotations

import numpy as np
import pytest

from engine import compute
from engine.toy.config import AttentionConfig

TEXT, ANSWER = "the cat sat on the mat", "a dog ran to the park"
SETTINGS = ["--d-model", "16", "--heads", "2", "--seed", "3", "--mask", "causal", "--positional", "rope"]


def run(capsys, *args):
    from cli import commands as cli

    code = cli.main(["main.py", "export", *args])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_toy_saliency_is_of_the_exported_settings_and_heads(tmp_path, capsys):
    out = tmp_path / "toy.npz"
    code, stdout, stderr = run(capsys, "--text", TEXT, *SETTINGS, "--ablate", "0.1", "--saliency", "--answer",
                               ANSWER, "--method", "grad", "--out", str(out))
    assert code == 0, stderr
    config = AttentionConfig(text=TEXT, d_model=16, heads=2, seed=3, mask="causal", positional="rope")
    mean = compute(config, ablate={(0, 1)}).output.astype(np.float64).mean(axis=0)  # (d,)
    reference = compute(config.replace(text=ANSWER), ablate={(0, 1)}).output.astype(np.float64).mean(axis=0)
    with np.load(out) as data:
        assert data["saliency"].shape == (6,) and data["saliency"].dtype == np.float64
        assert (data["saliency"] > 0).all()  # gradient norms
        assert str(data["saliency_method"]) == "grad" and "ig_completeness" not in data.files
        cosine = mean @ reference / np.linalg.norm(mean) / np.linalg.norm(reference)
        assert float(data["saliency_target"]) == pytest.approx(cosine, abs=1e-6)
    assert "saliency (grad) of cosine of the sentence embedding" in stdout


def test_toy_integrated_gradients_exit_2_with_one_line_and_no_file(tmp_path, capsys):
    out = tmp_path / "ig.npz"
    code, _, stderr = run(capsys, "--text", TEXT, *SETTINGS, "--saliency", "--answer", ANSWER, "--method", "ig",
                          "--out", str(out))
    assert code == 2
    assert "integrated gradients need a baseline" in stderr and len(stderr.strip().splitlines()) == 1
    assert not out.exists()
