"""The hook points against transformers' own activations (TransformerLens's names without the batch
axis).

The references (tests/fixtures/hook_reference.npz) were read out of transformers' modules with
PyTorch hooks by scripts/make_hook_reference.py (its docstring says which module gives which
name); tests/fixtures/ablation_reference.npz by scripts/make_ablation_reference.py. The engine's
code made neither. Tolerances: attention weights and probabilities 1e-4 absolute; every other
activation 1e-4 relative to the largest magnitude of that layer's reference (SmolLM2's residual
stream reaches 2·10⁴ in its middle layers, where float32 itself carries only ~2·10⁻³).

Skips only when a model package (or its reader) is not installed.
"""
from __future__ import annotations

import json

import numpy as np
import pytest
from tests import FIXTURES

pytestmark = pytest.mark.slow  # a real model

HOOKS = FIXTURES / "hook_reference.npz"
ABLATION = FIXTURES / "ablation_reference.npz"
SMOLLM2_TEXT = "The capital of France is"
MINILM_TEXT = "The animal didn't cross the street because it was too tired."
TOL = 1e-4


@pytest.fixture(scope="module")
def ref():
    with np.load(HOOKS) as data:
        arrays = {key: data[key] for key in data.files}
    meta = json.loads(str(arrays["meta"]))
    assert meta["smollm2_text"] == SMOLLM2_TEXT and meta["minilm_text"] == MINILM_TEXT
    return arrays


def _load(name: str, *readers: str):
    for reader in readers:
        pytest.importorskip(reader)
    from engine.models import model_info

    entry = model_info(name)
    if not entry.is_installed():
        pytest.skip(f"{name} is not installed: {entry.install_command}")


@pytest.fixture(scope="module")
def smollm2(smollm2_model):  # conftest's copy: loaded once per test process
    _load("smollm2", "gguf", "tokenizers")  # skips, naming the install command, when it is missing
    return smollm2_model


@pytest.fixture(scope="module")
def minilm(minilm_model):
    _load("minilm", "safetensors", "tokenizers")
    return minilm_model


def assert_close(actual, expected, what: str, *, relative: bool = True) -> None:
    """|actual − expected| ≤ TOL (× the reference's largest magnitude when ``relative``)."""
    actual = np.asarray(actual)
    assert actual.shape == expected.shape, f"{what}: shape {actual.shape}, reference {expected.shape}"
    scale = max(1.0, float(np.abs(expected).max())) if relative else 1.0
    error = float(np.abs(actual.astype(np.float64) - expected).max())
    assert error <= TOL * scale, f"{what}: off by {error:.3g} (allowed {TOL * scale:.3g})"


def probabilities(logits) -> np.ndarray:
    """float64 softmax over the vocabulary (vocab,)."""
    logits = np.asarray(logits, np.float64)
    e = np.exp(logits - logits.max())
    return e / e.sum()


def zero_head(head: int):
    """A hook_z hook (n, heads, d_head) switching ``head`` off, and the shapes it saw."""
    seen = []

    def hook(z, name):
        seen.append((name, z.shape, z.dtype))
        z = z.copy()
        z[:, head] = 0
        return z
    return hook, seen


# ---------------------------------------------------------------------------------- SmolLM2

@pytest.fixture(scope="module")
def smollm2_cache(smollm2):
    return smollm2.run_with_cache(SMOLLM2_TEXT)  # names=None: every hook point


def test_smollm2_tokens_are_the_reference(smollm2, ref):
    assert np.asarray(smollm2.tokenize(SMOLLM2_TEXT).input_ids).tolist() == ref["smollm2_ids"].tolist()


def test_smollm2_hook_pattern_is_transformers_attentions(smollm2_cache, ref):
    trace, cache = smollm2_cache
    expected = ref["smollm2_pattern"]  # (layers, heads, n, n)
    for layer in range(len(expected)):
        assert_close(cache[f"blocks.{layer}.attn.hook_pattern"], expected[layer], f"layer {layer} hook_pattern",
                     relative=False)
    assert_close(trace.attentions, expected, "trace.attentions", relative=False)


def test_smollm2_hook_z_is_o_proj_input_by_head(smollm2_cache, ref):
    _, cache = smollm2_cache
    expected = ref["smollm2_z"]  # (layers, n, heads, d_head)
    for layer in range(len(expected)):
        assert_close(cache[f"blocks.{layer}.attn.hook_z"], expected[layer], f"layer {layer} hook_z")


def test_smollm2_hook_v_is_v_proj_output(smollm2_cache, ref):
    _, cache = smollm2_cache
    expected = ref["smollm2_v"]  # (layers, n, kv_heads, d_head): grouped-query, 3 key-value heads
    for layer in range(len(expected)):
        assert_close(cache[f"blocks.{layer}.attn.hook_v"], expected[layer], f"layer {layer} hook_v")


def test_smollm2_hook_q_and_k_are_q_proj_and_k_proj_outputs(smollm2_cache, ref):
    """Before RoPE, in transformers' order of a head's dimensions: the GGUF's llama.cpp row order is
    undone at load (the file's order put each head's dimensions 2i, 2i+1 side by side: 10.8 apart)."""
    _, cache = smollm2_cache
    for i, layer in enumerate(ref["smollm2_layers"]):
        assert_close(cache[f"blocks.{layer}.attn.hook_q"], ref["smollm2_q"][i], f"layer {layer} hook_q")
        assert_close(cache[f"blocks.{layer}.attn.hook_k"], ref["smollm2_k"][i], f"layer {layer} hook_k")


def test_smollm2_norm_points_are_transformerlens_values(smollm2_cache, ref):
    """hook_normalized = x / rms(x) before the weight (a float64 calculation from the reference's
    residual stream); hook_out = the weighted value = transformers' last hidden state for ln_final."""
    _, cache = smollm2_cache
    hidden = ref["smollm2_hidden"].astype(np.float64)
    for layer, resid_pre in ((0, hidden[0]), (11, hidden[11]), (29, hidden[29])):
        rms = np.sqrt((resid_pre ** 2).mean(-1, keepdims=True) + 1e-5)
        assert_close(cache[f"blocks.{layer}.ln1.hook_scale"], rms, f"layer {layer} ln1.hook_scale")
        assert_close(cache[f"blocks.{layer}.ln1.hook_normalized"], resid_pre / rms, f"layer {layer} ln1.hook_normalized")
    last = ref["smollm2_resid_post_last"].astype(np.float64)
    assert_close(cache["ln_final.hook_normalized"], last / np.sqrt((last ** 2).mean(-1, keepdims=True) + 1e-5),
                 "ln_final.hook_normalized")
    assert_close(cache["ln_final.hook_out"], hidden[-1], "ln_final.hook_out")


def test_smollm2_residual_stream_is_transformers_hidden_states(smollm2_cache, ref):
    trace, cache = smollm2_cache
    hidden = ref["smollm2_hidden"]  # (layers + 1, n, d); the last after the final RMSNorm
    layers = len(hidden) - 1
    assert_close(cache["hook_embed"], hidden[0], "hook_embed")
    for layer in range(layers - 1):
        assert_close(cache[f"blocks.{layer}.hook_resid_post"], hidden[layer + 1], f"layer {layer} hook_resid_post")
        assert_close(cache[f"blocks.{layer + 1}.hook_resid_pre"], hidden[layer + 1], f"layer {layer + 1} resid_pre")
    # The last block's own output is before the final norm: hidden_states[-1] is ln_final's.
    assert_close(cache[f"blocks.{layers - 1}.hook_resid_post"], ref["smollm2_resid_post_last"],
                 f"layer {layers - 1} hook_resid_post")
    assert_close(cache["ln_final.hook_out"], hidden[-1], "ln_final.hook_out")
    for layer in range(layers + 1):
        assert_close(trace.hidden_states[layer], hidden[layer], f"trace.hidden_states[{layer}]")


def test_smollm2_attn_and_mlp_out(smollm2_cache, ref):
    _, cache = smollm2_cache
    for i, layer in enumerate(ref["smollm2_layers"]):
        assert_close(cache[f"blocks.{layer}.hook_attn_out"], ref["smollm2_attn_out"][i], f"layer {layer} attn_out")
        assert_close(cache[f"blocks.{layer}.hook_mlp_out"], ref["smollm2_mlp_out"][i], f"layer {layer} mlp_out")
        # resid_mid sits between them: resid_pre + attn_out, and resid_mid + mlp_out = resid_post
        mid = cache[f"blocks.{layer}.hook_resid_mid"]
        assert_close(mid, cache[f"blocks.{layer}.hook_resid_pre"] + ref["smollm2_attn_out"][i], f"layer {layer} resid_mid")


def test_smollm2_cache_offers_every_name_read_only(smollm2, smollm2_cache):
    _, cache = smollm2_cache
    names = tuple(smollm2.hook_names())
    assert set(cache) == set(names)
    assert "blocks.23.attn.hook_z" in names and "ln_final.hook_normalized" in names
    z = cache["blocks.23.attn.hook_z"]
    with pytest.raises(ValueError):
        z[0, 0, 0] = 1.0  # a cached array is read-only: a caller cannot corrupt what others read
    _, some = smollm2.run_with_cache(SMOLLM2_TEXT, names=["blocks.23.attn.hook_z"])
    assert set(some) == {"blocks.23.attn.hook_z"}
    np.testing.assert_allclose(some["blocks.23.attn.hook_z"], z, atol=1e-6)


def test_smollm2_zeroing_head_23_4_through_hook_z(smollm2, ref):
    layer, head = (int(v) for v in ref["smollm2_ablate"][0])
    target = int(ref["smollm2_target_id"])
    hook, seen = zero_head(head)
    trace = smollm2.run_with_hooks(SMOLLM2_TEXT, fwd_hooks=[(f"blocks.{layer}.attn.hook_z", hook)])
    assert seen == [(f"blocks.{layer}.attn.hook_z", (5, 9, 64), np.dtype(np.float32))]
    p = probabilities(trace.next_token_logits)
    assert abs(p[target] - float(ref["smollm2_p_ablated"])) <= TOL, (p[target], float(ref["smollm2_p_ablated"]))
    assert_close(p, ref["smollm2_probs_ablated"], "ablated next-token distribution", relative=False)
    assert_close(trace.attentions, ref["smollm2_pattern_ablated"], "ablated attentions", relative=False)
    # The hook's change reached the layers above it, not only the output: layer 24+ attentions moved.
    assert np.abs(ref["smollm2_pattern_ablated"][layer + 1:] - ref["smollm2_pattern"][layer + 1:]).max() > 1e-3
    # ablate= is the same hook: one path.
    again = smollm2.run(SMOLLM2_TEXT, ablate=frozenset({(layer, head)}))
    p_again = probabilities(again.next_token_logits)
    assert abs(p_again[target] - float(ref["smollm2_p_ablated"])) <= TOL
    # And the plain run did not keep the ablation (the KV cache must not leak it).
    plain = probabilities(smollm2.run(SMOLLM2_TEXT).next_token_logits)
    assert abs(plain[target] - float(ref["smollm2_p_plain"])) <= TOL


def test_smollm2_identity_hook_changes_nothing(smollm2, smollm2_cache):
    trace, _ = smollm2_cache
    calls = []
    hooked = smollm2.run_with_hooks(SMOLLM2_TEXT, fwd_hooks=[("blocks.15.attn.hook_z", lambda z, name: calls.append(name))])
    assert calls == ["blocks.15.attn.hook_z"]
    np.testing.assert_allclose(hooked.next_token_logits, trace.next_token_logits, atol=1e-5)
    np.testing.assert_allclose(hooked.attentions, trace.attentions, atol=1e-6)


def test_smollm2_start_at_layer_resumes_the_forward(smollm2, smollm2_cache):
    trace, cache = smollm2_cache
    tokens = smollm2.tokenize(SMOLLM2_TEXT)
    resumed = smollm2.run_with_hooks(tokens, start_at_layer=12, resid=cache["blocks.12.hook_resid_pre"])
    np.testing.assert_allclose(resumed.next_token_logits, trace.next_token_logits, atol=1e-4)
    # A different residual really is used: the last position's vector replaced by the first's.
    changed = np.array(cache["blocks.12.hook_resid_pre"])
    changed[-1] = changed[1]
    other = smollm2.run_with_hooks(tokens, start_at_layer=12, resid=changed)
    assert np.abs(np.asarray(other.next_token_logits) - trace.next_token_logits).max() > 1e-2


def _export(tmp_path, model: str, ablate: str, text: str) -> dict:
    """``main.py export --model … --ablate … --text …`` into a .npz: its arrays (exit code 0 checked)."""
    from cli.commands import main

    out = tmp_path / "x.npz"
    code = main(["main.py", "export", "--model", model, "--ablate", ablate, "--text", text, "--out", str(out)])
    assert code == 0
    with np.load(out) as data:
        return {key: data[key] for key in data.files}


def test_smollm2_export_ablate_23_4(tmp_path, smollm2, ref):
    arrays = _export(tmp_path, "smollm2", "23.4", SMOLLM2_TEXT)
    target = int(ref["smollm2_target_id"])
    p = probabilities(arrays["next_token_logits"])
    assert abs(p[target] - float(ref["smollm2_p_ablated"])) <= TOL, (p[target], float(ref["smollm2_p_ablated"]))
    assert_close(arrays["attentions"], ref["smollm2_pattern_ablated"], "exported attentions", relative=False)
    assert_close(arrays["hidden_states"][-1], ref["smollm2_hidden_last_ablated"], "exported last hidden state")
    # (docs/FORMAT.md: with --ablate "every exported array is of that run"; no array names the heads)
    plain = probabilities(smollm2.run(SMOLLM2_TEXT).next_token_logits)
    assert abs(plain[target] - p[target]) > 0.5  # the export is not the plain run (0.7725)


def test_smollm2_export_refuses_a_head_it_does_not_have(tmp_path, smollm2, capsys):
    from cli.commands import main

    out = tmp_path / "x.npz"
    code = main(["main.py", "export", "--model", "smollm2", "--ablate", "99.99", "--text", SMOLLM2_TEXT,
                 "--out", str(out)])
    assert code == 2 and not out.exists()
    message = capsys.readouterr().err.strip()
    assert len(message.splitlines()) == 1 and "30" in message and "9" in message, message


# ---------------------------------------------------------------------------------- MiniLM

@pytest.fixture(scope="module")
def minilm_cache(minilm):
    return minilm.run_with_cache(MINILM_TEXT)


def test_minilm_tokens_are_the_reference(minilm, ref):
    assert np.asarray(minilm.tokenize(MINILM_TEXT).input_ids).tolist() == ref["minilm_ids"].tolist()


def test_minilm_hook_pattern_and_hook_z(minilm_cache, ref):
    trace, cache = minilm_cache
    pattern, z = ref["minilm_pattern"], ref["minilm_z"]  # (L, H, n, n), (L, n, H, d_head)
    for layer in range(len(pattern)):
        assert_close(cache[f"blocks.{layer}.attn.hook_pattern"], pattern[layer], f"layer {layer} hook_pattern",
                     relative=False)
        assert_close(cache[f"blocks.{layer}.attn.hook_z"], z[layer], f"layer {layer} hook_z (BertSelfAttention context)")
    assert_close(trace.attentions, pattern, "trace.attentions", relative=False)


def test_minilm_bert_block_placement(minilm_cache, ref):
    """TransformerLens's BertBlock: resid_mid before LN1, resid_post before LN2, normalized after."""
    trace, cache = minilm_cache
    hidden = ref["minilm_hidden"]
    for layer in range(len(hidden) - 1):
        assert_close(cache[f"blocks.{layer}.hook_resid_pre"], hidden[layer], f"layer {layer} resid_pre")
        for name in ("attn_out", "resid_mid", "mlp_out", "resid_post"):
            assert_close(cache[f"blocks.{layer}.hook_{name}"], ref[f"minilm_{name}"][layer], f"layer {layer} hook_{name}")
        assert_close(cache[f"blocks.{layer}.hook_normalized_resid_post"], hidden[layer + 1],
                     f"layer {layer} hook_normalized_resid_post")
    for layer in range(len(hidden)):
        assert_close(trace.hidden_states[layer], hidden[layer], f"trace.hidden_states[{layer}]")


@pytest.fixture(scope="module")
def ablation():
    with np.load(ABLATION) as data:
        arrays = {key: data[key] for key in data.files}
    assert str(arrays["text"]) == MINILM_TEXT
    return arrays


def test_minilm_zeroing_heads_through_hook_z(minilm, ablation):
    """Case 3 of ablation_reference: heads 3.1 and 5.11 off (o.dense's input zeroed in transformers)."""
    cases = json.loads(str(ablation["cases"]))
    assert cases[3] == [[3, 1], [5, 11]]
    hook_3, seen_3 = zero_head(1)
    hook_5, seen_5 = zero_head(11)
    trace = minilm.run_with_hooks(MINILM_TEXT, fwd_hooks=[("blocks.3.attn.hook_z", hook_3),
                                                          ("blocks.5.attn.hook_z", hook_5)])
    assert [s[1] for s in seen_3 + seen_5] == [(16, 12, 32)] * 2
    expected = ablation["hidden_3"]
    for layer in range(len(expected)):
        assert_close(trace.hidden_states[layer], expected[layer], f"ablated hidden_states[{layer}]")
    # the hooks did something: the plain run's last layer is elsewhere
    assert np.abs(ablation["hidden_0"][-1] - expected[-1]).max() > 1e-2
    again = minilm.run(MINILM_TEXT, ablate=frozenset({(3, 1), (5, 11)}))
    assert_close(again.hidden_states[-1], expected[-1], "run(ablate=…) last layer")


def test_minilm_export_ablate(tmp_path, minilm, ablation):
    hidden = _export(tmp_path, "minilm", "3.1,5.11", MINILM_TEXT)["hidden_states"]
    for layer in range(len(hidden)):
        assert_close(hidden[layer], ablation["hidden_3"][layer], f"exported ablated hidden_states[{layer}]")


# ---------------------------------------------------------------------------------- bad hooks

def test_unknown_hook_name_names_the_closest(minilm):
    from engine.core.errors import EngineError

    with pytest.raises(EngineError) as caught:
        minilm.run_with_hooks(MINILM_TEXT, fwd_hooks=[("blocks.3.attn.hook_zz", lambda a, n: None)])
    assert "blocks.3.attn.hook_z" in str(caught.value)
    with pytest.raises(EngineError):
        minilm.run_with_cache(MINILM_TEXT, names=["blocks.9.attn.hook_z"])  # a layer MiniLM does not have


def test_hook_returning_another_shape_or_dtype(minilm):
    from engine.core.errors import EngineError

    with pytest.raises(EngineError) as caught:
        minilm.run_with_hooks(MINILM_TEXT, fwd_hooks=[("blocks.2.attn.hook_z", lambda z, n: z[:, :6])])
    message = str(caught.value)
    assert "blocks.2.attn.hook_z" in message and "(16, 12, 32)" in message and "(16, 6, 32)" in message, message
    with pytest.raises(EngineError) as caught:
        minilm.run_with_hooks(MINILM_TEXT, fwd_hooks=[("blocks.2.attn.hook_z", lambda z, n: z.astype(np.float64))])
    assert "blocks.2.attn.hook_z" in str(caught.value)


def test_hook_that_raises_fails_the_run_and_the_model_lives_on(minilm, minilm_cache, ref):
    class Boom(RuntimeError):
        pass

    def boom(array, name):
        raise Boom(name)
    with pytest.raises(Boom):
        minilm.run_with_hooks(MINILM_TEXT, fwd_hooks=[("blocks.1.hook_resid_mid", boom)])
    trace = minilm.run(MINILM_TEXT)  # nothing left half-hooked
    assert_close(trace.attentions, ref["minilm_pattern"], "attentions after a failed hook", relative=False)


def test_a_hook_on_the_attention_keeps_the_rest_of_the_layer_on_the_threads(minilm_model, monkeypatch):
    """MiniLM at 150 tokens (threaded): a hook on hook_z alone leaves the layer's W_O, LayerNorms and
    feed-forward in row shares, as without hooks (bench_hooks: one hook was 9 % slower when that layer
    ran on one thread); a hook after the attention (hook_mlp_out) makes it see all rows at once. Both
    listening hooks return None: every array equals the plain run's."""
    from engine.models import bert

    text = " ".join(["the cat sat on the warm mat and looked at the birds"] * 13)
    calls = []
    real = bert.for_rows
    monkeypatch.setattr(bert, "for_rows", lambda count, work, **kw: (calls.append(work.__name__), real(count, work, **kw))[1])
    plain = minilm_model.run(text)
    assert plain.n >= 150  # 12 heads × 150² scores: over ENCODER_THREADED_MIN_SCORES
    rest_plain = calls.count("rest_of_layer")
    assert rest_plain == minilm_model.config.num_layers
    for point, rest in (("attn.hook_z", rest_plain), ("hook_mlp_out", rest_plain - 1)):
        calls.clear()
        hooked = minilm_model.run_with_hooks(text, fwd_hooks=[(f"blocks.3.{point}", lambda array, name: None)])
        assert calls.count("rest_of_layer") == rest, point
        np.testing.assert_allclose(hooked.attentions, plain.attentions, atol=1e-6, err_msg=point)
        np.testing.assert_allclose(hooked.hidden_states, plain.hidden_states, atol=1e-5, err_msg=point)
