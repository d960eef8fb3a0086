"""The model contract (engine/models/contract.py): every model declares its facts and offers the
same run / Trace; the app, the command line and the analyses use only that (no probing)."""
from __future__ import annotations

import ast
import re

import numpy as np
import pytest

from tests import ROOT
from engine import AttentionConfig
from app.jobs import trained as minilm_mode
from engine.models import MODELS, load_model, model_info
from engine.core.trace import TraceBase
from engine.models.contract import KINDS, Capabilities, ModelFacts, Tokenized
from engine.models.toy import ToyModel


# Probing a model or trace instead of reading its declared facts: a model declares what it can do.
PROBES = [
    (r"inspect\.signature", "inspect.signature on a model"),
    (r"hasattr\([^)]*(bert|trace|model|loaded)\b", "hasattr on a model or trace"),
    (r"isinstance\([^)]*(Weights|Trace|Decoder|MiniLM|E5)\b", "isinstance on a model class"),
    (r"getattr\([^)]*(\b_module\(|import_module\((entry|model_info))", "getattr on an engine module"),
    (r"\.kind\s*[!=]=\s*\"(decoder|encoder|toy)\"", "a branch on a model's kind"),
    (r"\bkind\s*[!=]=\s*\"(decoder|encoder|toy)\"", "a branch on a model's kind"),
]
# where a kind may still decide: the registry (it declares them), the contract, and the folder loader
# that builds a model of the kind the family declares
ALLOWED = {"engine/models/__init__.py", "engine/models/contract.py", "engine/models/families/loading.py"}


def probing_calls(source: str) -> list[tuple[int, str]]:
    """(line, what) for each ``isinstance`` / ``issubclass`` / ``type(…) is`` test of a value obtained
    with ``getattr`` (the test names a class only when the attribute exists: probing by another
    spelling, which a line pattern misses when getattr's parentheses come first)."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("isinstance", "issubclass") \
                and node.args and any(isinstance(inner, ast.Call) and isinstance(inner.func, ast.Name)
                                      and inner.func.id == "getattr" for inner in ast.walk(node.args[0])):
            found.append((node.lineno, f"{node.func.id} on a getattr"))
    return found


def test_no_probing_of_models_outside_the_registry():
    found = []
    for path in sorted([*ROOT.glob("app/**/*.py"), *ROOT.glob("engine/**/*.py"), *ROOT.glob("cli/**/*.py")]):
        relative = path.relative_to(ROOT).as_posix()
        if relative in ALLOWED:
            continue
        source = path.read_text(encoding="utf-8")
        found += [f"{relative}:{number}: {what}" for number, what in probing_calls(source)]
        for number, line in enumerate(source.splitlines(), 1):
            code = line.split("#", 1)[0]
            for pattern, what in PROBES:
                if re.search(pattern, code):
                    found.append(f"{relative}:{number}: {what}: {line.strip()}")
    assert not found, "\n".join(found)


def test_the_probing_check_catches_isinstance_of_a_getattr():
    source = """
fast = setup.decoder and isinstance(getattr(model, "weights", None), llama.LlamaWeights)
if isinstance(getattr(getattr(trace, "layers", None), "x", 0), int) or issubclass(getattr(m, "K"), Base):
    pass
plain = isinstance(value, int) and getattr(model, "facts")
"""
    assert probing_calls(source) == [(2, "isinstance on a getattr"), (3, "isinstance on a getattr"),
                                      (3, "issubclass on a getattr")]


def test_the_probe_patterns_catch_what_they_name():
    samples = ['if hasattr(snapshot.bert, "next_token_logits"):', 'inspect.signature(model.run)',
               'isinstance(loaded.weights, BertWeights)', 'getattr(_module(name), "PREFIXES", ())',
               'if entry.kind == "decoder":', 'elif model_info(self.model).kind != "decoder":']
    for sample in samples:
        assert any(re.search(pattern, sample) for pattern, _ in PROBES), sample


def _check_trace(trace, facts: ModelFacts) -> None:
    assert isinstance(trace, TraceBase)
    n = trace.n
    assert trace.attentions.shape == (facts.layers, facts.heads, n, n)
    assert trace.hidden_states.shape[:2] == (facts.layers + 1, n)
    assert trace.input_ids.shape == (n,) and len(trace.spans) == n == len(trace.token_texts)
    assert (trace.next_token_logits is not None) == facts.capabilities.next_token_logits
    np.testing.assert_allclose(trace.attentions.sum(-1), 1.0, atol=1e-5)
    arrays = trace.arrays()
    assert {"attentions"} <= set(arrays) or {"weights"} <= set(arrays)


def check_components(model, text: str) -> None:
    """The model's public components (W_E, W_V, b_V, W_O, b_O, W_U, b_U, ln_final) recompute, in
    float64, what its own run put at the hook points: each layer's values from its input, its
    attention output from the heads' outputs, a decoder's logits from the last residual."""
    facts = model.facts
    trace, cache = model.run_with_cache(text, use_cache=False)
    L, H, d, dh = facts.layers, facts.heads, facts.d_model, facts.d_head
    assert model.W_V.shape == (L, H, d, dh) and model.b_V.shape == (L, H, dh)
    assert model.W_O.shape == (L, H, dh, d) and model.b_O.shape == (L, d)
    arrays = [model.W_V, model.b_V, model.W_O, model.b_O] + [a for a in (model.W_U, model.b_U) if a is not None]
    assert not any(a.flags.writeable for a in arrays)  # W_E too, or rows made when indexed (e5 keeps it 4-bit)
    share = np.arange(H) // (H // facts.kv_heads)  # the key/value head each query head reads
    for l in range(L):
        # what the projections read: a pre-norm decoder's normed input, an encoder's (and the toy's) resid_pre
        x = cache[f"blocks.{l}.ln1.hook_out" if facts.kind == "decoder" else f"blocks.{l}.hook_resid_pre"]
        x = x.astype(np.float64)
        v = np.einsum("nd,hdk->nhk", x, model.W_V[l].astype(np.float64)) + model.b_V[l]
        np.testing.assert_allclose(cache[f"blocks.{l}.attn.hook_v"][:, share], v, atol=1e-4 * max(1, np.abs(v).max()))
        z = cache[f"blocks.{l}.attn.hook_z"].astype(np.float64)  # (n, heads, d_head)
        attn_out = np.einsum("nhk,hkd->nd", z, model.W_O[l].astype(np.float64)) + model.b_O[l]
        np.testing.assert_allclose(cache[f"blocks.{l}.hook_attn_out"], attn_out,
                                   atol=1e-4 * max(1, np.abs(attn_out).max()))
    if model.W_E is not None:
        assert model.W_E.shape == (facts.vocab_size, d)
        np.testing.assert_array_equal(cache["hook_embed"], model.W_E[trace.input_ids])
    if facts.capabilities.next_token_logits:
        assert model.W_U.shape == (d, facts.vocab_size) and model.b_U.shape == (facts.vocab_size,)
        final = model.ln_final(cache[f"blocks.{L - 1}.hook_resid_post"][-1:])  # (1, d)
        np.testing.assert_array_equal(final[0], trace.hidden_states[-1][-1])
        logits = final.astype(np.float64)[0] @ model.W_U.astype(np.float64) + model.b_U
        np.testing.assert_allclose(trace.next_token_logits, logits, atol=1e-4 * np.abs(logits).max())
    else:
        assert model.W_U is None and model.b_U is None
        last = trace.hidden_states[-1]
        np.testing.assert_array_equal(model.ln_final(last), last)  # nothing between the last block and the output


def test_the_toy_encoder_and_decoders_expose_their_components(tmp_path):
    from tests.engine.core.test_hooks import TinyBert
    from tests.tiny_gguf import write_tiny_gguf

    from engine.models.decoder import load_gguf

    check_components(ToyModel(AttentionConfig(d_model=8, heads=2)), "the cat sat")
    from engine.models.encoder import encoder_facts

    bert = TinyBert()
    bert.facts = encoder_facts(bert.config, "bert", ["[CLS]", "[SEP]"], max_positions=32, name="tiny", tokenizer_note="")
    check_components(bert, "the cat sat")
    for architecture in ("llama", "qwen2"):  # grouped-query attention; qwen2 with value biases
        write_tiny_gguf(tmp_path / f"{architecture}.gguf", architecture, seed=5)
        check_components(load_gguf(tmp_path / f"{architecture}.gguf"), " the cat sat on the mat")


def test_a_wrong_component_fails_the_check(tmp_path):
    """The check is not vacuous: W_O with two heads' rows swapped no longer rebuilds hook_attn_out."""
    model = ToyModel(AttentionConfig(d_model=8, heads=2))
    swapped = model.W_O[:, ::-1]

    class Swapped(ToyModel):
        W_O = swapped

    with pytest.raises(AssertionError):
        check_components(Swapped(model.config), "the cat sat")


def test_run_with_use_cache_false_leaves_a_decoder_s_cache_alone(tmp_path):
    from tests.tiny_gguf import write_tiny_gguf

    from engine.models.decoder import load_gguf

    write_tiny_gguf(tmp_path / "llama.gguf", "llama", seed=6)
    model = load_gguf(tmp_path / "llama.gguf")
    shown = model.run(" the cat sat")
    aside = model.run(" the cat sat on the mat", use_cache=False)  # not the text on screen
    assert aside.reused_positions == 0  # nothing read from the kept trace
    longer = model.run(" the cat sat on")
    assert longer.reused_positions == shown.n  # the kept trace is still the one on screen
    peek = model.run(" the cat sat on the", keep=False)
    assert peek.reused_positions == longer.n  # read …
    assert model.run(" the cat sat on the mat").reused_positions == longer.n  # … but not kept


def test_the_toy_declares_its_facts_and_runs_through_the_contract():
    model = ToyModel(AttentionConfig(d_model=8, heads=2))
    facts = model.facts
    assert (facts.kind, facts.layers, facts.heads, facts.kv_heads, facts.d_model, facts.d_head) == ("toy", 1, 2, 2, 8, 4)
    assert facts.capabilities.configurable and not facts.capabilities.next_token_logits
    trace = model.run("the cat sat")
    _check_trace(trace, facts)
    np.testing.assert_array_equal(trace.hidden_states[1], trace.output)
    tokenized = model.tokenize("the cat sat")
    assert isinstance(tokenized, Tokenized) and tokenized.spans == ((0, 3), (4, 7), (8, 11))


def test_facts_refuse_nonsense():
    with pytest.raises(Exception, match="unknown model kind"):
        ModelFacts("x", "transformer", 1, 1, 1, 4, 4, 0, frozenset(), 0)
    with pytest.raises(Exception, match="cannot share"):
        ModelFacts("x", "decoder", 1, 9, 2, 4, 4, 0, frozenset(), 0)


@pytest.mark.slow
def test_every_registered_model_that_is_installed_keeps_the_contract():
    checked = 0
    for name, entry in list(MODELS.items()):
        if not entry.is_installed():
            continue
        try:
            # the app's cache: conftest's once-per-process models, not a second copy of each
            model = minilm_mode.model(name) if name != "toy" else load_model(name)
        except Exception as error:  # an installed package without its files: the registry tests say so
            pytest.skip(f"{name}: {error}")
        facts = model.facts
        assert facts.kind == entry.kind and facts.kind in KINDS, name
        assert facts.capabilities.prefixes == entry.prefixes, name
        assert entry.predicts_next_token == facts.capabilities.next_token_logits, name
        assert facts.d_model == facts.heads * facts.d_head or facts.kind == "decoder", name
        trace = model.run("The capital of France is")
        _check_trace(trace, facts)
        specials = [t for t in trace.token_texts if t in facts.special_tokens]
        if facts.kind == "encoder":  # [CLS] … [SEP], <s> … </s>: read from the tokenizer, not from a list
            assert trace.token_texts[0] in facts.special_tokens and trace.token_texts[-1] in facts.special_tokens
            assert len(specials) == 2, name
        view = model.layer_view(trace, facts.layers - 1)  # the one adapter the panels draw
        np.testing.assert_array_equal(view.weights, trace.attentions[-1])
        assert view.tokens == trace.tokens and view.n == trace.n
        trace2, cache = model.run_with_cache("The capital of France is", names=["blocks.0.attn.hook_pattern"])
        np.testing.assert_array_equal(cache["blocks.0.attn.hook_pattern"], trace2.attentions[0])
        check_components(model, "The capital of France is")
        checked += 1
    assert checked >= 1  # the toy at least


def test_capabilities_default_to_nothing():
    assert Capabilities() == Capabilities(False, False, False, False, False, ())
    assert model_info("toy").prefixes == () and not model_info("toy").predicts_next_token
