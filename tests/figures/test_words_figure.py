"""The heatmap's picture by words: PNG, SVG and the clipboard show what the window shows with *By words*
(e5's 小明喜欢苹果: 5 words from 6 pieces), from the window and from ``export --by words``. Counted in the
pixels: the key labels under the heatmap and the query labels beside it."""
from __future__ import annotations

import numpy as np
import pytest

XIAOMING = "小明喜欢苹果"  # e5: <s> ▁小 明 喜欢 苹果 </s>; by words <s> 小明 喜欢 苹果 </s>


def _runs(mask, gap=0):
    """(start, stop) of the runs of True in a 1-D mask, runs closer than ``gap`` merged."""
    runs = []
    for x in np.flatnonzero(mask):
        if runs and x - runs[-1][1] <= gap:
            runs[-1][1] = x + 1
        else:
            runs.append([x, x + 1])
    return [tuple(r) for r in runs]


def heatmap_labels(pixels) -> tuple[int, int]:
    """(columns, rows) of the one heatmap in a figure: its key labels under it and its query labels left
    of it, counted as blobs of dark text in the RGBA ``pixels``."""
    rgb = pixels[:, :, :3].astype(int)
    filled = rgb.min(axis=2) < 200  # cells, any colour of the map; the white page and grey ticks are not
    left, right = max(_runs(filled.mean(axis=0) > 0.4), key=lambda r: r[1] - r[0])  # wider than the colour bar
    top, bottom = max(_runs(filled[:, left:right].mean(axis=1) > 0.9), key=lambda r: r[1] - r[0])
    dark = rgb.max(axis=2) < 120  # text
    below = dark[bottom + 6: bottom + 30, left:right]  # the key labels, under the tick marks
    beside = dark[top:bottom, max(left - 22, 0): left - 6]  # the query labels' right ends, left of the ticks
    return len(_runs(below.any(axis=0), gap=6)), len(_runs(beside.any(axis=1), gap=4))


def png_pixels(path) -> np.ndarray:
    from PySide6.QtGui import QImage

    from figures.render import image_pixels

    image = QImage(str(path))
    assert not image.isNull(), path
    return image_pixels(image)


def test_a_figure_by_words_has_one_column_and_row_a_word():
    """Six toy pieces drawn as three words: three labels each way (six by pieces: the counter works)."""
    from engine import AttentionConfig, compute
    from engine.text.words import roll_up
    from figures.render import image_pixels, render_image

    result = compute(AttentionConfig(text="a b c d e f", tokenizer="whitespace", heads=2))
    index = np.array([0, 0, 1, 1, 2, 2])
    words = (("ab", "cd", "ef"), roll_up(result.weights, index))
    assert heatmap_labels(image_pixels(render_image(result, head=1, words=words))) == (3, 3)
    assert heatmap_labels(image_pixels(render_image(result, head=1))) == (6, 6)
    # by hand in float64: word row i, word column j = mean over i's pieces of the sum over j's pieces
    weights = result.weights[1].astype(np.float64)
    expected = np.array([[weights[2 * i:2 * i + 2, 2 * j:2 * j + 2].sum(axis=1).mean() for j in range(3)]
                         for i in range(3)])
    np.testing.assert_allclose(words[1][1], expected, atol=1e-6)


def test_a_figure_by_words_refuses_the_scores():
    from engine import AttentionConfig, EngineError, compute
    from figures.render import render_image

    result = compute(AttentionConfig(text="a b", tokenizer="whitespace", heads=1))
    with pytest.raises(EngineError, match="by words a figure shows the softmax weights"):
        render_image(result, head=0, stage="scores", words=(("ab",), np.ones((1, 1, 1))))


@pytest.mark.slow
def test_the_windows_png_svg_and_clipboard_by_words_have_five_columns(window, e5_model, tmp_path):
    """e5 by words shows 5 words on screen; the exported PNG had the 6 pieces."""
    from PySide6.QtWidgets import QApplication

    from figures.render import image_pixels

    window.controller.set_config(window.controller.config.replace(text=XIAOMING), immediate=True)
    window.controller.set_by_words(True)
    window.model_combo.setCurrentIndex(window.model_combo.findData("e5"))
    assert window.wait_until_idle(90)
    window.controller.recompute()
    assert window.wait_until_idle(90)
    shown = window.panels["attention"].heatmap
    assert shown.matrix().shape == (5, 5)  # what the window shows
    assert window.exports.export_heatmap(str(tmp_path / "words.png"), window.controller.head, 1200)
    assert heatmap_labels(png_pixels(tmp_path / "words.png")) == (5, 5)
    assert window.exports.export_heatmap(str(tmp_path / "words.svg"), window.controller.head)
    svg = (tmp_path / "words.svg").read_text(encoding="utf-8")
    assert ">小明<" in svg and "▁小" not in svg
    window.exports.copy_image()
    assert heatmap_labels(image_pixels(QApplication.clipboard().image())) == (5, 5)
    window.controller.set_by_words(False)
    window.controller.recompute()
    assert window.wait_until_idle(90)
    assert window.exports.export_heatmap(str(tmp_path / "pieces.png"), window.controller.head, 1200)
    assert heatmap_labels(png_pixels(tmp_path / "pieces.png")) == (6, 6)


@pytest.mark.slow
def test_export_by_words_draws_the_words(e5_model, tmp_path, capsys):
    from cli.commands import main

    out = tmp_path / "words.png"
    assert main(["main.py", "export", "--model", "e5", "--text", XIAOMING, "--by", "words", "--head", "3",
                 "--out", str(out)]) == 0, capsys.readouterr().err
    assert heatmap_labels(png_pixels(out)) == (5, 5)
    assert main(["main.py", "export", "--model", "e5", "--text", XIAOMING, "--by", "words", "--stage", "scaled",
                 "--out", str(tmp_path / "x.png")]) == 2
    assert capsys.readouterr().err.count("\n") == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == ["words.png"]
