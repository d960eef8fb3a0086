"""``export --ablate`` for every kind of model: a decoder's
export is the ablated run (a hook on hook_z), a head the model lacks or a malformed value exits 2
with one line naming the model's layers × heads. The decoder is a tiny GGUF file (tests/tiny_gguf.py)."""
from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

gguf = pytest.importorskip("gguf")
pytest.importorskip("tokenizers")

from tests import ROOT  # noqa: E402
from engine.models.smollm2 import load_gguf  # noqa: E402
from tests.shared_helpers import open_tiny_gguf  # noqa: E402
from tests.tiny_gguf import HEADS, LAYERS, TEXT, write_tiny_gguf  # noqa: E402

MAIN = str(ROOT / "main.py")


def _run(*args):
    env = dict(os.environ, PYTHONUTF8="1")
    return subprocess.run([sys.executable, MAIN, "export", *args], capture_output=True, text=True, timeout=120, env=env)


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    path = tmp_path_factory.mktemp("cli") / "tiny-llama.gguf"
    write_tiny_gguf(path, "llama", seed=5)
    return path


@pytest.mark.slow
def test_decoder_export_is_the_ablated_run(tiny, tmp_path):
    out = tmp_path / "d.npz"
    done = _run("--model", str(tiny), "--text", TEXT, "--ablate", "1.2,0.3", "--out", str(out))
    assert done.returncode == 0, done.stderr
    model = load_gguf(tiny)
    ablated = model.run(TEXT, ablate={(1, 2), (0, 3)}, use_cache=False)
    plain = model.run(TEXT, use_cache=False)
    with np.load(out) as data:
        np.testing.assert_array_equal(data["next_token_logits"], ablated.next_token_logits)
        np.testing.assert_array_equal(data["attentions"], ablated.attentions)
        assert np.abs(data["next_token_logits"] - plain.next_token_logits).max() > 1e-3  # ignoring --ablate fails


def _run_in_process(capsys, *args):
    """The command line's main() in this process (no fresh interpreter: ~1 s less each); the
    exit paths as real processes are the tests around this one."""
    from cli import commands as cli

    code = cli.main(["main.py", "export", *args])
    captured = capsys.readouterr()
    return subprocess.CompletedProcess(args, code, captured.out, captured.err)


@pytest.mark.parametrize("value", ["99.99", "2.0", "0.4", "a.b", "-1.0", "².1", "1", "1.2.3", ""])
def test_bad_ablate_values_exit_2_with_one_line(tiny, tmp_path, value, capsys):
    out = tmp_path / "x.npz"
    done = _run_in_process(capsys, "--model", str(tiny), "--text", TEXT, "--ablate", value, "--out", str(out))
    if value == "":  # no heads given: the plain run
        assert done.returncode == 0, done.stderr
        return
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), done.stderr
    assert not out.exists()
    if value in ("99.99", "2.0", "0.4"):
        assert f"{LAYERS} × {HEADS} (layers × heads" in lines[0], lines[0]
    else:
        assert "layer.head pairs of whole numbers" in lines[0] and repr(value) in lines[0], lines[0]


@pytest.mark.slow
def test_bad_ablate_value_as_a_process_exits_2_with_one_line(tiny, tmp_path):
    done = _run("--model", str(tiny), "--text", TEXT, "--ablate", "0.4", "--out", str(tmp_path / "x.npz"))
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 2 and len(lines) == 1 and lines[0].startswith("error: "), done.stderr
    assert f"{LAYERS} × {HEADS} (layers × heads" in lines[0] and not (tmp_path / "x.npz").exists()


@pytest.mark.slow
def test_toy_refuses_a_head_it_lacks_naming_layers_by_heads(tmp_path):
    done = _run("--text", "a b", "--heads", "2", "--d-model", "8", "--ablate", "0.2", "--out", str(tmp_path / "t.npz"))
    assert done.returncode == 2 and "1 × 2 (layers × heads" in done.stderr, done.stderr


@pytest.mark.slow
def test_the_window_switches_a_decoders_heads_off(window, qtbot, tmp_path):
    """The controller passes the switched-off heads to a decoder."""
    from engine.models import MODELS

    controller = window.controller
    name, path = open_tiny_gguf(window, tmp_path, "qwen2", TEXT)
    controller.set_ablation({(0, 1), (1, 3)})
    qtbot.waitUntil(lambda: controller.is_idle() and controller.snapshot.bert.trace.ablate == {(0, 1), (1, 3)},
                    timeout=60000)
    expected = load_gguf(path).run(TEXT, ablate={(0, 1), (1, 3)}, use_cache=False)
    trace = controller.snapshot.bert.trace
    np.testing.assert_array_equal(trace.next_token_logits, expected.next_token_logits)
    assert controller.snapshot.ablate == {(0, 1), (1, 3)}  # what the panels say is off
    assert not controller.snapshot.result.head_outputs[1].any()  # layer 0 on screen: its head 1 is zero
    MODELS.pop(name, None)
