"""One backward beside one forward (engine.grad), and attribution patching beside exact patching.

    nice -n 10 python benchmarks/bench_gradients.py [--repeats R] [--no-torch] [--no-exact]
    OPENBLAS_NUM_THREADS=1 nice -n 10 python benchmarks/bench_gradients.py --no-exact   # one thread each

For SmolLM2 and MiniLM at 16 and 128 tokens (the first n ids of a long English text), medians of R runs:
CPU time of the process (``time.process_time``, every thread; wall time on a shared machine measures the
other jobs): the model's own forward (``model.run``, no KV cache), engine.grad's forward that keeps its activations,
its backward of log p(answer) (a decoder) or a cosine (an encoder) to the input and every hook point,
and the ratio backward / model forward (the target: ≤ 2.5). Beside them, in a subprocess of
/work/refvenv/bin/python (torch + transformers; never imported here), transformers' forward and
forward + backward to ``inputs_embeds`` on the same weights. Then attribution patching on SmolLM2's
Eiffel/Colosseum pair (one forward of each prompt, two backwards of the corrupted one) beside the exact
grids (engine.analysis.patching), with each grid's correlation and the cells furthest apart.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

REFVENV = Path("/work/refvenv/bin/python")
TEXT = ("Attention lets every word in a sentence look at every other word and decide how much each one matters "
        "for its own meaning. A query asks a question, the keys answer how well they match, and the values carry "
        "what is passed on. The weights of one row always add up to one, so a word spreads a fixed budget of "
        "attention over the whole sentence. Different heads learn different habits: some look at the previous "
        "word, some at the next one, some at the verb of the clause, and some rest on the separator token when "
        "they have nothing better to do. Stacking such layers turns static word vectors into contextual ones.")
SIZES = (16, 128)

TORCH_CODE = r"""
import json, os, statistics, sys, time, torch
from transformers import AutoModelForCausalLM, BertModel
torch.set_num_threads(int(os.environ.get("OPENBLAS_NUM_THREADS", "2")))
kind, path, gguf, repeats = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
sizes = json.loads(sys.argv[5])
if kind == "decoder":
    model = AutoModelForCausalLM.from_pretrained(path, gguf_file=gguf, dtype=torch.float32, attn_implementation="eager")
    embed = model.model.embed_tokens
else:
    model = BertModel.from_pretrained(path, attn_implementation="eager")
    embed = model.embeddings.word_embeddings
model.eval()
for p in model.parameters():
    p.requires_grad_(False)
out = {}
for n, ids in sizes.items():
    ids = torch.tensor([ids])
    def forward():
        with torch.no_grad():
            model(ids, use_cache=False) if kind == "decoder" else model(ids)
    def both():
        x = embed(ids).detach().requires_grad_()
        result = model(inputs_embeds=x, use_cache=False) if kind == "decoder" else model(inputs_embeds=x)
        value = result.logits[0, -1].log_softmax(-1)[0] if kind == "decoder" else result.last_hidden_state[0, 0].sum()
        value.backward()
    times = {}
    for name, f in (("forward", forward), ("forward_backward", both)):
        f()
        samples = []
        for _ in range(repeats):
            t = time.process_time(); f(); samples.append(time.process_time() - t)
        times[name] = statistics.median(samples) * 1000
    out[n] = times
print(json.dumps(out))
"""


def median_ms(function, repeats: int) -> float:
    """Median CPU time of this process (all its threads) per call, in ms: on a machine other jobs
    share, wall time measures them more than the call (a 16-token forward took 40× its idle time)."""
    function()  # warm-up
    samples = []
    for _ in range(repeats):
        started = time.process_time()
        function()
        samples.append(time.process_time() - started)
    return statistics.median(samples) * 1000


def engine_rows(name: str, repeats: int) -> tuple[dict, dict]:
    from engine.grad.gradients import backward, forward_output, input_of, output_head
    from engine.grad.targets import Target, evaluate
    from engine.models import load_model
    from engine.models.contract import Tokenized

    model = load_model(name)
    all_ids = model.tokenize(TEXT).input_ids
    decoder = model.facts.kind == "decoder"
    rows, id_lists = {}, {}
    for n in SIZES:
        ids = np.array(all_ids[:n])
        tokens = model.tokenize(TEXT).tokens[:n]
        tokenized = Tokenized(TEXT, tuple(tokens), ids, None if decoder else np.zeros(n, np.int64))
        id_lists[n] = ids.tolist()
        x = input_of(model, tokenized)[None]
        target = Target("log_prob", token=0) if decoder else Target("cosine", position=0,
                                                                     reference=np.ones(model.facts.d_model))
        run = (lambda: model.run(tokenized, use_cache=False)) if decoder else (lambda: model.run(tokenized))
        output, saved = forward_output(model, x)
        _, grad_output = evaluate(target, output, output_head(model))
        rows[n] = {"model forward": median_ms(run, repeats),
                   "grad forward": median_ms(lambda: forward_output(model, x), repeats),
                   "backward": median_ms(lambda: backward(model, saved, grad_output), repeats)}
        rows[n]["backward / forward"] = rows[n]["backward"] / rows[n]["model forward"]
    return rows, id_lists


def torch_rows(kind: str, path: str, gguf: str, ids: dict, repeats: int) -> dict:
    result = subprocess.run([str(REFVENV), "-c", TORCH_CODE, kind, path, gguf, str(repeats), json.dumps(ids)],
                            capture_output=True, text=True, env={**os.environ, "HF_HUB_OFFLINE": "1"})
    if result.returncode:
        print("torch failed:", result.stderr[-500:])
        return {}
    return {int(n): row for n, row in json.loads(result.stdout.strip().splitlines()[-1]).items()}


def patching_rows(exact: bool) -> None:
    from engine.analysis.attribution_patching import attribution_patching, disagreement
    from engine.analysis.patching import activation_patching
    from engine.analysis.request import RunRequest
    from engine.models import load_model

    model = load_model("smollm2")
    clean, corrupt = "The Eiffel Tower is in the city of", "The Colosseum is in the city of"
    started, cpu = time.perf_counter(), time.process_time()
    approx = attribution_patching(model, clean, corrupt, " Paris")
    print(f"\nattribution patching, SmolLM2, Eiffel/Colosseum ({len(model.tokenize(clean).input_ids)} tokens): "
          f"{time.process_time() - cpu:.2f} s CPU ({time.perf_counter() - started:.2f} s wall) for all four grids "
          f"and their logit differences")
    if not exact:
        return
    started, cpu = time.perf_counter(), time.process_time()
    result = activation_patching(model, RunRequest(text=clean, answer=" Paris"), corrupt)
    print(f"exact grids: {time.process_time() - cpu:.1f} s CPU ({time.perf_counter() - started:.1f} s wall)")
    for grid, values in result.grids.items():
        correlation, cells = disagreement(approx.grids[grid], values, top=3)
        worst = ", ".join(f"[{r},{c}] AtP {a:.3f} vs {e:.3f}" for r, c, a, e in cells)
        print(f"  {grid:9s} p(answer) correlation {correlation:+.3f}; furthest apart: {worst}")
        correlation, _ = disagreement(approx.logit_diffs[grid], result.logit_diffs[grid])
        print(f"  {grid:9s} logit difference correlation {correlation:+.3f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--no-torch", action="store_true")
    parser.add_argument("--no-exact", action="store_true")
    args = parser.parse_args()
    sys.stdout.reconfigure(line_buffering=True)
    print("CPU:", next((line.split(":", 1)[1].strip() for line in open("/proc/cpuinfo") if "model name" in line), "?"),
          "| load:", os.getloadavg())
    from engine.models.minilm import find_model_dir
    from engine.models.smollm2 import find_smollm2

    gguf = find_smollm2()
    places = {"smollm2": ("decoder", str(gguf.parent), gguf.name), "minilm": ("encoder", str(find_model_dir()), "-")}
    for name, (kind, path, file) in places.items():
        rows, ids = engine_rows(name, args.repeats)
        torch = {} if args.no_torch or not REFVENV.exists() else torch_rows(kind, path, file, ids, args.repeats)
        for n, row in rows.items():
            line = ", ".join(f"{key} {value:.2f}" if "/" in key else f"{key} {value:.1f} ms" for key, value in row.items())
            if n in torch:
                line += (f"; torch forward {torch[n]['forward']:.1f} ms, forward + backward "
                         f"{torch[n]['forward_backward']:.1f} ms")
            print(f"{name} n={n}: {line}")
    patching_rows(not args.no_exact)
    print("load after:", os.getloadavg())


if __name__ == "__main__":
    main()
