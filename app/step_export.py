"""Step-through exports: the player's stages as an animated GIF, an MP4 or a PDF handout.

One frame (or page) per stage of the step-through player, drawn by the player itself (the same
heatmaps, numbers and captions the window shows), so a teacher can take the walk-through into a
lecture. GIF through Pillow, MP4 through imageio-ffmpeg's bundled ffmpeg (optional: the message
says what to install), PDF through Qt's QPdfWriter with the caption and the numbers of each stage
as text. Every file is written atomically (engine/core/safe_io.py).
"""
from __future__ import annotations

import os
import tempfile
import time

from engine import EngineError
from engine.core.safe_io import atomic_write, write_bytes_atomic

STEP_SUFFIXES = (".gif", ".mp4", ".pdf")
FRAME_SIZE = (1200, 620)  # px of one frame: three heatmaps side by side stay legible
SECONDS_PER_STAGE = 2.0
TABLE_CELLS = 14  # the PDF writes a matrix's numbers as text up to this many rows and columns


def step_suffix(path) -> str:
    suffix = os.path.splitext(os.fspath(path))[1].lower()
    if suffix not in STEP_SUFFIXES:
        raise EngineError("step-through export writes .gif, .mp4 or .pdf; got {path!r}", path=os.fspath(path))
    return suffix


# ---------------------------------------------------------------------------- frames
class StagePage:
    """One stage: its picture, name, caption lines and the matrices on screen (name → array)."""

    def __init__(self, image, name: str, caption: str, matrices: dict) -> None:
        self.image, self.name, self.caption, self.matrices = image, name, caption, matrices


def grab_stages(panel) -> list[StagePage]:
    """Every stage of a PlayerPanel that shows a result, in order; the panel's stage is restored."""
    from PySide6.QtWidgets import QApplication

    keep = panel.stage_index
    pages = []
    try:
        for index in range(len(panel.stage_keys)):
            panel.set_stage(index)
            QApplication.processEvents()
            pages.append(StagePage(panel.grab().toImage(), panel.stage_names[index], panel.caption(),
                                   dict(panel.current_matrices())))
    finally:
        panel.set_stage(keep)
    return pages


def stages_of(config, *, head: int = 0, focus: int = 0, size=FRAME_SIZE, timeout: float = 60.0,
              model: str | None = None, layer: int = 0) -> list[StagePage]:
    """The player's stages for ``config``, drawn offscreen (command line): a controller computes it
    in its worker as in the window; the player grabs each stage. ``model``: a pretrained model of
    the registry (its ``layer``, config.text the sentence), as the window's player shows it."""
    from PySide6.QtWidgets import QApplication

    from .controller import Controller
    from .panels.player_panel import PlayerPanel
    from .render import ensure_application

    ensure_application()
    controller = Controller(config)
    panel = PlayerPanel(controller)
    try:
        panel.resize(*size)
        panel.setAttribute(_dont_show(), True)  # drawn for grab(), never on a screen
        panel.show()
        if model is not None:
            controller.set_model(model, layer)  # recomputes when the model differs from the toy engine
        controller.recompute()
        deadline = time.monotonic() + timeout
        while not (controller.is_idle() and controller.snapshot is not None
                   and panel.shown_result() is controller.snapshot.result):
            if controller.last_error:
                raise EngineError("the computation failed: {error}", error=controller.last_error)
            if time.monotonic() > deadline:
                raise EngineError("the computation took longer than {seconds} s", seconds=int(timeout))
            QApplication.processEvents()
            time.sleep(0.01)
        result = controller.snapshot.result
        controller.select(head=min(head, result.weights.shape[0] - 1), focus=min(focus, result.n - 1))
        QApplication.processEvents()
        return grab_stages(panel)
    finally:
        if panel.is_playing():  # its timer would fire into a closed panel
            panel.toggle_play()
        panel.close()
        panel.deleteLater()
        controller.shutdown()


def _dont_show():
    from PySide6.QtCore import Qt

    return Qt.WidgetAttribute.WA_DontShowOnScreen


def _rgb_array(image):
    """QImage → (height, width, 3) uint8 array (a copy)."""
    import numpy as np
    from PySide6.QtGui import QImage

    image = image.convertToFormat(QImage.Format.Format_RGB888)
    width, height, stride = image.width(), image.height(), image.bytesPerLine()
    data = np.frombuffer(image.constBits(), dtype=np.uint8, count=stride * height).reshape(height, stride)
    return data[:, :width * 3].reshape(height, width, 3).copy()


def _even(frames):
    """Crop to even sides (yuv420p video needs them)."""
    return [frame[:frame.shape[0] // 2 * 2, :frame.shape[1] // 2 * 2] for frame in frames]


# ---------------------------------------------------------------------------- writers
def write_gif(pages: list[StagePage], path, seconds: float = SECONDS_PER_STAGE) -> None:
    try:
        from PIL import Image
    except ModuleNotFoundError:
        raise EngineError("a GIF needs the Pillow package (requirements.txt); or export .pdf") from None
    frames = [Image.fromarray(_rgb_array(page.image)) for page in pages]
    # one adaptive palette per frame; no optimisation, so a frame is never merged with the previous one
    frames = [frame.quantize(colors=256, method=Image.Quantize.MEDIANCUT) for frame in frames]
    with atomic_write(path) as stream:
        frames[0].save(stream, format="GIF", save_all=True, append_images=frames[1:], loop=0,
                       duration=int(seconds * 1000), optimize=False, disposal=1)


def write_mp4(pages: list[StagePage], path, seconds: float = SECONDS_PER_STAGE) -> None:
    """One video frame per stage at 1/seconds frames per second (H.264, yuv420p: plays everywhere)."""
    try:
        import imageio_ffmpeg
    except ModuleNotFoundError:
        raise EngineError("an MP4 needs the imageio-ffmpeg package (it bundles ffmpeg; requirements-test.txt); "
                          "or export .gif or .pdf") from None
    frames = _even([_rgb_array(page.image) for page in pages])
    height, width = frames[0].shape[:2]
    folder = os.path.dirname(os.path.abspath(os.fspath(path)))
    handle, temporary = tempfile.mkstemp(suffix=".mp4", dir=folder if os.path.isdir(folder) else None)
    os.close(handle)
    try:
        writer = imageio_ffmpeg.write_frames(temporary, (width, height), fps=1.0 / seconds, codec="libx264",
                                             pix_fmt_out="yuv420p", macro_block_size=2, quality=8,
                                             ffmpeg_log_level="error")
        writer.send(None)
        for frame in frames:
            writer.send(frame.tobytes())
        writer.close()
        with open(temporary, "rb") as stream:
            data = stream.read()
    except (OSError, RuntimeError) as error:
        raise EngineError("ffmpeg could not write {path!r}: {reason}", path=os.fspath(path), reason=str(error)) from None
    finally:
        try:
            os.unlink(temporary)
        except OSError:
            pass
    write_bytes_atomic(path, data)


def _table(name: str, matrix) -> list[str]:
    """A small matrix as lines of text (3 decimals), or nothing when too large to read."""
    rows, columns = matrix.shape
    if rows > TABLE_CELLS or columns > TABLE_CELLS:
        return []
    lines = [f"{name} ({rows} × {columns})"]
    for row in matrix:
        lines.append("  ".join(f"{float(value):8.3f}" if abs(value) != float("inf") else "     -∞ " for value in row))
    return lines


def write_pdf(pages: list[StagePage], path, title: str = "") -> None:
    """A handout: one A4 landscape page per stage with its name, caption, picture and numbers."""
    from PySide6.QtCore import QBuffer, QByteArray, QIODevice, QMarginsF, QRectF, Qt
    from PySide6.QtGui import QFont, QPageLayout, QPageSize, QPainter, QPdfWriter

    from .fonts import cjk_family

    data = QByteArray()
    buffer = QBuffer(data)
    buffer.open(QIODevice.OpenModeFlag.WriteOnly)
    writer = QPdfWriter(buffer)
    writer.setPageLayout(QPageLayout(QPageSize(QPageSize.PageSizeId.A4), QPageLayout.Orientation.Landscape,
                                     QMarginsF(12, 12, 12, 12), QPageLayout.Unit.Millimeter))
    writer.setResolution(150)
    writer.setTitle(title or "Attention Explorer: step-through")
    painter = QPainter(writer)
    family = cjk_family()
    try:
        for index, page in enumerate(pages):
            if index:
                writer.newPage()
            area = QRectF(painter.viewport())  # device pixels inside the margins
            heading = QFont()
            if family:
                heading.setFamilies([heading.family(), family])
            heading.setPointSizeF(16)
            heading.setBold(True)
            painter.setFont(heading)
            y = area.top()
            line = painter.fontMetrics().height()
            painter.drawText(QRectF(area.left(), y, area.width(), line * 1.2), Qt.AlignmentFlag.AlignLeft,
                             f"{index + 1} / {len(pages)} · {page.name}" + (f" · {title}" if title else ""))
            y += line * 1.4
            body = QFont(heading)
            body.setBold(False)
            body.setPointSizeF(10)
            painter.setFont(body)
            caption_box = painter.boundingRect(QRectF(area.left(), y, area.width(), area.height()),
                                               Qt.TextFlag.TextWordWrap, page.caption)
            painter.drawText(caption_box, Qt.TextFlag.TextWordWrap, page.caption)
            y = caption_box.bottom() + line * 0.3
            tables = [lines for name, matrix in page.matrices.items() if (lines := _table(name, matrix))]
            table_height = 0.0
            mono = QFont("DejaVu Sans Mono")
            mono.setStyleHint(QFont.StyleHint.Monospace)
            mono.setPointSizeF(6.5)
            if tables:
                painter.setFont(mono)
                mono_line = painter.fontMetrics().height()
                table_height = mono_line * (max(len(t) for t in tables) + 1)
            image_box = QRectF(area.left(), y, area.width(), max(area.bottom() - y - table_height, line))
            scaled = page.image.size().scaled(image_box.size().toSize(), Qt.AspectRatioMode.KeepAspectRatio)
            painter.drawImage(QRectF(image_box.left(), image_box.top(), scaled.width(), scaled.height()), page.image)
            if tables:
                painter.setFont(mono)
                x = area.left()
                top = image_box.top() + scaled.height() + mono_line * 0.5
                for lines in tables:
                    width = max(painter.fontMetrics().horizontalAdvance(text) for text in lines)
                    for row, text in enumerate(lines):
                        painter.drawText(int(x), int(top + mono_line * (row + 1)), text)
                    x += width + mono_line * 2
    finally:
        painter.end()
        buffer.close()
    write_bytes_atomic(path, bytes(data.data()))


def export_steps(pages: list[StagePage], path, seconds: float = SECONDS_PER_STAGE, title: str = "") -> None:
    suffix = step_suffix(path)
    if not pages:
        raise EngineError("nothing to export: the player shows no result yet")
    if suffix == ".gif":
        write_gif(pages, path, seconds)
    elif suffix == ".mp4":
        write_mp4(pages, path, seconds)
    else:
        write_pdf(pages, path, title)
