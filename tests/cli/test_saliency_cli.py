"""``export --saliency`` and ``patch --approx`` on a tiny GGUF decoder (tests/tiny_gguf.py): the keys
docs/FORMAT.md names, the target read back against the model's own forward, switched-off heads
honoured, and bad flags refused with one line and exit 2 before anything is written."""
from __future__ import annotations

import subprocess

import numpy as np
import pytest

pytest.importorskip("gguf")
pytest.importorskip("tokenizers")

from engine.models.smollm2 import load_gguf  # noqa: E402
from tests.tiny_gguf import TEXT, write_tiny_gguf  # noqa: E402


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    path = tmp_path_factory.mktemp("saliency") / "tiny-llama.gguf"
    write_tiny_gguf(path, "llama", seed=5)
    return path


def run(capsys, command: str, *args):
    from cli import commands as cli

    code = cli.main(["main.py", command, *args])
    captured = capsys.readouterr()
    return subprocess.CompletedProcess(args, code, captured.out, captured.err)


def log_p(logits: np.ndarray, token: int) -> float:
    logits = np.asarray(logits, np.float64)
    return float(logits[token] - logits.max() - np.log(np.exp(logits - logits.max()).sum()))


def test_export_saliency_writes_the_target_of_the_run_it_exports(tiny, tmp_path, capsys):
    model = load_gguf(tiny)
    answer = " cat"
    answer_id = int(model.tokenizer.tokens(answer)[0][0])
    out = tmp_path / "s.npz"
    done = run(capsys, "export", "--model", str(tiny), "--text", TEXT, "--saliency", "--answer", answer,
               "--ablate", "1.2", "--out", str(out))
    assert done.returncode == 0, done.stderr
    ablated = model.run(TEXT, ablate={(1, 2)}, use_cache=False)
    with np.load(out) as data:
        assert data["saliency"].shape == (len(ablated.input_ids),) and data["saliency"].dtype == np.float64
        assert str(data["saliency_method"]) == "ixg"
        assert float(data["saliency_target"]) == pytest.approx(log_p(ablated.next_token_logits, answer_id), abs=1e-5)
        assert "ig_completeness" not in data.files
    assert "saliency (ixg) of log p(' cat')" in done.stdout


def test_export_integrated_gradients_prints_and_writes_completeness(tiny, tmp_path, capsys):
    out = tmp_path / "ig.npz"
    done = run(capsys, "export", "--model", str(tiny), "--text", TEXT, "--saliency", "--method", "ig",
               "--ig-steps", "64", "--answer", " cat", "--out", str(out))
    assert done.returncode == 0, done.stderr
    with np.load(out) as data:
        completeness = float(data["ig_completeness"])
        assert str(data["saliency_method"]) == "ig"
    assert f"completeness {completeness:+.3g}" in done.stdout and "over 64 steps from zero" in done.stdout


@pytest.mark.parametrize("flags,message", [
    (["--saliency", "--answer", " cat", "--method", "ig", "--ig-steps", "0"], "--ig-steps must be at least 1"),
    (["--saliency", "--answer", " cat", "--method", "ig", "--ig-steps", "1000000"], "1 … "),
    (["--method", "ig"], "options of --saliency"),
    (["--saliency"], "--saliency needs --answer"),
    (["--saliency", "--answer", " cat", "--ig-steps", "8"], "(--method ig)"),
    (["--saliency", "--answer", " cat", "--method", "ig", "--baseline", "pad"], "--baseline is zero or a token id"),
])
def test_bad_saliency_flags_exit_2_with_one_line_and_no_file(tiny, tmp_path, capsys, flags, message):
    out = tmp_path / "bad.npz"
    done = run(capsys, "export", "--model", str(tiny), "--text", TEXT, *flags, "--out", str(out))
    assert done.returncode == 2
    assert message in done.stderr and len(done.stderr.strip().splitlines()) == 1
    assert not out.exists()


def test_by_words_adds_the_pieces_sum_per_word(tiny, tmp_path, capsys):
    out = tmp_path / "w.npz"
    done = run(capsys, "export", "--model", str(tiny), "--text", TEXT, "--saliency", "--answer", " cat", "--by", "words",
               "--out", str(out))
    assert done.returncode == 0, done.stderr
    with np.load(out) as data:
        expected = np.zeros(len(data["words"]))
        for piece, word in enumerate(data["word_index"]):
            expected[word] += data["saliency"][piece]
        np.testing.assert_allclose(data["word_saliency"], expected, rtol=1e-12)
        assert len(data["words"]) < len(data["saliency"])  # some word has several pieces here


def test_an_answer_of_several_tokens_is_measured_by_its_first_with_a_note(tiny, tmp_path, capsys):
    done = run(capsys, "export", "--model", str(tiny), "--text", TEXT, "--saliency", "--answer", " the cat",
               "--out", str(tmp_path / "n.npz"))
    assert done.returncode == 0, done.stderr
    assert "note: the answer ' the cat' is 2 tokens" in done.stderr


def test_patch_approx_writes_every_grid_with_the_atp_suffix(tiny, tmp_path, capsys):
    out = tmp_path / "p.npz"
    done = run(capsys, "patch", "--model", str(tiny), "--clean", TEXT, "--corrupt", " the the sat on the mat",
               "--answer", " cat", "--approx", "--out", str(out))
    assert done.returncode == 0, done.stderr
    with np.load(out) as data:
        for grid in ("resid_pre", "attn_out", "mlp_out", "head_z"):
            for suffix in ("", "_logit_diff"):
                estimate, exact = data[f"{grid}{suffix}_atp"], data[f"{grid}{suffix}"]
                assert estimate.shape == exact.shape and np.isfinite(estimate).all()
        # resid_pre at layer 0 of an unchanged token: clean and corrupted inputs are equal, so is the estimate
        p = float(data["corrupt_p"])
        same = [i for i, (a, b) in enumerate(zip(data["tokens"], data["corrupt_tokens"])) if a == b]
        np.testing.assert_allclose(data["resid_pre_atp"][0, same], p, rtol=1e-4)  # the engine.grad forward beside model.run
    refused = run(capsys, "patch", "--model", str(tiny), "--clean", TEXT, "--corrupt", " the the sat on the mat",
                  "--answer", " cat", "--approx", "--out", str(tmp_path / "p.csv"))
    assert refused.returncode == 2 and "--approx writes its grids to .npz or .json" in refused.stderr
