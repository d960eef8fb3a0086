"""Write tests/fixtures/flow_reference.npz: attention flow (Abnar & Zuidema 2020) on
all-MiniLM-L6-v2's own attentions, computed by networkx's maximum flow, for tests/engine/analysis/test_flow.py.

Two steps, two interpreters (the app's venv has the model, the reference venv has networkx):

    .venv/bin/python scripts/make_flow_reference.py --attentions      # the engine's attentions
    /work/refvenv/bin/python scripts/make_flow_reference.py           # networkx's flows

The first step saves the engine's MiniLM attentions (layers, heads, n, n) of TEXT; the second
builds the layered graph of the paper — nodes (l, k), an edge (l, k) → (l + 1, m) of capacity
Â_l[m, k] with Â_l = rows_normalised(0.5·mean over heads + 0.5·I) — written out here from the
definition (the engine's code is not imported) and asks networkx (preflow-push) for the maximum
flow from (0, j) to (L, i) for every pair.

What is stored (the file must stay small):
- ``text``, ``attentions`` (layers, heads, n, n) float32 — the engine's, exactly as the test uses them;
- ``flow`` (n, n) float64: [i, j] = maximum flow from input token j to final position i;
- ``meta``: JSON with the versions used.
"""
from __future__ import annotations

import argparse
import json
import platform
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "tests" / "fixtures" / "flow_reference.npz"
STEP1 = ROOT / "tests" / "fixtures" / "flow_attentions.npy"
TEXT = "The animal didn't cross the street because it was too tired."


def save_attentions() -> None:
    sys.path.insert(0, str(ROOT))
    from engine.models import load_model

    trace = load_model("minilm").run(TEXT)
    np.save(STEP1, np.asarray(trace.attentions, dtype=np.float32))
    print(f"wrote {STEP1} {trace.attentions.shape}")


def capacities(attentions: np.ndarray) -> np.ndarray:
    mean = attentions.astype(np.float64).mean(axis=1)  # (layers, n, n)
    n = mean.shape[-1]
    mixed = 0.5 * mean + 0.5 * np.eye(n)
    return mixed / mixed.sum(axis=-1, keepdims=True)


def flow_graph(attentions: np.ndarray):
    """(networkx DiGraph, layers, n): node (l, k) → (l + 1, m) with capacity Â_l[m, k] (> 0 only)."""
    import networkx as nx

    caps = capacities(attentions)
    layers, n, _ = caps.shape
    graph = nx.DiGraph()
    for l in range(layers):
        for m in range(n):
            for k in range(n):
                if caps[l, m, k] > 0:
                    graph.add_edge((l, k), (l + 1, m), capacity=float(caps[l, m, k]))
    return graph, layers, n


def networkx_flows(attentions: np.ndarray) -> tuple[np.ndarray, str, float]:
    import networkx as nx

    graph, layers, n = flow_graph(attentions)
    flows = np.zeros((n, n))
    start = time.perf_counter()
    for i in range(n):
        for j in range(n):
            flows[i, j] = nx.maximum_flow_value(graph, (0, j), (layers, i))
    return flows, nx.__version__, time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--attentions", action="store_true", help="step 1: save the engine's attentions")
    args = parser.parse_args()
    if args.attentions:
        save_attentions()
        return
    attentions = np.load(STEP1)
    flows, version, seconds = networkx_flows(attentions)
    meta = {"networkx": version, "numpy": np.__version__, "python": platform.python_version(),
            "seconds": round(seconds, 2), "algorithm": "networkx.maximum_flow_value (preflow_push)"}
    np.savez_compressed(OUT, text=np.array(TEXT), attentions=attentions, flow=flows, meta=np.array(json.dumps(meta)))
    STEP1.unlink()
    print(f"wrote {OUT}: {attentions.shape}, {seconds:.1f} s in networkx")


if __name__ == "__main__":
    main()
