"""Peak resident memory of the largest computations the memory budget allows, against the budget.

    python benchmarks/bench_memory.py            # SmolLM2 at its limit, each path
    python benchmarks/bench_memory.py --toy      # the toy engine's shapes below, one fresh process each

Default: every path that holds a SmolLM2 trace at the most tokens it allows
(the command line: engine alone, export .npz, .json refusal; the window, whose limit is lower:
first computation, an edit of the first word, Model layers' sentence comparison), three GGUF
models opened in turn and the loading peak, each in a fresh process started as main.py starts
(keep_freed_memory()), its peak resident memory read from the kernel (VmHWM) beside the budget:
footprint (interpreter and imports) + model (what a loaded SmolLM2 keeps resident, measured) +
trace budget (DEFAULT_MEMORY_BUDGET). Up to 3 GB per process, ~10 minutes. See benchmarks/README.md.

--toy:

For each (d_model, heads, mask/positional) the script finds the largest n whose estimate
(engine.core.memory.estimate_trace_bytes) fits DEFAULT_MEMORY_BUDGET, then runs compute() for it in a
new process started as main.py starts (keep_freed_memory()), and reports:

- footprint: resident memory of that process after importing the engine, before computing
  (ru_maxrss: the interpreter, NumPy, BLAS);
- peak: its maximum resident memory after compute() (ru_maxrss, which includes the footprint);
- estimate: what the budget check counted;
- the claim: peak ≤ budget + footprint.

Not a test: it allocates up to 2 GiB per shape and takes about a minute on 2 cores.
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from engine.core.memory import DEFAULT_MEMORY_BUDGET  # noqa: E402
from engine.core.memory import estimate_trace_bytes  # noqa: E402

SHAPES = [  # (d_model, heads, positional, mask)
    (64, 1, "sinusoidal", "none"),
    (64, 4, "sinusoidal", "none"),
    (512, 8, "rope", "causal"),
    (2048, 16, "sinusoidal", "none"),
    (8192, 1, "sinusoidal", "none"),
    (8192, 64, "rope", "none"),
]

CHILD = """
import json, resource, sys
sys.path.insert(0, {root!r})
from engine.core.memory import keep_freed_memory
keep_freed_memory()
from engine import AttentionConfig, compute
n, d, h, positional, mask = {n}, {d}, {h}, {positional!r}, {mask!r}
config = AttentionConfig(text=" ".join("w%d" % i for i in range(n)), tokenizer="whitespace", d_model=d, heads=h,
                         positional=positional, mask=mask)
footprint = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
result = compute(config)
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
print(json.dumps({{"footprint": footprint, "peak": peak}}))
"""


def largest_n(d_model: int, heads: int, rope: bool, budget: int = DEFAULT_MEMORY_BUDGET) -> int:
    low, high = 0, 1 << 20
    while low < high:  # the largest n with estimate ≤ budget
        middle = (low + high + 1) // 2
        if estimate_trace_bytes(middle, d_model, heads, rope) <= budget:
            low = middle
        else:
            high = middle - 1
    return low


def measure(n: int, d: int, h: int, positional: str, mask: str) -> dict:
    code = CHILD.format(root=str(ROOT), n=n, d=d, h=h, positional=positional, mask=mask)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


# ---------------------------------------------------------------- SmolLM2's paths

PRELUDE = """
import json, os, resource, sys
sys.path.insert(0, {root!r})
from engine.core.memory import keep_freed_memory
keep_freed_memory()
import numpy as np
import engine.models.decoder, engine.text.words, engine.files.export, cli.commands  # noqa: the imports every path makes

def status(key):
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) * 1024 for line in f if line.startswith(key + ":"))

setup = json.load(open({setup!r}))
text, window_text = setup["text"], setup["window_text"]
footprint = status("VmRSS")
out = {{}}
"""
FINISH = """
out.update(footprint=footprint, peak=status("VmHWM"), rss=status("VmRSS"))
print("RESULT " + json.dumps(out))
"""

SETUP = """
import json, sys
sys.path.insert(0, {root!r})
from engine.models import load_model
from engine.models.llama import longest_text
from engine.core.memory import DEFAULT_MEMORY_BUDGET
model = load_model("smollm2")
limit = longest_text(model.config, DEFAULT_MEMORY_BUDGET)
sentence = "The old man walked his dog along the river before the sun came up, and then he went home. "
words = (sentence * (2 + limit // 10)).split(" ")
def fitting_text(tokens):
    low, high = 1, len(words)
    while low < high:  # the most words whose tokens fit in ``tokens``
        middle = (low + high + 1) // 2
        if len(model.tokenize(" ".join(words[:middle])).input_ids) <= tokens:
            low = middle
        else:
            high = middle - 1
    return " ".join(words[:low])
text = fitting_text(limit)
from app.jobs.window_memory import window_longest
window_limit = window_longest(model.config, DEFAULT_MEMORY_BUDGET)
window_text = fitting_text(window_limit)  # the window holds two computations at once: a lower limit
print(json.dumps({{"text": text, "n": len(model.tokenize(text).input_ids), "limit": limit,
                  "window_text": window_text, "window_n": len(model.tokenize(window_text).input_ids),
                  "window_limit": window_limit,
                  "model_bytes": model.weights.nbytes, "file": str(model.path),
                  "file_bytes": model.path.stat().st_size}}))
"""

EDIT = 'edited = "A" + window_text[len("The"):]  # the first word changed: no prefix to reuse'

PATHS = {  # name → the child's code after PRELUDE
    "engine alone (Decoder.run)": """
from engine.models import load_model
model = load_model("smollm2")
trace = model.run(text)
out["n"] = trace.n
""",
    "export .npz (./run export)": """
out["exit"] = cli.commands.main(["main.py", "export", "--model", "smollm2", "--text", text, "--out", setup["tmp"] + "/x.npz"])
out["file_bytes"] = os.path.getsize(setup["tmp"] + "/x.npz") if out["exit"] == 0 else 0
""",
    "export .json (refused)": """
out["exit"] = cli.commands.main(["main.py", "export", "--model", "smollm2", "--text", text, "--out", setup["tmp"] + "/x.json"])
""",
    "window: first computation": """
from app.pretrained import take_pretrained_snapshot
from engine.core.errors import EngineError
try:
    take_pretrained_snapshot("smollm2", text, 0)  # the command line's limit: refused in the window
    out["refused"] = ""
except EngineError as error:
    out["refused"] = str(error)
shown = take_pretrained_snapshot("smollm2", window_text, 0)
""",
    "window: edit of the first word": """
from app.pretrained import take_pretrained_snapshot
shown = take_pretrained_snapshot("smollm2", window_text, 0)  # on screen while the edit computes (the controller's)
EDIT
shown = take_pretrained_snapshot("smollm2", edited, 0)
""".replace("EDIT", EDIT),
    "window: Model layers comparison": """
from app.pretrained import take_pretrained_snapshot
from app.jobs.trained import compare_texts
shown = take_pretrained_snapshot("smollm2", window_text, 0)  # on screen while the comparison computes
EDIT
compared = compare_texts("smollm2", window_text, edited)
out["pairs"] = len(compared["pairs"])
""".replace("EDIT", EDIT),
}
LOADS = {
    "three GGUF models in turn (item 7)": """
import shutil
from app.jobs import trained as minilm_mode
names = []
for letter in "abc":
    copy = setup["tmp"] + "/" + letter + ".gguf"
    shutil.copyfile(setup["file"], copy)
    names.append("gguf:" + copy)
for name in names:
    minilm_mode.model(name)
minilm_mode.model("toy")
import ctypes, gc
gc.collect()
out["kept"] = len(minilm_mode.loaded_models())
out["before_trim"] = status("VmRSS")
ctypes.CDLL(None).malloc_trim(0)  # what glibc still keeps after the releases (keep_freed_memory), handed back
""",
    "loading SmolLM2 (item 8)": """
from engine.models import load_model
model = load_model("smollm2")
""",
}


def run_child(code: str) -> dict:
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=str(ROOT))
    lines = [line for line in done.stdout.splitlines() if line.startswith("RESULT ")]
    if done.returncode != 0 or not lines:
        raise SystemExit(f"child failed (exit {done.returncode}):\n{done.stderr[-3000:]}")
    return json.loads(lines[-1][len("RESULT "):])


def model_paths(only: str = "") -> None:
    import tempfile

    mb = 1e6
    budget = DEFAULT_MEMORY_BUDGET
    with tempfile.TemporaryDirectory(prefix="bench-memory-") as tmp:
        done = subprocess.run([sys.executable, "-c", SETUP.format(root=str(ROOT))], capture_output=True, text=True,
                              check=True, cwd=str(ROOT))
        setup = json.loads(done.stdout.strip().splitlines()[-1])
        setup["tmp"] = tmp
        setup_path = Path(tmp) / "setup.json"
        setup_path.write_text(json.dumps(setup))
        weights = setup["model_bytes"]
        prelude = PRELUDE.format(root=str(ROOT), setup=str(setup_path))
        loaded = run_child(prelude + LOADS["loading SmolLM2 (item 8)"] + FINISH)
        model = loaded["rss"] - loaded["footprint"]  # what the loaded model keeps resident
        print(f"SmolLM2-135M: command line {setup['n']} tokens (its limit {setup['limit']}), window {setup['window_n']} "
              f"tokens (its limit {setup['window_limit']}); model resident {model / mb:.0f} MB (float32 weights "
              f"{weights / mb:.0f} MB, the tokenizer, the reader); trace budget {budget / mb:.0f} MB (DEFAULT_MEMORY_BUDGET)")
        print("| path | footprint MB | peak RSS MB | budget MB = footprint + model + trace budget | within | notes |")
        print("| --- | ---: | ---: | ---: | --- | --- |")
        for name, code in PATHS.items():
            if only and only not in name:
                continue
            figures = run_child(prelude + code + FINISH)
            limit = figures["footprint"] + model + budget
            notes = []
            if "exit" in figures:
                notes.append(f"exit {figures['exit']}")
            if figures.get("file_bytes"):
                notes.append(f"file {figures['file_bytes'] / mb:.0f} MB")
            if figures.get("refused"):
                notes.append(f"{setup['n']} tokens refused: {figures['refused'][:260]}")
            print(f"| {name} | {figures['footprint'] / mb:.0f} | {figures['peak'] / mb:.0f} | {limit / mb:.0f} "
                  f"| {'yes' if figures['peak'] <= limit else 'NO'} | {', '.join(notes)} |", flush=True)
        for name, code in LOADS.items():
            if only and only not in name:
                continue
            if name.startswith("loading"):  # measured first (the model's resident size): its figures again
                figures = loaded
                limit = figures["footprint"] + model + setup["file_bytes"]
                notes = (f"peak − footprint = {(figures['peak'] - figures['footprint']) / weights:.2f} × the float32 "
                         f"weights ({(figures['peak'] - figures['footprint'] - model) / mb:.0f} MB over what stays "
                         f"resident); budget: footprint + model + the file ({setup['file_bytes'] / mb:.0f} MB)")
            else:  # two models kept (the one in use and the previous one), a third loading
                figures = run_child(prelude + code + FINISH)
                limit = figures["footprint"] + 3 * model
                notes = (f"after, back on the toy engine: {figures['before_trim'] / mb:.0f} MB resident "
                         f"({figures['rss'] / mb:.0f} MB after malloc_trim), {figures['kept']} model(s) loaded; "
                         f"budget: footprint + 3 × model (two kept, one loading)")
            print(f"| {name} | {figures['footprint'] / mb:.0f} | {figures['peak'] / mb:.0f} | {limit / mb:.0f} "
                  f"| {'yes' if figures['peak'] <= limit else 'NO'} | {notes} |", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--toy", action="store_true", help="the toy engine's shapes (the older table)")
    parser.add_argument("--only", default="", help="run only the paths whose name contains this")
    options = parser.parse_args()
    if not options.toy:
        return model_paths(options.only)
    budget = DEFAULT_MEMORY_BUDGET
    mb = 1e6
    print(f"budget {budget / mb:.0f} MB ({budget / 1024**3:.0f} GiB)")
    print("| n | d_model | heads | positional, mask | estimate MB | footprint MB | peak MB | peak − footprint MB "
          "| budget + footprint − peak MB |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    worst = None
    for d, h, positional, mask in SHAPES:
        n = largest_n(d, h, positional == "rope")
        if n == 0:
            continue
        figures = measure(n, d, h, positional, mask)
        margin = budget + figures["footprint"] - figures["peak"]
        worst = margin if worst is None else min(worst, margin)
        print(f"| {n} | {d} | {h} | {positional}, {mask} | {estimate_trace_bytes(n, d, h, positional == 'rope') / mb:.0f} "
              f"| {figures['footprint'] / mb:.0f} | {figures['peak'] / mb:.0f} "
              f"| {(figures['peak'] - figures['footprint']) / mb:.0f} | {margin / mb:.0f} |", flush=True)
    print(f"smallest margin under budget + footprint: {worst / mb:.0f} MB ({'holds' if worst >= 0 else 'FAILS'})")


if __name__ == "__main__":
    main()
