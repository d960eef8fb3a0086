"""The step-through GIF decoded frame by frame: frame i is the picture of stage i (each decoded
frame is nearer to its own stage's drawing than to any other stage's), so frames in another order,
a stage drawn twice or one left out fail, where a count of frames and of their differences passes."""
from __future__ import annotations

import numpy as np
import pytest

from app.panels.player_panel import STAGE_KEYS

XIAOMING = 0  # the preset of the hand calculation (app/presets.py)


def rgb(image) -> np.ndarray:
    """A QImage as (height, width, 3) uint8, read here pixel row by pixel row."""
    from PySide6.QtGui import QImage

    image = image.convertToFormat(QImage.Format.Format_RGB888)
    rows = []
    for y in range(image.height()):
        line = bytes(image.constScanLine(y))[:image.width() * 3]
        rows.append(np.frombuffer(line, dtype=np.uint8).reshape(image.width(), 3))
    return np.stack(rows)


def test_each_gif_frame_is_its_own_stages_picture(qapp, tmp_path):
    from PIL import Image

    from app.presets import preset_config
    from engine import compute
    from figures.steps import export_steps, frame_image, stage_pages

    pages = stage_pages(compute(preset_config(XIAOMING)))
    assert len(pages) == len(STAGE_KEYS) and len({page.name for page in pages}) == len(pages)
    drawn = [rgb(frame_image(page, index, len(pages))).astype(np.int16) for index, page in enumerate(pages)]
    path = tmp_path / "steps.gif"
    export_steps(pages, path)
    with Image.open(path) as gif:
        assert gif.n_frames == len(pages)
        decoded = []
        for index in range(gif.n_frames):
            gif.seek(index)
            decoded.append(np.asarray(gif.convert("RGB"), dtype=np.int16))
    for index, frame in enumerate(decoded):
        assert frame.shape == drawn[index].shape
        distances = [float(np.abs(frame - picture).mean()) for picture in drawn]
        nearest = int(np.argmin(distances))
        assert nearest == index, f"frame {index} shows stage {pages[nearest].name!r}, not {pages[index].name!r}"
        assert distances[index] < 2.0, distances[index]  # the palette's rounding only
