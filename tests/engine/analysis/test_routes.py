"""Information-flow routes (engine/analysis/routes.py) against references that share nothing with it:
MiniLM and SmolLM2 against transformers with torch hooks and float64 loops
(tests/fixtures/routes_reference.npz, scripts/make_routes_reference.py) at two thresholds, tiny
decoder and encoder files against a float64 loop written here from the hook values, the route's
walk on a graph drawn by hand, and ``export --routes`` with its bad input."""
from __future__ import annotations

import json

import numpy as np
import pytest

from engine.analysis.request import NotApplicable, RunRequest
from engine.analysis.routes import EDGE_KINDS, flow_routes, route_edges
from engine.core.errors import EngineError
from tests import FIXTURES

pytest.importorskip("tokenizers")

FIXTURE = FIXTURES / "routes_reference.npz"
FAMILIES = FIXTURES / "families"
TEXT = " the cat sat on the mat"


def loop_importances(model, text: str, ablate=frozenset()):
    """(heads, residual, mlp, mlp_residual) by the paper's rule, one part at a time in float64."""
    layers, heads = model.facts.layers, model.facts.heads
    group = heads // model.facts.kv_heads
    _, cache = model.run_with_cache(text, None, ablate=ablate, use_cache=False)
    n = cache["blocks.0.hook_resid_pre"].shape[0]
    out_heads, residual = np.zeros((layers, heads, n, n)), np.zeros((layers, n))
    mlp, mlp_residual = np.zeros((layers, n)), np.zeros((layers, n))

    def shares(parts, whole):
        close = [max(0.0, np.abs(whole).sum() - np.abs(whole - p).sum()) for p in parts]
        return [c / sum(close) if sum(close) else 0.0 for c in close]

    for l in range(layers):
        c = {k: np.asarray(cache[f"blocks.{l}.{k}"], np.float64) for k in
             ("attn.hook_pattern", "attn.hook_v", "hook_resid_pre", "hook_resid_mid", "hook_mlp_out", "hook_resid_post")}
        w_o = np.asarray(model.W_O[l], np.float64)
        for i in range(n):
            parts, keys = [c["hook_resid_pre"][i]], [None]
            for h in range(heads):
                on = (l, h) not in ablate
                for j in range(n):
                    parts.append(on * c["attn.hook_pattern"][h, i, j] * (c["attn.hook_v"][j, h // group] @ w_o[h]))
                    keys.append((h, j))
            s = shares(parts, c["hook_resid_mid"][i])
            residual[l, i] = s[0]
            for (h, j), value in zip(keys[1:], s[1:]):
                out_heads[l, h, i, j] = value
            m = c["hook_mlp_out"][i]
            mlp[l, i], mlp_residual[l, i] = shares([m, c["hook_resid_post"][i] - m], c["hook_resid_post"][i])
    return out_heads, residual, mlp, mlp_residual


@pytest.mark.parametrize("family", ["qwen3", "bert"])
def test_tiny_files_equal_the_loop(family):
    from engine.models.families.loading import load_folder

    model = load_folder(FAMILIES / family)
    ablate = frozenset({(0, 1)})
    routes = flow_routes(model, RunRequest(text=TEXT, tau=0.05, ablate=ablate))
    expected = loop_importances(model, TEXT, ablate)
    for got, want in zip((routes.heads, routes.residual, routes.mlp, routes.mlp_residual), expected):
        np.testing.assert_allclose(got, want, atol=1e-5)
    assert not routes.heads[0, 1].any()  # the switched-off head carried nothing
    sums = routes.heads.sum(axis=(1, 3)) + routes.residual  # each attention sum's importances add up to 1
    np.testing.assert_allclose(sums[sums > 0], 1.0, atol=1e-12)


def _as_rows(edges: np.ndarray) -> np.ndarray:
    kinds = np.array([EDGE_KINDS.index(k) for k in edges["kind"]])
    return np.stack([edges["layer"], kinds, edges["head"], edges["from"], edges["to"]], axis=1)


def _check_against(routes_of, data, prefix: str) -> None:
    taus, position = data["taus"], int(data[f"{prefix}_position"])
    first = routes_of(float(taus[0]), position)
    for key in ("heads", "residual", "mlp", "mlp_residual"):
        np.testing.assert_allclose(getattr(first, key), data[f"{prefix}_{key}"], atol=1e-4, err_msg=f"{prefix} {key}")
    assert tuple(data["kinds"]) == EDGE_KINDS
    for k, tau in enumerate(taus):
        routes = first if k == 0 else routes_of(float(tau), position)
        np.testing.assert_array_equal(_as_rows(routes.edges), data[f"{prefix}_edges_{k}"], err_msg=f"{prefix} τ={tau}")
        np.testing.assert_allclose(routes.edges["importance"], data[f"{prefix}_importance_{k}"], atol=1e-4)
    assert len(data[f"{prefix}_edges_0"]) > len(data[f"{prefix}_edges_1"]) > 0  # the higher τ keeps fewer


@pytest.mark.slow
def test_minilm_routes_equal_the_reference(minilm_model):
    with np.load(FIXTURE) as data:
        text = "The animal didn't cross the street because it was tired."
        assert list(minilm_model.tokenize(text).input_ids) == data["minilm_ids"].tolist()
        _check_against(lambda tau, p: flow_routes(minilm_model, RunRequest(text=text, tau=tau, position=p)),
                       data, "minilm")


@pytest.mark.slow
def test_smollm2_routes_equal_the_reference_with_and_without_heads_off(smollm2_model):
    text = "The Eiffel Tower is in the city of"
    with np.load(FIXTURE) as data:
        assert list(smollm2_model.tokenize(text).input_ids) == data["smollm2_ids"].tolist()
        _check_against(lambda tau, p: flow_routes(smollm2_model, RunRequest(text=text, tau=tau)), data, "smollm2")
        ablate = frozenset(map(tuple, data["smollm2_ablate"].tolist()))
        _check_against(lambda tau, p: flow_routes(smollm2_model, RunRequest(text=text, tau=tau, ablate=ablate)),
                       data, "smollm2_ablated")


def test_the_route_walks_down_only_from_nodes_on_it():
    """Two layers, three tokens: 2 ← (attention) 0 in layer 1, 0 ← residual in layer 0; the edge 1 → 1
    is strong but leads to no node on the route, and an edge exactly at τ stays out."""
    heads = np.zeros((2, 2, 3, 3))
    residual, mlp, mlp_residual = np.zeros((2, 3)), np.full((2, 3), 0.5), np.full((2, 3), 0.5)
    heads[1, 0, 2, 0], heads[1, 1, 2, 0] = 0.3, 0.2  # layer 1: token 0 → 2 through both heads (0.5)
    heads[1, 1, 1, 1] = 0.9  # strong, but token 1 is not on the route at layer 1
    residual[1, 2] = 0.5
    heads[0, 0, 0, 1] = 0.1  # exactly τ: left out
    residual[0, 0] = 0.9
    edges = route_edges(heads, residual, mlp, mlp_residual, position=2, tau=0.1)
    got = {(int(e["layer"]), str(e["kind"]), int(e["head"]), int(e["from"]), int(e["to"])) for e in edges}
    assert got == {(1, "mlp", -1, 2, 2), (1, "mlp_residual", -1, 2, 2), (1, "attention", -1, 0, 2),
                   (1, "head", 0, 0, 2), (1, "head", 1, 0, 2), (1, "residual", -1, 2, 2),
                   (0, "mlp", -1, 0, 0), (0, "mlp", -1, 2, 2), (0, "mlp_residual", -1, 0, 0),
                   (0, "mlp_residual", -1, 2, 2), (0, "residual", -1, 0, 0)}
    attention = edges[edges["kind"] == "attention"]
    assert attention["importance"].tolist() == [0.5]
    assert edges["layer"].tolist() == sorted(edges["layer"].tolist())


@pytest.mark.parametrize("tau", [0.0, 1.0, -0.2, 1.5, float("nan")])
def test_tau_outside_zero_one_is_refused(tau):
    from engine.models.families.loading import load_folder

    with pytest.raises(EngineError, match="strictly between 0 and 1"):
        flow_routes(load_folder(FAMILIES / "qwen3"), RunRequest(text=TEXT, tau=tau))


def test_the_table_computes_routes_only_when_asked():
    from engine.analysis.table import run_analysis
    from engine.models.families.loading import load_folder

    model = load_folder(FAMILIES / "qwen3")
    assert isinstance(run_analysis("routes", model, RunRequest(text=TEXT)), NotApplicable)
    asked = run_analysis("routes", model, RunRequest(text=TEXT, tau=0.1))
    assert set(asked.arrays()) == {"route_edges"} and len(asked.edges)


def _export(args, capsys):
    from cli.commands import main

    code = main(["main.py", "export", *args])
    return code, capsys.readouterr().err.strip().splitlines()


@pytest.mark.parametrize("family, suffix", [("qwen3", ".npz"), ("bert", ".json")])  # a decoder's trace is .npz only
def test_export_writes_the_engines_route(tmp_path, capsys, family, suffix):
    from engine.models import load_model, register_folder

    name = register_folder(FAMILIES / family)
    out = tmp_path / f"routes{suffix}"
    code, _ = _export(["--model", name, "--text", TEXT, "--routes", "--tau", "0.08", "--position", "2",
                       "--ablate", "1.0", "--out", str(out)], capsys)
    assert code == 0
    expected = flow_routes(load_model(name), RunRequest(text=TEXT, tau=0.08, position=2, ablate=frozenset({(1, 0)})))
    assert len(expected.edges) and (expected.edges["to"][expected.edges["layer"] == expected.edges["layer"].max()] == 2).all()
    if suffix == ".npz":
        with np.load(out) as data:
            np.testing.assert_array_equal(data["route_edges"], expected.edges)
    else:
        rows = json.loads(out.read_text())["route_edges"]
        assert rows[0] == {key: (str(v) if key == "kind" else v.item()) for key, v in
                           zip(expected.edges.dtype.names, expected.edges[0])}
        assert len(rows) == len(expected.edges)


@pytest.mark.parametrize("args, words", [
    (["--routes", "--tau", "0"], "strictly between 0 and 1"),
    (["--routes", "--tau", "1.2"], "strictly between 0 and 1"),
    (["--tau", "0.1"], "--routes"),
    (["--routes", "--position", "40"], "position 40"),
])
def test_export_refuses_bad_routes_input_in_one_line(tmp_path, capsys, args, words):
    from engine.models import register_folder

    out = tmp_path / "bad.npz"
    code, lines = _export(["--model", register_folder(FAMILIES / "qwen3"), "--text", TEXT, *args, "--out", str(out)],
                          capsys)
    assert code == 2 and len(lines) == 1 and words in lines[0], lines
    assert not out.exists()


def test_export_refuses_routes_of_the_toy_and_in_a_picture(tmp_path, capsys):
    code, lines = _export(["--text", "the cat sat", "--routes", "--out", str(tmp_path / "t.npz")], capsys)
    assert code == 2 and len(lines) == 1 and "pretrained" in lines[0]
    code, lines = _export(["--text", "the cat sat", "--routes", "--out", str(tmp_path / "t.png")], capsys)
    assert code == 2 and len(lines) == 1 and "images" in lines[0]


def test_more_tokens_than_the_limit_say_the_limit_and_the_count_before_any_run(monkeypatch, tmp_path, capsys):
    from engine.analysis import routes, table
    from engine.models import register_folder
    from engine.models.families.loading import load_folder

    monkeypatch.setattr(routes, "ROUTES_TOKENS", 4)
    monkeypatch.setattr(table, "BY_NAME", {**table.BY_NAME, "routes": table.Analysis(
        "routes", ("encoder", "decoder"), 4, routes.routes_of, "the routes analysis")})
    model = load_folder(FAMILIES / "qwen3")
    monkeypatch.setattr(model, "run_with_cache", lambda *a, **k: pytest.fail("ran the model"))
    with pytest.raises(EngineError, match="at most 4 tokens; this text has 6"):
        flow_routes(model, RunRequest(text=TEXT, tau=0.1))
    out = tmp_path / "long.npz"
    code, lines = _export(["--model", register_folder(FAMILIES / "qwen3"), "--text", TEXT, "--routes",
                           "--out", str(out)], capsys)
    assert code == 2 and len(lines) == 1 and "at most 4 tokens; this text has 6" in lines[0] and not out.exists()
