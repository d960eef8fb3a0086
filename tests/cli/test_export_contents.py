"""Exported files checked exactly: row order, key sets and order, −∞ spelling, suffix case, and the
heatmap PNG's pixels against the matrix of the stage and head it claims to show.

Written against the files ``main.py export`` writes (cli.commands.main in process), so they hold
whatever the writers' code looks like. docs/FORMAT.md describes the formats checked here.
"""
from __future__ import annotations

import csv
import json

import numpy as np
import pytest

from cli import commands as cli
from engine import ARRAY_NAMES, AttentionConfig, compute

TEXT = "小明 喜欢 吃 苹果"
ARGS = ["--text", TEXT, "--tokenizer", "whitespace", "--d-model", "8", "--heads", "4", "--seed", "7",
        "--positional", "rope", "--mask", "causal", "--temperature", "0.8"]
# pictures: no mask (every cell has a colour); scaled = scores / divisor, so both look alike
PICTURE_ARGS = ["--text", TEXT, "--tokenizer", "whitespace", "--d-model", "8", "--heads", "4", "--seed", "7",
                "--positional", "rope", "--temperature", "0.8"]
CONFIG = AttentionConfig(text=TEXT, tokenizer="whitespace", d_model=8, heads=4, seed=7, positional="rope",
                         mask="causal", temperature=0.8)


def export(tmp_path, name: str, *extra: str):
    out = tmp_path / name
    assert cli.main(["main.py", "export", *extra, "--out", str(out)]) == 0
    return out


@pytest.fixture(scope="module")
def result():
    return compute(CONFIG)


@pytest.fixture(scope="module")
def picture_result():
    return compute(CONFIG.replace(mask="none"))


# ---------------------------------------------------------------------- data files
def test_csv_rows_are_head_major_with_exact_values(tmp_path, result):
    out = export(tmp_path, "w.csv", *ARGS)
    with open(out, encoding="utf-8", newline="") as stream:
        rows = list(csv.reader(stream))
    texts = result.token_texts
    assert rows[0] == ["head", "query_index", "query_token"] + [f"{j}:{t}" for j, t in enumerate(texts)]
    heads, n = result.weights.shape[:2]
    # head-major: all of head 0's queries, then head 1's … (docs/FORMAT.md)
    assert [(int(r[0]), int(r[1]), r[2]) for r in rows[1:]] == [(h, i, texts[i]) for h in range(heads) for i in range(n)]
    for row in rows[1:]:
        h, i = int(row[0]), int(row[1])
        written = np.array([float(cell) for cell in row[3:]], dtype=np.float32)
        np.testing.assert_array_equal(written, result.weights[h, i])  # 9 significant digits: float32 exactly


def test_json_spells_masked_cells_minus_infinity(tmp_path, result):
    document = json.loads(export(tmp_path, "t.json", *ARGS).read_text(encoding="utf-8"))
    scaled = document["scaled"]
    for h in range(result.weights.shape[0]):
        for i in range(result.n):
            for j in range(result.n):
                if result.mask[i, j]:
                    assert scaled[h][i][j] == "-Infinity", (h, i, j)
                else:
                    assert isinstance(scaled[h][i][j], float)
    assert "\"Infinity\"" not in json.dumps(document)


def test_npz_holds_exactly_the_documented_arrays(tmp_path, result):
    with np.load(export(tmp_path, "t.npz", *ARGS), allow_pickle=False) as data:
        names = set(data.files)
        # causal mask and RoPE: the mask and the unrotated q, k are saved too
        assert names == set(ARRAY_NAMES) | {"q_unrotated", "k_unrotated", "mask", "tokens", "token_spans", "config_json",
                                            "value_norms", "rollout", "value_rollout", "head_stats"}  # + the analyses
        np.testing.assert_array_equal(data["mask"], result.mask)
        np.testing.assert_array_equal(data["q_unrotated"], result.q_unrotated)


@pytest.mark.parametrize("name, magic", [("T.CSV", b"head,"), ("T.Json", b"{"), ("T.NPZ", b"PK"),
                                         ("F.PNG", b"\x89PNG")])
def test_suffixes_are_case_insensitive(tmp_path, qapp, name, magic):
    out = export(tmp_path, name, "--text", "a b c", "--heads", "2", "--width", "200")
    assert out.read_bytes().startswith(magic)
    assert [path.name for path in tmp_path.iterdir()] == [name]  # nothing else written beside it


@pytest.mark.slow
def test_minilm_npz_keys_in_order(tmp_path, minilm_model):
    text = "The cat sat on the mat."
    out = export(tmp_path, "m.npz", "--model", "minilm", "--text", text)
    trace = minilm_model.run(text)
    with np.load(out, allow_pickle=False) as data:
        assert data.files == ["tokens", "token_spans", "input_ids", "attentions", "hidden_states", "text",
                              "words", "word_index", "word_attentions",  # the word view
                              "value_norms", "rollout", "value_rollout", "head_stats",  # what attention moves (14)
                              "attention_sink", "cosine_to_layer0"]  # the residual stream's summaries
        assert data["tokens"].tolist() == trace.token_texts
        assert data["token_spans"].dtype == np.int64
        assert data["token_spans"].tolist() == [[t.start, t.end] for t in trace.tokens]
        np.testing.assert_array_equal(data["input_ids"], np.asarray(trace.input_ids))
        assert data["attentions"].shape == (6, 12, trace.n, trace.n)
        np.testing.assert_array_equal(data["attentions"], trace.attentions)
        assert data["hidden_states"].shape == (7, trace.n, 384)
        np.testing.assert_array_equal(data["hidden_states"], trace.hidden_states)
        assert str(data["text"]) == text


# ---------------------------------------------------------------------- heatmap pictures
def _colormap_lut(name: str) -> np.ndarray:
    import pyqtgraph as pg

    return pg.colormap.get(name).getLookupTable(0.0, 1.0, 256, alpha=False).astype(float)  # (256, 3)


def _heatmap_cells(path, n: int, lut: np.ndarray) -> np.ndarray:
    """(n, n) colour positions 0 … 1 along ``lut`` read from the one-head PNG at ``path``.

    The heatmap is found as the widest block of columns whose pixels lie on the colour map (the
    colour bar is a narrow one), then split into n × n cells; each cell's colour is the median of
    its on-map pixels (the number written in the cell is not on the map).
    """
    from PySide6.QtGui import QImage

    image = QImage(str(path)).convertToFormat(QImage.Format.Format_RGB888)
    assert not image.isNull()
    height, width = image.height(), image.width()
    raw = np.frombuffer(image.constBits(), dtype=np.uint8, count=image.sizeInBytes())
    rgb = raw.reshape(height, image.bytesPerLine())[:, : width * 3].reshape(height, width, 3).astype(float)
    # the distance to the map, per distinct colour (a picture holds a few thousand; per pixel × 256
    # map colours it was a (h, w, 256, 3) float64 array: seconds and a gigabyte for one picture)
    colours, inverse = np.unique(rgb.reshape(-1, 3), axis=0, return_inverse=True)  # (c, 3), (h·w,)
    nearest = np.min(((colours[:, None, :] - lut[None, :, :]) ** 2).sum(-1), axis=1)  # (c,)
    distance = nearest[inverse.reshape(-1)].reshape(height, width)  # (h, w)
    on_map = distance <= 12.0
    column_counts = on_map.sum(axis=0)
    dense = column_counts > 0.5 * column_counts.max()
    runs, start = [], None
    for x, flag in enumerate(list(dense) + [False]):
        if flag and start is None:
            start = x
        elif not flag and start is not None:
            runs.append((x - start, start, x))
            start = None
    _, left, right = max(runs)
    row_counts = on_map[:, left:right].sum(axis=1)
    rows_on = np.flatnonzero(row_counts > 0.5 * (right - left))
    top, bottom = rows_on[0], rows_on[-1] + 1
    assert right - left > 8 * n and bottom - top > 8 * n, "the heatmap was not found in the picture"
    positions = np.empty((n, n))
    for i in range(n):
        for j in range(n):
            y0, y1 = top + (bottom - top) * i // n, top + (bottom - top) * (i + 1) // n
            x0, x1 = left + (right - left) * j // n, left + (right - left) * (j + 1) // n
            inner = (slice(y0 + (y1 - y0) // 6, y1 - (y1 - y0) // 6), slice(x0 + (x1 - x0) // 6, x1 - (x1 - x0) // 6))
            pixels = rgb[inner][on_map[inner]]  # (k, 3)
            assert len(pixels) > 10, (i, j)
            colour = np.median(pixels, axis=0)
            positions[i, j] = np.argmin(((lut - colour) ** 2).sum(-1)) / 255.0
    return positions


def _expected_positions(matrix: np.ndarray, stage: str) -> np.ndarray:
    """Where each value sits on the colour map: weights from 0 to the head's largest weight,
    scores on ± the head's largest |value| (masked cells are not compared: NaN)."""
    finite = np.isfinite(matrix)
    if stage == "weights":
        low, high = 0.0, float(matrix.max())
    else:
        bound = float(np.abs(matrix[finite]).max())
        low, high = -bound, bound
    return np.where(finite, (matrix - low) / (high - low), np.nan)


@pytest.mark.slow
@pytest.mark.parametrize("stage", ["weights", "scaled", "scores"])
def test_one_head_png_shows_that_heads_matrix_of_that_stage(tmp_path, qapp, picture_result, stage):
    from app.heatmap import DIVERGING_MAP, WEIGHTS_MAP

    lut = _colormap_lut(WEIGHTS_MAP if stage == "weights" else DIVERGING_MAP)
    result = picture_result
    out = export(tmp_path, f"{stage}.png", *PICTURE_ARGS, "--head", "2", "--stage", stage, "--width", "600")
    shown = _heatmap_cells(out, result.n, lut)
    for head in range(result.weights.shape[0]):
        expected = _expected_positions(getattr(result, stage)[head].astype(np.float64), stage)
        compared = np.isfinite(expected)
        error = np.abs(shown[compared] - expected[compared]).max()
        if head == 2:
            assert error < 0.03, f"head 2's {stage} are not what the picture shows (off by {error:.3f})"
        elif not np.allclose(expected[compared], _expected_positions(getattr(result, stage)[2], stage)[compared],
                             atol=0.1):
            assert error > 0.05, f"the picture titled head 2 matches head {head}'s {stage}"
    if stage != "weights":  # the picture of the scores must not be the weights' picture
        weights = _expected_positions(result.weights[2].astype(np.float64), "weights")
        assert not np.allclose(shown, weights, atol=0.05)


@pytest.mark.slow
def test_head_2_and_head_0_figures_differ(tmp_path, qapp, picture_result):
    from app.heatmap import WEIGHTS_MAP

    lut = _colormap_lut(WEIGHTS_MAP)
    n = picture_result.n
    head_0 = _heatmap_cells(export(tmp_path, "h0.png", *PICTURE_ARGS, "--head", "0", "--width", "500"), n, lut)
    head_2 = _heatmap_cells(export(tmp_path, "h2.png", *PICTURE_ARGS, "--head", "2", "--width", "500"), n, lut)
    assert np.abs(head_0 - head_2).max() > 0.1
