"""Direct logit attribution, the accumulated residual stream and the logit lens grid
(engine/analysis/dla.py, engine/analysis/lens_grid.py), checked against
tests/fixtures/dla_reference.npz (transformers with forward hooks, TransformerLens's apply_ln
formulas written out: scripts/make_dla_reference.py) and against float64 loops written here."""
from __future__ import annotations


import numpy as np
import pytest

from cli import commands as cli
from engine.analysis.lens_grid import lens_grid
from engine.analysis.request import NotApplicable, RunRequest
from engine.analysis.runs import Runs
from engine.analysis.table import run_analysis
from engine.core.errors import EngineError
from engine.models.families.loading import load_folder
from engine.text.words import words_of

from tests import FIXTURES
REFERENCE = np.load(FIXTURES / "dla_reference.npz")
TINY_CASES = ("gpt2", "gpt2_middle", "qwen2", "qwen3")
ATOL = 1e-4


@pytest.fixture(scope="module")
def tiny():
    """The tiny random decoder folders, loaded once: name → model."""
    return {name: load_folder(FIXTURES / "families" / name) for name in ("gpt2", "qwen2", "qwen3")}


def case_request(case: str, **changes) -> RunRequest:
    contrast = str(REFERENCE[f"{case}_contrast_text"]) or None
    ablate = frozenset(tuple(int(x) for x in pair) for pair in REFERENCE[f"ablate_{case}"])
    request = RunRequest(text=str(REFERENCE[f"{case}_text"]), answer=str(REFERENCE[f"{case}_answer_text"]),
                         contrast=contrast, position=int(REFERENCE[f"{case}_position"]), ablate=ablate)
    return RunRequest(**{**request.__dict__, **changes})


def attribution(model, request):
    result = run_analysis("dla", model, request)
    assert not isinstance(result, NotApplicable), result
    return result


def assert_equals_reference(model, case: str) -> None:
    result = attribution(model, case_request(case))
    ref = {key: REFERENCE[f"{case}_{key}"] for key in ("ids", "answer", "contrast", "position", "embed", "heads",
                                                       "mlp", "head_positions", "bias", "logit", "accumulated")}
    assert model.tokenize(str(REFERENCE[f"{case}_text"])).input_ids.tolist() == ref["ids"].tolist()
    assert result.answer.id == ref["answer"] and (result.contrast.id if result.contrast else -1) == ref["contrast"]
    assert result.position == ref["position"]
    for name in ("embed", "heads", "mlp", "head_positions", "bias", "logit", "accumulated"):
        np.testing.assert_allclose(getattr(result, name), ref[name], rtol=0, atol=ATOL, err_msg=f"{case} {name}")
    # the parts add up to the model's logit (or logit difference)
    parts = result.embed + result.heads.sum() + result.mlp.sum() + result.bias
    assert abs(parts - result.total) < 1e-9 and abs(result.total - result.logit) < ATOL
    np.testing.assert_allclose(result.head_positions.sum(-1), result.heads, rtol=0, atol=1e-6)  # z is float32
    np.testing.assert_allclose(result.accumulated, np.cumsum(result.decomposed, axis=0), rtol=0, atol=1e-9)
    assert abs(result.accumulated[-1, result.position] - result.logit) < ATOL


def assert_head_results(model, case: str) -> None:
    """Each head's output at the position (TransformerLens's stack_head_results) from the contract:
    hook_z @ W_O, what the attribution reads."""
    request = case_request(case)
    _, cache = model.run_with_cache(request.text, [f"blocks.{l}.attn.hook_z" for l in range(model.facts.layers)],
                                    ablate=request.ablate, use_cache=False)
    p = int(REFERENCE[f"{case}_position"])
    results = np.stack([np.einsum("hk,hkd->hd", cache[f"blocks.{l}.attn.hook_z"][p].astype(np.float64),
                                  model.W_O[l].astype(np.float64)) for l in range(model.facts.layers)])
    reference = REFERENCE[f"{case}_head_results"]
    np.testing.assert_allclose(results, reference, rtol=0, atol=ATOL * max(1.0, np.abs(reference).max()))


@pytest.mark.parametrize("case", TINY_CASES)
def test_tiny_decoders_equal_the_reference(tiny, case):
    assert_equals_reference(tiny[str(REFERENCE[f"{case}_model"])], case)


@pytest.mark.parametrize("case", ("gpt2", "qwen2", "qwen3"))
def test_head_results_equal_the_reference(tiny, case):
    assert_head_results(tiny[case], case)


@pytest.mark.slow  # a bundled model
def test_smollm2_equals_the_reference(smollm2_model):
    for case in ("smollm2", "smollm2_ablated"):
        assert_equals_reference(smollm2_model, case)
    assert_head_results(smollm2_model, "smollm2")
    result = attribution(smollm2_model, case_request("smollm2"))
    assert result.answer.piece == " Paris" and result.logit > 10  # the Eiffel prompt's answer, strongly


def test_switched_off_heads_contribute_nothing(tiny):
    """gpt2_middle switches head 1.2 off: zero there, the rest equal the reference of that run
    (which differs from the run with every head on)."""
    model = tiny["gpt2"]
    off = attribution(model, case_request("gpt2_middle"))
    on = attribution(model, case_request("gpt2_middle", ablate=frozenset()))
    assert off.heads[1, 2] == 0.0 and not off.head_positions[1, 2].any()
    assert abs(on.heads[1, 2]) > 1e-3  # the head did write something when on
    assert abs(on.logit - off.logit) > 1e-4


def test_by_words_sums_each_words_pieces(tiny):
    model = tiny["gpt2"]
    text = "The cat sat on the mat, then 小猫 slept"
    result = attribution(model, RunRequest(text=text, answer=" the", by_words=True))
    tokens = model.tokenize(text).tokens
    words, word_index = words_of(text, tokens, model.facts.special_tokens)
    assert result.words == tuple(words) and len(words) < len(tokens)  # 小猫 is several byte pieces
    expected = np.zeros(result.heads.shape + (len(words),))
    for piece, word in enumerate(word_index):  # the oracle: a plain loop over the pieces
        expected[:, :, word] += result.head_positions[:, :, piece]
    np.testing.assert_allclose(result.head_words, expected, rtol=0, atol=1e-12)
    assert "dla_head_words" in result.arrays()
    assert attribution(model, RunRequest(text=text, answer=" the")).head_words is None


def test_final_norm_components_rebuild_ln_final(tiny):
    """The contract's ln_final_w / ln_final_b / ln_final_centres are the norm ln_final runs."""
    rng = np.random.default_rng(0)
    for model in tiny.values():
        x = rng.normal(size=(3, model.facts.d_model)).astype(np.float32) * 3
        source = x - x.mean(-1, keepdims=True) if model.ln_final_centres else x
        scale = np.sqrt((source.astype(np.float64) ** 2).mean(-1, keepdims=True) + 1e-5 * model.ln_final_centres
                        + 1e-6 * (not model.ln_final_centres))
        expected = source / scale * model.ln_final_w + model.ln_final_b
        np.testing.assert_allclose(model.ln_final(x), expected, rtol=0, atol=1e-4)
    assert tiny["gpt2"].ln_final_centres and not tiny["qwen3"].ln_final_centres


@pytest.mark.parametrize("name", ("gpt2", "qwen3"))
def test_lens_grid_equals_a_float64_loop(tiny, name):
    model = tiny[name]
    text = "The cat sat on the mat"
    grid = lens_grid(model, RunRequest(text=text, answer=" mat", lens_grid=True),
                     Runs(model, RunRequest(text=text)))
    trace = model.run(text, use_cache=False)
    layers, n = model.facts.layers, trace.n
    answer = model.tokenizer.tokens(" mat")[0][0]
    assert grid.top_ids.shape == (layers + 1, n)
    for layer in range(layers + 1):
        for i in range(n):
            h = trace.hidden_states[layer, i:i + 1]
            normed = h if layer == layers else model.ln_final(h)  # the last hidden state is normed already
            logits = normed[0].astype(np.float64) @ model.W_U.astype(np.float64) + model.b_U
            p = np.exp(logits - logits.max())
            p /= p.sum()
            assert grid.top_ids[layer, i] == int(np.argmax(p))
            assert abs(grid.top_probabilities[layer, i] - p.max()) < 1e-5
            assert abs(grid.p_answer[layer, i] - p[answer]) < 1e-5
    assert grid.top_texts[layers][n - 1] == model.tokenizer.display([int(grid.top_ids[layers, n - 1])])[0]
    # the one-position lens of next_token agrees with the grid's last column
    lens = model.logit_lens(trace, -1, 1)
    assert lens.top_ids[:, 0].tolist() == grid.top_ids[:, -1].tolist()


def test_lens_grid_without_an_answer_reads_each_columns_own_prediction(tiny):
    model = tiny["qwen3"]
    request = RunRequest(text="The cat sat on the mat", lens_grid=True)
    grid = run_analysis("lens_grid", model, request)
    np.testing.assert_array_equal(grid.answer_ids, grid.top_ids[-1])
    np.testing.assert_allclose(grid.p_answer[-1], grid.top_probabilities[-1], rtol=0, atol=0)
    assert isinstance(run_analysis("lens_grid", model, RunRequest(text="The cat")), NotApplicable)  # not asked


def test_bad_input(tiny):
    model = tiny["gpt2"]
    text = "The cat sat on the mat"
    missing = run_analysis("dla", model, RunRequest(text=text))
    assert isinstance(missing, NotApplicable) and "answer" in str(missing.reason)
    with pytest.raises(EngineError, match="is the answer's own token"):
        run_analysis("dla", model, RunRequest(text=text, answer=" mat", contrast=" mat"))
    with pytest.raises(EngineError, match="empty"):
        run_analysis("dla", model, RunRequest(text=text, answer=""))
    with pytest.raises(EngineError, match="outside the text"):
        run_analysis("dla", model, RunRequest(text=text, answer=" mat", position=40))
    several = attribution(model, RunRequest(text=text, answer=" mat mat"))  # the first token is measured
    assert several.answer.pieces > 1 and "the first" in several.note
    encoder = load_folder(FIXTURES / "families" / "bert")
    for name in ("dla", "lens_grid"):
        refused = run_analysis(name, encoder, RunRequest(text=text, answer="mat", lens_grid=True))
        assert isinstance(refused, NotApplicable) and str(refused.reason).endswith("it has no unembedding")
    gemma = load_folder(FIXTURES / "families" / "gemma2")  # norms on each block's outputs: parts do not add up
    refused = run_analysis("dla", gemma, RunRequest(text=text, answer=" mat"))
    assert isinstance(refused, NotApplicable) and "normalises" in str(refused.reason)


def test_export_writes_the_attribution(tmp_path, tiny):
    folder = str(FIXTURES / "families" / "qwen3")
    out = tmp_path / "dla.npz"
    args = ["main.py", "export", "--model", folder, "--text", "The cat sat on the mat, then the dog", "--dla",
            "--answer", " sat", "--contrast", " mat", "--lens-grid", "--ablate", "0.1", "--out", str(out)]
    assert cli.main(args) == 0
    result = attribution(tiny["qwen3"], case_request("qwen3"))
    with np.load(out) as data:
        arrays = {name: data[name] for name in data.files}
    for name, value in result.arrays().items():
        np.testing.assert_array_equal(arrays[name], value, err_msg=name)
    assert "logit" not in arrays and float(arrays["logit_diff"]) == result.logit
    assert arrays["lens_top_ids"].shape == arrays["lens_p_answer"].shape == (3, len(result.accumulated[0]))
    assert arrays["lens_top_tokens"].dtype.kind == "U"


@pytest.mark.parametrize("extra, message", [
    (["--dla"], "--dla needs --answer"),
    (["--dla", "--answer", " mat", "--contrast", " mat"], "is the answer's own token"),
    (["--contrast", " mat", "--answer", " sat", "--lens-grid"], "--contrast is read by --dla"),
    (["--dla", "--answer", " mat", "--model", str(FIXTURES / "families" / "bert")], "has no unembedding"),
    (["--lens-grid"], "has no unembedding"),  # the toy engine
])
def test_export_refuses_bad_input(tmp_path, capsys, extra, message):
    out = tmp_path / "dla.npz"
    model = [] if "--model" in extra or extra == ["--lens-grid"] else ["--model", str(FIXTURES / "families" / "gpt2")]
    assert cli.main(["main.py", "export", "--text", "The cat sat", "--out", str(out), *model, *extra]) == 2
    error = capsys.readouterr().err
    assert message in error and error.count("\n") == 1 and "Traceback" not in error
    assert not out.exists()


def test_lens_grid_in_blocks_of_positions_equals_it_whole(tiny, monkeypatch):
    """The grid read a few positions at a time (long texts) is the grid read all at once."""
    from engine.analysis import lens_grid as module

    model = tiny["gpt2"]
    request = RunRequest(text="The cat sat on the mat, then the dog", lens_grid=True)
    whole = run_analysis("lens_grid", model, request)
    monkeypatch.setattr(module, "ROWS_AT_ONCE", 3)
    blocks = run_analysis("lens_grid", model, request)
    np.testing.assert_array_equal(blocks.top_ids, whole.top_ids)
    np.testing.assert_array_equal(blocks.answer_ids, whole.answer_ids)
    # float32 products of other block shapes round differently in the last bits
    np.testing.assert_allclose(blocks.p_answer, whole.p_answer, rtol=1e-5, atol=0)
    np.testing.assert_allclose(blocks.top_probabilities, whole.top_probabilities, rtol=1e-5, atol=0)
