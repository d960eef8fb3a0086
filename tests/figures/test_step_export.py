"""Step-through exports: one GIF frame / MP4 frame / PDF page per player stage, each different."""
from __future__ import annotations

import re
import shutil
import subprocess

import numpy as np
import pytest

from tests import ROOT
from app.panels.player_panel import STAGE_KEYS

XIAOMING = 0  # the preset of the hand calculation (app/presets.py)


@pytest.fixture(scope="module")
def pages():
    from app.presets import preset_config
    from engine import compute
    from figures.steps import stage_pages

    return stage_pages(compute(preset_config(XIAOMING)))


def gif_frames(path) -> list[np.ndarray]:
    from PIL import Image

    image = Image.open(path)
    frames = []
    for index in range(image.n_frames):
        image.seek(index)
        frames.append(np.asarray(image.convert("RGB")).copy())
    return frames


def gif_timing(path) -> tuple[list[int], int]:
    """(each frame's duration in ms as the file stores it, the loop count: 0 is for ever)."""
    from PIL import Image

    image = Image.open(path)
    durations = []
    for index in range(image.n_frames):
        image.seek(index)
        durations.append(image.info["duration"])
    return durations, image.info.get("loop")


def test_the_gif_has_one_frame_per_stage_and_every_frame_differs(pages, tmp_path):
    from figures.steps import export_steps

    path = tmp_path / "xiaoming.gif"
    export_steps(pages, path)
    frames = gif_frames(path)
    assert len(frames) == len(STAGE_KEYS) == 9
    # each frame stays SECONDS_PER_STAGE (the GIF stores milliseconds), and the film loops
    assert gif_timing(path) == ([2000] * 9, 0)
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


@pytest.mark.slow
def test_the_mp4_decodes_to_one_frame_per_stage(pages, tmp_path):
    imageio_ffmpeg = pytest.importorskip("imageio_ffmpeg")
    from figures.steps import export_steps

    path = tmp_path / "xiaoming.mp4"
    export_steps(pages, path)
    frames, _seconds = imageio_ffmpeg.count_frames_and_secs(str(path))  # decodes every frame with ffmpeg
    assert frames == len(STAGE_KEYS)
    info = subprocess.run([imageio_ffmpeg.get_ffmpeg_exe(), "-hide_banner", "-i", str(path)],
                          capture_output=True, text=True).stderr
    assert "Video: h264" in info, info


@pytest.mark.slow
def test_the_pdf_has_one_page_per_stage(pages, tmp_path):
    from figures.steps import export_steps

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


@pytest.mark.slow
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


@pytest.mark.slow
def test_the_steps_of_a_real_model_follow_its_player(minilm_model, tmp_path, capsys):
    """The player shows MiniLM's layer (its Q, K, V, scores, weights), so
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
    from figures.steps import stage_pages

    trace = minilm_model.run(text)
    pages = dict(zip(STAGE_KEYS, stage_pages(minilm_model.layer_view(trace, 5), head=11, trained=True)))
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


# ---------------------------------------------------------------------------- the frames: the stage only
def test_a_frame_is_the_stage_its_heatmaps_and_caption_never_the_players_controls(pages, tmp_path):
    """Each GIF frame is figures.steps.frame_image of its stage (its name, caption and heatmaps on white),
    not a grab of the player (◀ ▶, the stage box, "Seconds per stage", Formula were in every frame)."""
    from figures.steps import FRAME_SIZE, PICTURE_HEIGHT, export_steps, frame_image
    from figures.render import image_pixels

    path = tmp_path / "xiaoming.gif"
    export_steps(pages, path)
    frames = gif_frames(path)
    for index, (frame, page) in enumerate(zip(frames, pages)):
        assert frame.shape == (FRAME_SIZE[1], FRAME_SIZE[0], 3)
        drawn = image_pixels(frame_image(page, index, len(pages)))[:, :, :3].astype(int)
        assert np.abs(frame.astype(int) - drawn).mean() < 2.0, f"frame {index} is not the stage's own picture"
        assert page.image.width() == FRAME_SIZE[0] and page.image.height() == PICTURE_HEIGHT
    # the top band (stage name and caption) is white but for dark text: no grey control bar
    weights = frames[STAGE_KEYS.index("weights")]
    band = weights[:80].reshape(-1, 3).astype(int)
    light_grey = (band.min(axis=1) > 200) & (band.max(axis=1) < 250)  # the window's panel colour (≈ 239)
    assert light_grey.mean() < 0.1, light_grey.mean()  # the player's grab: 0.84; antialiased text: ~0.02


@pytest.mark.slow
def test_the_window_exports_the_frames_the_command_line_draws(window, qtbot, tmp_path):
    """File → Export step-through draws the player's result with its head and focus through the same
    figures.steps as the command line: the frames hold no control of the window."""
    from figures.render import image_pixels
    from figures.steps import frame_image, stage_pages

    player = window.show_player()
    qtbot.waitUntil(lambda: player.shown_result() is not None, timeout=10000)
    player.set_stage(STAGE_KEYS.index("weights"))
    before = (player.stage_index, player.caption(), window.controller.stage, window.controller.head,
              window.controller.focus)
    path = tmp_path / "window.gif"
    assert window.exports.export_steps(str(path))
    qtbot.waitUntil(path.exists, timeout=30000)
    # drawing every stage leaves the player where the user left it, with its own caption
    assert (player.stage_index, player.caption(), window.controller.stage, window.controller.head,
            window.controller.focus) == before
    result = player.shown_result()
    expected = stage_pages(result, head=window.controller.head, focus=window.controller.focus)
    frames = gif_frames(path)
    assert len(frames) == len(expected) == len(STAGE_KEYS)
    for index, (frame, page) in enumerate(zip(frames, expected)):
        drawn = image_pixels(frame_image(page, index, len(expected)))[:, :, :3].astype(int)
        assert np.abs(frame.astype(int) - drawn).mean() < 2.0, index


@pytest.mark.slow
@pytest.mark.skipif(not shutil.which("pdfimages") or not shutil.which("pdftotext"), reason="needs poppler-utils")
def test_the_pdf_prints_each_stage_in_order_with_its_caption_once_and_its_tables(pages, tmp_path):
    """The caption is the page's text; the page's picture is the heatmaps alone (it held the player's
    captions a second time, and its controls). Page i is stage i, and its tables are the stage's
    matrices row by row (side by side, as printed), read back by poppler."""
    from figures.steps import export_steps

    path = tmp_path / "xiaoming.pdf"
    export_steps(pages, path, title="小明 喜欢 苹果")
    text = subprocess.run(["pdftotext", str(path), "-"], capture_output=True, text=True, check=True).stdout
    for page in pages:
        assert text.count(page.caption.splitlines()[0][:40]) == 1, page.name
    laid_out = subprocess.run(["pdftotext", "-layout", str(path), "-"], capture_output=True, text=True,
                              check=True).stdout.split("\f")
    assert len(laid_out) - 1 == len(pages)  # a form feed after every page
    for index, (page_text, page) in enumerate(zip(laid_out, pages)):
        lines = page_text.splitlines()
        assert lines[0].startswith(f"{index + 1} / {len(pages)} · {page.name} · "), (index, lines[0])
        assert printed_tables(lines) == expected_tables(page.matrices), page.name
    listing = subprocess.run(["pdfimages", "-list", str(path)], capture_output=True, text=True, check=True).stdout
    sizes = [tuple(int(v) for v in line.split()[3:5]) for line in listing.splitlines()[2:]
             if line.split()[2] == "image"]  # page num type width height …
    assert sizes == [(page.image.width(), page.image.height()) for page in pages]


TABLE_HEADER = re.compile(r"(\w+) \((\d+) × (\d+)\)")
HEADER_LINE = re.compile(r"(?:\w+ \(\d+ × \d+\)\s*)+")  # a line of nothing but table headers
PRINTED_NUMBER = re.compile(r"-?\d+\.\d{3}|-∞")


def printed_tables(lines: list[str]) -> list[list[str]]:
    """The page's table lines from the first header on: [names and shapes], then each line's numbers."""
    start = next((i for i, line in enumerate(lines) if HEADER_LINE.fullmatch(line.strip())), len(lines))
    rows = [[" ".join(match) for match in TABLE_HEADER.findall(lines[start])]] if start < len(lines) else []
    rows += [PRINTED_NUMBER.findall(line) for line in lines[start + 1:]]
    return [row for row in rows if row]


def expected_tables(matrices: dict) -> list[list[str]]:
    """The same from the matrices, written here: the tables side by side, row i of each on line i."""
    if not matrices:
        return []
    rows = [[f"{name} {m.shape[0]} {m.shape[1]}" for name, m in matrices.items()]]
    for i in range(max(m.shape[0] for m in matrices.values())):
        rows.append([f"{float(value):.3f}" for m in matrices.values() if i < m.shape[0] for value in m[i]])
    return rows


# ---------------------------------------------------------------------------- hostile input
def run_cli(*args, cwd=None):
    import os
    import sys

    root = ROOT
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen"}
    return subprocess.run([sys.executable, str(root / "main.py"), *map(str, args)], capture_output=True,
                          text=True, cwd=cwd or root, env=env, timeout=300)


@pytest.mark.slow
def test_steps_print_nothing_but_their_line(tmp_path):
    """Qt's offscreen "This plugin does not support propagateSizeHints()" came eight times on stderr."""
    out = tmp_path / "steps.gif"
    done = run_cli("export", "--steps", "--text", "小明 喜欢 苹果", "--tokenizer", "whitespace", "--out", out)
    assert (done.returncode, done.stderr) == (0, "")
    assert done.stdout == f"wrote {out}: 9 stages\n"


# the process's peak memory in KiB: VmHWM starts again at exec (ru_maxrss keeps the parent's, pytest's)
PEAK = """
def peak_kib():
    with open("/proc/self/status") as status:
        return int(next(line for line in status if line.startswith("VmHWM:")).split()[1])
"""


@pytest.mark.slow
@pytest.mark.skipif(not __import__("os").path.exists("/proc/self/status"), reason="reads Linux's /proc")
def test_too_many_tokens_to_draw_are_refused_before_drawing(tmp_path):
    """5,000 tokens took 2.1 GB and 13 s through the player: refused by the estimate before the trace is
    computed, in one line, exit 2, nothing written, in a small fraction of that memory."""
    from figures.steps import DRAWING_BUDGET, drawing_bytes

    text = "字" * 10000  # jieba: 5,000 two-character tokens
    out = tmp_path / "long.gif"
    code = f"""
import sys
from cli.commands import main
code = main(["main.py", "export", "--steps", "--text", {text!r}, "--out", {str(out)!r}])
print(peak_kib(), file=sys.stderr)
sys.exit(code)"""
    import sys

    done = subprocess.run([sys.executable, "-c", PEAK + code], capture_output=True, text=True, timeout=300,
                          cwd=str(ROOT))
    *lines, peak = done.stderr.strip().splitlines()
    assert done.returncode == 2, done.stderr
    assert len(lines) == 1 and lines[0].startswith("error: the step-through of 5000 tokens would take about "), lines
    most = int(lines[0].rsplit("at most about ", 1)[1].split()[0])
    assert drawing_bytes(most, 64) <= DRAWING_BUDGET < drawing_bytes(most + 1, 64)  # the advice fits
    assert list(tmp_path.iterdir()) == []
    assert int(peak) * 1024 < 400 * 1024**2  # kB: refused before the trace (5,000² × 4 heads: 1.3 GB)


@pytest.mark.slow
@pytest.mark.skipif(not __import__("os").path.exists("/proc/self/status"), reason="reads Linux's /proc")
def test_the_drawing_estimate_bounds_what_drawing_takes(tmp_path):
    """The estimate is measured: drawing 1,600 tokens' stages takes less than it says."""
    import sys

    from figures.steps import drawing_bytes

    code = """
from engine import AttentionConfig, compute
from figures.render import ensure_application
from figures.steps import stage_pages
ensure_application()
result = compute(AttentionConfig(text=" ".join(f"w{i}" for i in range(1600)), tokenizer="whitespace"))
before = peak_kib()
stage_pages(result)
print(before, peak_kib())"""
    done = subprocess.run([sys.executable, "-c", PEAK + code], capture_output=True, text=True, timeout=300,
                          cwd=str(ROOT))
    assert done.returncode == 0, done.stderr
    before, after = map(int, done.stdout.split())
    assert (after - before) * 1024 < drawing_bytes(1600, 64), (after - before) / 1024


FAKE_FFMPEG = """#!/bin/sh
# a disk that fills up after 16 KiB: the encoder writes part of the file and fails as ffmpeg does
for last; do :; done
cat > /dev/null
head -c 16384 /dev/zero > "$last"
echo "[out#0/mp4 @ 0x55b6] Error writing trailer: No space left on device" >&2
exit 228
"""


def test_a_full_disk_fails_the_mp4_and_keeps_the_old_file(tmp_path, monkeypatch, capsys):
    """ffmpeg's "No space left on device" was ignored: `wrote x.mp4: 9 stages`, exit 0, a truncated 16 KiB
    file in place of a good one. Now: one line, exit 2, the old file as it was, no temporary left."""
    imageio_ffmpeg = pytest.importorskip("imageio_ffmpeg")
    from cli.commands import main

    fake = tmp_path / "bin" / "ffmpeg"
    fake.parent.mkdir()
    fake.write_text(FAKE_FFMPEG)
    fake.chmod(0o755)
    monkeypatch.setattr(imageio_ffmpeg, "get_ffmpeg_exe", lambda: str(fake))
    folder = tmp_path / "out"
    folder.mkdir()
    (folder / "x.mp4").write_bytes(b"a good video")
    code = main(["main.py", "export", "--steps", "--text", "小明 喜欢 苹果", "--tokenizer", "whitespace",
                 "--out", str(folder / "x.mp4")])
    captured = capsys.readouterr()
    assert code == 2 and captured.out == ""
    assert captured.err == (f"error: ffmpeg could not write '{folder / 'x.mp4'}': Error writing trailer: "
                            f"No space left on device\n")
    assert sorted(p.name for p in folder.iterdir()) == ["x.mp4"]
    assert (folder / "x.mp4").read_bytes() == b"a good video"


@pytest.mark.slow
@pytest.mark.skipif(not hasattr(__import__("os"), "geteuid") or __import__("os").geteuid() != 0,
                    reason="mounting a small file system needs root")
def test_a_really_full_disk_fails_the_mp4(tmp_path):
    """The same on a real 200 KiB tmpfs (root only; skipped where mounting is not allowed)."""
    pytest.importorskip("imageio_ffmpeg")
    disk = tmp_path / "disk"
    disk.mkdir()
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=200k", "tmpfs", str(disk)],
                      capture_output=True).returncode != 0:
        pytest.skip("mount is not allowed here")
    try:
        (disk / "x.mp4").write_bytes(b"a good video")
        done = run_cli("export", "--steps", "--text", "小明 喜欢 苹果", "--tokenizer", "whitespace",
                       "--out", disk / "x.mp4")
        assert done.returncode == 2 and done.stdout == ""
        assert done.stderr.startswith(f"error: ffmpeg could not write '{disk / 'x.mp4'}': ")
        assert "No space left on device" in done.stderr and done.stderr.count("\n") == 1
        assert sorted(p.name for p in disk.iterdir()) == ["x.mp4"]
        assert (disk / "x.mp4").read_bytes() == b"a good video"
    finally:
        subprocess.run(["umount", str(disk)], capture_output=True)


def test_run_installs_what_the_export_menus_need():
    """./run installs requirements.txt: it holds the packages the window's File → Export step-through
    writes GIF and MP4 with (the MP4 failed after ./run: imageio-ffmpeg was only a test requirement)."""

    root = ROOT
    names = {re.split(r"[<>=~!\s\[]", line.strip(), maxsplit=1)[0].lower()
             for line in (root / "requirements.txt").read_text(encoding="utf-8").splitlines()
             if line.strip() and not line.lstrip().startswith(("#", "-"))}
    assert {"pillow", "imageio-ffmpeg"} <= names
    assert "imageio-ffmpeg" not in (root / "requirements-test.txt").read_text(encoding="utf-8")


def test_a_missing_ffmpeg_package_names_run_not_a_test_file(pages, tmp_path, monkeypatch):
    import sys

    from engine import EngineError
    from figures.steps import export_steps

    monkeypatch.setitem(sys.modules, "imageio_ffmpeg", None)  # import now raises ModuleNotFoundError
    with pytest.raises(EngineError) as caught:
        export_steps(pages, tmp_path / "x.mp4")
    message = str(caught.value)
    assert "./run" in message and "pip install imageio-ffmpeg" in message and "requirements-test" not in message
    assert list(tmp_path.iterdir()) == []


def test_a_focused_long_token_leaves_the_frame_its_heatmaps():
    """A 10,000-character token in focus: its caption is shortened, the heatmaps keep most of the frame."""
    from engine import AttentionConfig, compute
    from figures.render import image_pixels
    from figures.steps import CAPTION_CHARS, frame_image, stage_pages

    word = "a" * 10000
    result = compute(AttentionConfig(text=f"x {word} y", tokenizer="whitespace", d_model=8, heads=2))
    pages = stage_pages(result, focus=1)
    weights = pages[STAGE_KEYS.index("weights")]
    assert word in weights.caption  # the player's caption, whole
    frame = image_pixels(frame_image(weights, 5, len(pages)))[:, :, :3]
    rows_with_cells = (frame.min(axis=2) < 200).mean(axis=1) > 0.3  # rows crossing the heatmap
    assert rows_with_cells.sum() > 0.5 * frame.shape[0]
    assert all(len(line) <= CAPTION_CHARS for line in __import__("figures.steps").steps.printed_caption(
        weights.caption).splitlines())
