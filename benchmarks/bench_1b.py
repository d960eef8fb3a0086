"""A 1 B-parameter model opened with the default weights budget: load time and peak memory beside its
float32 size.

    nice -n 10 python benchmarks/bench_1b.py [--folder DIR] [--keep]

Writes a Hugging Face folder of Llama-3.2-1B's shapes (16 layers, d 2048, 32 query / 8 key-value heads
of 64, MLP 8192, vocabulary 128,256, tied head, Llama 3's RoPE scaling) with random float16 weights
(N(0, 0.02²), 2.5 GB on disk; streamed to disk a tensor at a time, so writing holds one tensor), and a
small byte-level BPE tokenizer.json. Then, in a fresh process (its peak resident memory is its own),
``engine.models.families.loading.load_folder`` with the default budget (engine.core.memory.weights_budget:
the larger of 4 GiB and half the memory available), and a 16-token forward. Prints the parameter count,
the float32 size, the budget, the load time, the forward time and the child's peak RSS.
No torch, no download: the weights are made here.
"""
from __future__ import annotations

import argparse
import json
import resource
import shutil
import struct
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

# Llama-3.2-1B's config.json (meta-llama/Llama-3.2-1B), the numbers that shape the weights
CONFIG = {
    "architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 2048, "intermediate_size": 8192,
    "num_hidden_layers": 16, "num_attention_heads": 32, "num_key_value_heads": 8, "head_dim": 64,
    "max_position_embeddings": 131072, "rms_norm_eps": 1e-5, "vocab_size": 128256, "tie_word_embeddings": True,
    "hidden_act": "silu", "attention_bias": False, "mlp_bias": False, "rope_theta": 500000.0,
    "rope_scaling": {"rope_type": "llama3", "factor": 32.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
                     "original_max_position_embeddings": 8192},
    "bos_token_id": 128000, "eos_token_id": 128001, "torch_dtype": "float16",
}


def shapes() -> dict[str, tuple[int, ...]]:
    c = CONFIG
    d, d_ff, dk = c["hidden_size"], c["intermediate_size"], c["head_dim"]
    q, kv = c["num_attention_heads"] * dk, c["num_key_value_heads"] * dk
    out = {"model.embed_tokens.weight": (c["vocab_size"], d), "model.norm.weight": (d,)}
    for i in range(c["num_hidden_layers"]):
        p = f"model.layers.{i}."
        out.update({p + "input_layernorm.weight": (d,), p + "post_attention_layernorm.weight": (d,),
                    p + "self_attn.q_proj.weight": (q, d), p + "self_attn.k_proj.weight": (kv, d),
                    p + "self_attn.v_proj.weight": (kv, d), p + "self_attn.o_proj.weight": (d, q),
                    p + "mlp.gate_proj.weight": (d_ff, d), p + "mlp.up_proj.weight": (d_ff, d),
                    p + "mlp.down_proj.weight": (d, d_ff)})
    return out


def write_folder(folder: Path) -> int:
    """The folder's config.json, model.safetensors (streamed) and tokenizer.json; the parameter count."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "config.json").write_text(json.dumps(CONFIG, indent=2))
    tensors, header, offset = shapes(), {}, 0
    for name, shape in tensors.items():
        size = int(np.prod(shape)) * 2
        header[name] = {"dtype": "F16", "shape": list(shape), "data_offsets": [offset, offset + size]}
        offset += size
    raw = json.dumps(header).encode()
    raw += b" " * (-len(raw) % 8)
    rng = np.random.default_rng(1)
    with open(folder / "model.safetensors", "wb") as file:
        file.write(struct.pack("<Q", len(raw)) + raw)
        for name, shape in tensors.items():
            if name.endswith("norm.weight"):
                file.write(np.ones(shape, np.float16).tobytes())
                continue
            rows = max(1, (1 << 24) // shape[-1])  # 16 M numbers at a time
            for start in range(0, shape[0], rows):
                block = rng.standard_normal((min(rows, shape[0] - start), *shape[1:]), np.float32)
                block *= np.float32(0.02)
                file.write(block.astype(np.float16).tobytes())
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    tokenizer = Tokenizer(models.BPE())
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    tokenizer.train_from_iterator(["The cat sat on the mat. The dog slept on the log."] * 4, trainers.BpeTrainer(
        vocab_size=300, initial_alphabet=pre_tokenizers.ByteLevel.alphabet()))
    tokenizer.save(str(folder / "tokenizer.json"))
    return sum(int(np.prod(shape)) for shape in tensors.values())


CHILD = """
import resource, sys, time
sys.path.insert(0, {root!r})
from engine.core.memory import keep_freed_memory
keep_freed_memory()  # as main.py does
from engine.models import hf_folder
from engine.models.families.loading import load_folder
started = time.perf_counter()
model = load_folder({folder!r})
loaded = time.perf_counter() - started
text = "The cat sat on the mat, then the dog slept on the log by the door."
ids = model.tokenize(text).input_ids[:16]
started = time.perf_counter()
model.run_ids(ids)
ran = time.perf_counter() - started
print(f"budget {{hf_folder.weights_budget() / 1024**3:.1f}} GiB (available {{hf_folder.available_memory() / 1024**3:.1f}} GiB)")
print(f"load {{loaded:.1f}} s, forward of {{len(ids)}} tokens {{ran * 1000:.0f}} ms, "
      f"weights {{model.weights.nbytes / 1024**3:.2f}} GiB")
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--folder", type=Path, help="where to write the model (default: a temporary folder)")
    parser.add_argument("--keep", action="store_true", help="keep the folder afterwards")
    args = parser.parse_args()
    folder = args.folder or Path(tempfile.mkdtemp(prefix="bench-1b-")) / "llama-3.2-1b-shapes"
    started = time.perf_counter()
    count = write_folder(folder)
    print(f"wrote {folder}: {count / 1e9:.3f} B parameters, float32 {4 * count / 1024**3:.2f} GiB "
          f"({time.perf_counter() - started:.0f} s)")
    try:
        done = subprocess.run([sys.executable, "-c", CHILD.format(root=str(ROOT), folder=str(folder))],
                              capture_output=True, text=True)
        print(done.stdout.strip() or done.stderr.strip())
        peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024  # Linux: KiB
        print(f"peak resident memory of the loading process {peak / 1024**3:.2f} GiB "
              f"= {peak / (4 * count):.2f} × the float32 weights")
    finally:
        if not args.keep:
            shutil.rmtree(folder.parent if args.folder is None else folder, ignore_errors=True)


if __name__ == "__main__":
    main()
