"""The model registry: one door for listing, installing and loading models, and what the CLI writes."""
import subprocess
import sys

import numpy as np
import pytest

from tests import ROOT
from engine import AttentionConfig, EngineError, compute
from engine.models import DEFAULT_MODEL, KINDS, MODELS, ModelEntry, load_model, model_info



def test_every_entry_is_complete():
    assert list(MODELS)[0] == DEFAULT_MODEL and model_info(DEFAULT_MODEL).configurable
    for name, entry in MODELS.items():
        assert isinstance(entry, ModelEntry) and entry.name == name and entry.kind in KINDS
        assert entry.title and entry.licence and entry.credit
        assert entry.is_installed() or "pip install" in entry.install_command


def test_an_unknown_name_is_an_engine_error_naming_the_choices():
    with pytest.raises(EngineError) as caught:
        load_model("gpt-7")
    assert caught.value.field == "model" and caught.value.values["choices"] == ", ".join(MODELS)


def test_the_toy_model_runs_the_default_settings_on_the_text():
    result = load_model(DEFAULT_MODEL).run("a b c")
    expected = compute(AttentionConfig(text="a b c"))
    for name, array in expected.arrays().items():
        np.testing.assert_array_equal(result.arrays()[name], array)


@pytest.mark.slow
@pytest.mark.parametrize("name", [n for n, e in MODELS.items() if not e.configurable])
def test_a_pretrained_model_runs_what_the_command_line_exports(name, tmp_path, require_model):
    require_model(name)
    text = "The animal didn't cross the street."
    trace = load_model(name).run(text)
    out = tmp_path / "t.npz"
    done = subprocess.run([sys.executable, str(ROOT / "main.py"), "export", "--model", name, "--text", text,
                           "--out", str(out)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    with np.load(out) as data:
        assert list(data["tokens"]) == trace.token_texts
        np.testing.assert_array_equal(data["input_ids"], trace.input_ids)
        np.testing.assert_array_equal(data["attentions"], trace.attentions)
        np.testing.assert_array_equal(data["hidden_states"], trace.hidden_states)


def test_no_model_name_outside_the_registry():
    """app/ and the rest of engine/ ask the registry: no model name is spelled out there."""
    import ast

    names = set(MODELS) - set(KINDS)  # "toy" is also a kind the contract declares: keying by kind is fine
    for path in sorted([*(ROOT / "app").rglob("*.py"), *(ROOT / "engine").rglob("*.py")]):
        if "models" in path.relative_to(ROOT).parts[:2]:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                assert node.value not in names, f"{path.relative_to(ROOT)} names model {node.value!r}"
