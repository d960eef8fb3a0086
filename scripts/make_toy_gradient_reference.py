"""Write tests/fixtures/toy_gradient_reference.npz: gradients that PyTorch's autograd computes in
float64 through the toy engine's attention layer, re-implemented here in torch, for
tests/engine/grad/test_toy_gradients.py.

Needs torch (tests do not); run with the reference venv:

    nice -n 10 /work/refvenv/bin/python scripts/make_toy_gradient_reference.py

From the engine it takes only what defines the toy's inputs and weights: the tokenizer, the token
vectors (engine.toy.embeddings.static_embeddings: a hash-seeded draw per token text) and the random
projections (engine.toy.weights.packed_projection_weights). Everything a backward could share a bug
with is written here again: the sinusoidal table, RoPE's angles and its adjacent pairs, the scaling
(√d_k or 1, times the temperature), the causal mask, the softmax, the switched-off heads, W_O, and
the target.

The toy's computation (engine/toy/compute.py): x = token vectors (+ sinusoidal positions) =
blocks.0.hook_resid_pre; q, k, v = x·W_Q, x·W_K, x·W_V (hook_q/k/v, (n, heads, d_k)); RoPE rotates
q and k (hook_rot_q/k); scores = q·kᵀ / divisor, −∞ above the diagonal when causal
(hook_attn_scores, (heads, n, n)); pattern = softmax (hook_pattern); z = pattern·v (hook_z, read
BEFORE a switched-off head is zeroed: its gradient is 0, as the engine's); attn_out = concat(z)·W_O
(hook_attn_out), the output. The target: the cosine of an output vector (config ``a``: the mean
over every position, the Saliency dock's sentence embedding; ``b``: position 3) to a stored
reference vector.

Stored per config ``<c>`` in (a, b): the settings ``<c>_text``, ``<c>_d_model``, ``<c>_heads``,
``<c>_seed``, ``<c>_positional``, ``<c>_mask``, ``<c>_scale``, ``<c>_temperature``,
``<c>_position`` (−1: the mean), ``<c>_reference`` (d,), ``<c>_ablate`` (the head switched off in
the ``_ablated`` run); ``<c>_input`` (n, d); then for the plain run and with ``_ablated`` after the
name: ``<c>_value`` (float64), ``<c>_grad_input`` and ``<c>_grad_<point>`` for every point the
config has (q, k, v, rot_q, rot_k, attn_scores, pattern, z, attn_out), float64, hook layouts
without the batch axis.
"""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
OUT = ROOT / "tests" / "fixtures" / "toy_gradient_reference.npz"

from engine.text.tokenize import tokenize  # noqa: E402  (the toy's inputs only)
from engine.toy.embeddings import static_embeddings  # noqa: E402
from engine.toy.weights import packed_projection_weights  # noqa: E402

CONFIGS = {
    # 6 tokens (one repeated), d_model 8, 2 heads, causal, sinusoidal positions, scaled by √d_k
    "a": dict(text="the cat sat on the mat", d_model=8, heads=2, seed=7, positional="sinusoidal", mask="causal",
              scale=True, temperature=1.0, position=-1, ablate=1),
    # RoPE on q and k, no √d_k scaling, a temperature of 1.5, no mask, one position's vector
    "b": dict(text="a dog ran to the park", d_model=8, heads=2, seed=3, positional="rope", mask="none",
              scale=False, temperature=1.5, position=3, ablate=0),
}


def sinusoidal(n: int, d: int) -> torch.Tensor:
    """PE[p, 2i] = sin(p / 10000^(2i/d)), PE[p, 2i+1] = cos(p / 10000^(2i/d))."""
    pe = torch.zeros(n, d, dtype=torch.float64)
    for p in range(n):
        for i in range(0, d, 2):
            angle = p / 10000.0 ** (i / d)
            pe[p, i] = np.sin(angle)
            if i + 1 < d:
                pe[p, i + 1] = np.cos(angle)
    return pe


def rope(x: torch.Tensor) -> torch.Tensor:
    """x (heads, n, d_k): pair (2i, 2i+1) of position p rotated by p·10000^(−2i/d_k)."""
    heads, n, d_k = x.shape
    out = torch.empty_like(x)
    for p in range(n):
        for i in range(0, d_k, 2):
            angle = p * 10000.0 ** (-i / d_k)
            c, s = np.cos(angle), np.sin(angle)
            out[:, p, i] = x[:, p, i] * c - x[:, p, i + 1] * s
            out[:, p, i + 1] = x[:, p, i + 1] * c + x[:, p, i] * s
    return out


def run(c: dict, x0: np.ndarray, weights: np.ndarray, reference: np.ndarray, ablate: int | None) -> dict:
    """The toy's forward in float64 torch, autograd's gradients at every point."""
    d, heads = c["d_model"], c["heads"]
    d_k = d // heads
    x = torch.tensor(x0, dtype=torch.float64, requires_grad=True)  # (n, d)
    n = x.shape[0]
    w_q, w_k, w_v, w_o = (torch.tensor(weights[:, i * d:(i + 1) * d], dtype=torch.float64) for i in range(4))
    kept = {}

    def keep(name, tensor):
        tensor.retain_grad()
        kept[name] = tensor
        return tensor

    q = keep("q", (x @ w_q).reshape(n, heads, d_k))  # (n, heads, d_k)
    k = keep("k", (x @ w_k).reshape(n, heads, d_k))
    v = keep("v", (x @ w_v).reshape(n, heads, d_k))
    q_heads, k_heads, v_heads = q.transpose(0, 1), k.transpose(0, 1), v.transpose(0, 1)  # (heads, n, d_k)
    if c["positional"] == "rope":
        q_heads = keep("rot_q", rope(q_heads).transpose(0, 1)).transpose(0, 1)
        k_heads = keep("rot_k", rope(k_heads).transpose(0, 1)).transpose(0, 1)
    divisor = (np.sqrt(d_k) if c["scale"] else 1.0) * c["temperature"]
    scores = q_heads @ k_heads.transpose(1, 2) / divisor  # (heads, n, n)
    if c["mask"] == "causal":
        scores = scores.masked_fill(torch.triu(torch.ones(n, n, dtype=torch.bool), 1), float("-inf"))
    keep("attn_scores", scores)
    pattern = keep("pattern", torch.softmax(scores, dim=-1))
    z = keep("z", (pattern @ v_heads).transpose(0, 1))  # (n, heads, d_k)
    if ablate is not None:
        cut = torch.ones(heads, 1, dtype=torch.float64)
        cut[ablate] = 0.0
        z = z * cut
    out = keep("attn_out", z.reshape(n, d) @ w_o)  # (n, d)
    row = out.mean(dim=0) if c["position"] == -1 else out[c["position"]]
    ref = torch.tensor(reference, dtype=torch.float64)
    value = row @ ref / (row.norm() * ref.norm())
    value.backward()
    found = {"value": np.float64(value.item()), "grad_input": x.grad.numpy().copy()}
    found |= {f"grad_{name}": tensor.grad.numpy().copy() for name, tensor in kept.items()}
    return found


def main() -> None:
    store = {}
    for name, c in CONFIGS.items():
        texts = [t.text for t in tokenize(c["text"], "auto")]
        embeddings = static_embeddings(texts, c["d_model"], c["seed"]).astype(np.float64)  # (n, d)
        x0 = embeddings + (sinusoidal(len(texts), c["d_model"]).numpy() if c["positional"] == "sinusoidal" else 0.0)
        weights = packed_projection_weights(c["d_model"], c["seed"], "random").astype(np.float64)  # (d, 4d)
        reference = np.random.default_rng(100 + c["seed"]).standard_normal(c["d_model"])  # (d,)
        store |= {f"{name}_{key}": np.asarray(value) for key, value in c.items()}
        store |= {f"{name}_reference": reference, f"{name}_input": x0.astype(np.float32)}
        for suffix, ablate in (("", None), ("_ablated", c["ablate"])):
            store |= {f"{name}_{key}{suffix}": value for key, value in run(c, x0, weights, reference, ablate).items()}
            print(name + suffix, "value", store[f"{name}_value{suffix}"], "tokens", len(texts))
    OUT.parent.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(OUT, **store)
    print(f"wrote {OUT} ({OUT.stat().st_size} bytes, {len(store)} arrays)")


if __name__ == "__main__":
    main()
