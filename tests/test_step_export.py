"""Step-through exports: one GIF frame / MP4 frame / PDF page per player stage, each different."""
from __future__ import annotations

import re
import shutil
import subprocess

import numpy as np
import pytest

from app.panels.player_panel import STAGE_KEYS

XIAOMING = 0  # the preset of the hand calculation (app/presets.py)


@pytest.fixture(scope="module")
def pages():
    from app.presets import preset_config
    from app.render import ensure_application
    from app.step_export import stages_of

    ensure_application()
    return stages_of(preset_config(XIAOMING))


def gif_frames(path) -> list[np.ndarray]:
    from PIL import Image

    image = Image.open(path)
    frames = []
    for index in range(image.n_frames):
        image.seek(index)
        frames.append(np.asarray(image.convert("RGB")).copy())
    return frames


def test_the_gif_has_one_frame_per_stage_and_every_frame_differs(pages, tmp_path):
    from app.step_export import export_steps

    path = tmp_path / "xiaoming.gif"
    export_steps(pages, path)
    frames = gif_frames(path)
    assert len(frames) == len(STAGE_KEYS) == 9
    for i in range(len(frames)):
        for j in range(i + 1, len(frames)):
            changed = np.any(frames[i] != frames[j], axis=2).mean()
            assert changed > 0.001, f"frames {i} and {j} are the same picture"


def test_the_pages_hold_the_engines_numbers(pages):
    from app.presets import preset_config
    from engine import compute

    result = compute(preset_config(XIAOMING))
    by_key = dict(zip(STAGE_KEYS, pages))
    np.testing.assert_array_equal(by_key["weights"].matrices["weights"], result.weights[0])
    # 喜欢's row of the hand calculation, by an independent float64 softmax of its scores [0, 1, 1]
    scores = np.array([0.0, 1.0, 1.0])
    expected = np.exp(scores) / np.exp(scores).sum()
    np.testing.assert_allclose(by_key["weights"].matrices["weights"][1], expected, atol=1e-6)
    assert "小明" in by_key["tokens"].caption


def test_the_mp4_decodes_to_one_frame_per_stage(pages, tmp_path):
    imageio_ffmpeg = pytest.importorskip("imageio_ffmpeg")
    from app.step_export import export_steps

    path = tmp_path / "xiaoming.mp4"
    export_steps(pages, path)
    frames, _seconds = imageio_ffmpeg.count_frames_and_secs(str(path))  # decodes every frame with ffmpeg
    assert frames == len(STAGE_KEYS)
    info = subprocess.run([imageio_ffmpeg.get_ffmpeg_exe(), "-hide_banner", "-i", str(path)],
                          capture_output=True, text=True).stderr
    assert "Video: h264" in info, info


def test_the_pdf_has_one_page_per_stage(pages, tmp_path):
    from app.step_export import export_steps

    path = tmp_path / "xiaoming.pdf"
    export_steps(pages, path, title="小明 喜欢 苹果")
    data = path.read_bytes()
    assert data.startswith(b"%PDF")
    assert len(re.findall(rb"/Type\s*/Page\b", data)) == len(STAGE_KEYS)
    if shutil.which("pdftoppm"):  # poppler renders every page
        subprocess.run(["pdftoppm", "-r", "20", "-png", str(path), str(tmp_path / "page")], check=True)
        assert len(list(tmp_path.glob("page-*.png"))) == len(STAGE_KEYS)


def test_the_command_line_writes_the_steps_and_refuses_other_suffixes(tmp_path, capsys):
    from cli.commands import main

    table = tmp_path / "table.json"
    table.write_text('{"小明": [1, 0], "喜欢": [0, 1], "苹果": [1, 1]}', encoding="utf-8")
    out = tmp_path / "steps.gif"
    code = main(["main.py", "export", "--steps", "--text", "小明 喜欢 苹果", "--tokenizer", "whitespace",
                 "--d-model", "2", "--heads", "1", "--positional", "none", "--no-scale", "--weights", "identity",
                 "--embeddings", str(table), "--out", str(out)])
    assert code == 0, capsys.readouterr().err
    assert len(gif_frames(out)) == len(STAGE_KEYS)
    code = main(["main.py", "export", "--steps", "--text", "a b", "--out", str(tmp_path / "steps.png")])
    assert code == 2
    assert capsys.readouterr().err.strip() == f"error: --steps writes .gif, .mp4 or .pdf; got '{tmp_path / 'steps.png'}'"
    assert not (tmp_path / "steps.png").exists()


def test_the_window_exports_the_steps_from_the_file_menu(window, qtbot, tmp_path):
    from PySide6.QtGui import QAction

    texts = {action.text().replace("&", "") for action in window.findChildren(QAction)}
    assert "Export step-through…" in texts
    player = window.show_player()
    qtbot.waitUntil(lambda: player.shown_result() is not None, timeout=10000)
    path = tmp_path / "window.pdf"
    assert window.exports.export_steps(str(path))
    qtbot.waitUntil(path.exists, timeout=30000)
    assert len(re.findall(rb"/Type\s*/Page\b", path.read_bytes())) == len(STAGE_KEYS)


def test_the_steps_of_a_real_model_follow_its_player(minilm_model, tmp_path, capsys):
    """issue 24 leftover 5: the player shows MiniLM's layer (its Q, K, V, scores, weights), so
    ``export --steps --model minilm`` writes those stages; the weights page holds the model's own."""
    from cli.commands import main

    text = "I ate the cake and it was delicious."
    out = tmp_path / "minilm.gif"
    code = main(["main.py", "export", "--steps", "--model", "minilm", "--text", text, "--layer", "5",
                 "--head", "11", "--out", str(out)])
    assert code == 0, capsys.readouterr().err
    frames = gif_frames(out)
    assert len(frames) == len(STAGE_KEYS)
    for i in range(len(frames) - 1):
        assert np.any(frames[i] != frames[i + 1], axis=2).mean() > 0.001
    from app.step_export import stages_of
    from engine import AttentionConfig

    pages = dict(zip(STAGE_KEYS, stages_of(AttentionConfig(text=text), head=11, model="minilm", layer=5)))
    trace = minilm_model.run(text)
    weights = np.asarray(trace.attentions[5, 11], dtype=np.float64)  # (n, n) layer 5 head 11
    np.testing.assert_allclose(pages["weights"].matrices["weights"], weights, atol=1e-6)
    # independently: softmax of the page's own scaled scores, row by row in float64
    scaled = np.asarray(pages["scaled"].matrices["scaled"], dtype=np.float64)
    by_hand = np.exp(scaled - scaled.max(axis=1, keepdims=True))
    np.testing.assert_allclose(pages["weights"].matrices["weights"], by_hand / by_hand.sum(axis=1, keepdims=True),
                               atol=1e-5)
    # toy-only options are refused in one line, exit 2
    code = main(["main.py", "export", "--steps", "--model", "minilm", "--text", text, "--heads", "2",
                 "--out", str(tmp_path / "x.pdf")])
    assert code == 2
    assert capsys.readouterr().err.strip() == "error: --heads: options of the toy engine, not used by --model minilm"
