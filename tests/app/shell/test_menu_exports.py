"""The File menu's export commands, triggered through their actions as a user triggers them (the
save dialog and the width asked answered here), and each file read back against what that command
promises: the selected head's heatmap, every head in one image, the arrays of the run on screen, the
player's stages frame by frame (the player left on its stage).
A row wired to the neighbouring command ("Export all heads" writing the selected head alone) writes
a file of the right name and suffix that passes any check by count or existence, not these."""
from __future__ import annotations

import numpy as np
import pytest
from PySide6.QtWidgets import QFileDialog, QInputDialog

from tests.shared_helpers import settle

pytestmark = pytest.mark.slow  # a window

WIDTH = 700


def pixels(path) -> np.ndarray:
    from PIL import Image

    with Image.open(path) as image:
        return np.asarray(image.convert("RGB")).copy()


@pytest.fixture
def answered(monkeypatch):
    """The save dialog answers with the path the test puts in ``chosen[0]``; the width asked is WIDTH."""
    chosen = [""]
    monkeypatch.setattr(QFileDialog, "getSaveFileName", lambda *args, **kwargs: (chosen[0], ""))
    monkeypatch.setattr(QInputDialog, "getInt", lambda *args, **kwargs: (WIDTH, True))
    return chosen


def trigger(window, qtbot, command_id: str) -> None:
    action = window.command_actions[command_id]
    assert action.isEnabled(), f"{command_id} is disabled"
    action.trigger()
    settle(window, qtbot)


def test_export_heatmap_and_export_all_heads_write_what_their_rows_name(window, qtbot, answered, tmp_path):
    controller = window.controller
    controller.update_config(text="the cat sat on the mat", heads=4)
    settle(window, qtbot)
    controller.select(head=2, focus=1, stage="weights")
    settle(window, qtbot)

    answered[0] = str(tmp_path / "menu-head.png")
    trigger(window, qtbot, "file.export_heatmap")
    answered[0] = str(tmp_path / "menu-all.png")
    trigger(window, qtbot, "file.export_all")
    assert window.export_heatmap(str(tmp_path / "head2.png"), 2, width=WIDTH)
    assert window.export_heatmap(str(tmp_path / "all.png"), "all", width=WIDTH)
    assert window.export_heatmap(str(tmp_path / "head0.png"), 0, width=WIDTH)

    head, every, head0 = (pixels(tmp_path / name) for name in ("head2.png", "all.png", "head0.png"))
    assert head.shape[1] == every.shape[1] == WIDTH  # the width asked for reached both exports
    # the pictures these rows must not be confused with differ (else the comparisons below prove nothing)
    assert head.shape != every.shape or np.any(head != every)
    assert head.shape != head0.shape or np.any(head != head0)
    menu_head, menu_all = pixels(tmp_path / "menu-head.png"), pixels(tmp_path / "menu-all.png")
    assert menu_head.shape == head.shape and np.array_equal(menu_head, head), "Export heatmap: not the selected head"
    assert menu_all.shape == every.shape and np.array_equal(menu_all, every), "Export all heads: not every head"
    assert controller.head == 2 and controller.stage == "weights"  # an export moves no selection


def test_export_data_and_step_through_write_the_run_on_screen(window, qtbot, answered, tmp_path):
    controller = window.controller
    controller.update_config(text="a b c d e", heads=2)
    settle(window, qtbot)
    answered[0] = str(tmp_path / "menu.npz")
    trigger(window, qtbot, "file.export_data")
    qtbot.waitUntil(lambda: (tmp_path / "menu.npz").is_file(), timeout=30000)
    window.wait_until_idle(30)
    result = controller.snapshot.result
    with np.load(tmp_path / "menu.npz") as data:
        assert data["weights"].shape == result.weights.shape == (2, 5, 5)
        np.testing.assert_array_equal(data["weights"], result.weights)
        np.testing.assert_array_equal(data["scores"], result.scores)

    # Export step-through: a GIF of the player's stages, frame i the player's stage i, the player left
    # where it was
    from app.panels.player_panel import STAGE_KEYS
    from figures.render import image_pixels
    from figures.steps import frame_image, stage_pages

    player = window.navigation.show_player()
    qtbot.waitUntil(lambda: player.shown_result() is not None, timeout=10000)
    player.set_stage(STAGE_KEYS.index("scaled"))
    settle(window, qtbot)
    answered[0] = str(tmp_path / "menu.gif")
    trigger(window, qtbot, "file.export_steps")
    qtbot.waitUntil(lambda: (tmp_path / "menu.gif").is_file(), timeout=60000)
    window.wait_until_idle(30)
    assert player.stage_index == STAGE_KEYS.index("scaled")
    pages = stage_pages(player.shown_result(), head=controller.head, focus=controller.focus,
                        levels=player.stage_levels())
    from PIL import Image

    with Image.open(tmp_path / "menu.gif") as gif:
        assert gif.n_frames == len(STAGE_KEYS) == len(pages)
        for index, page in enumerate(pages):
            gif.seek(index)
            frame = np.asarray(gif.convert("RGB"), dtype=int)
            drawn = image_pixels(frame_image(page, index, len(pages)))[:, :, :3].astype(int)
            assert np.abs(frame - drawn).mean() < 2.0, f"frame {index} is not stage {page.name!r}"
