"""Step-through exports: the player's stages as an animated GIF, an MP4 or a PDF handout.

One frame (or page) per stage, drawn from the result offscreen with the specs and captions the
window's player reads (figures/stages.py): the stage's name, its caption and its heatmaps, never the
player's controls. The window exports its player's result, head and focus; the command line its own
run. GIF through Pillow, MP4 through imageio-ffmpeg's bundled ffmpeg (its exit status decides: a
full disk fails the export), PDF through Qt's QPdfWriter with the caption and the numbers of each
stage as text beside the heatmaps' picture. A memory estimate refuses, before anything is computed
or drawn, more tokens than a frame can take. Every file is written atomically (engine/core/safe_io.py).
"""
from __future__ import annotations

import math
import os
import re

from engine import EngineError
from engine.core.safe_io import atomic_write, temporary_beside, write_bytes_atomic

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
    """One stage: its picture (the heatmaps, or the tokens), name, caption lines and the matrices it
    shows (name → array). The picture holds no text the page writes itself: a PDF prints the caption once."""

    def __init__(self, image, name: str, caption: str, matrices: dict) -> None:
        self.image, self.name, self.caption, self.matrices = image, name, caption, matrices


def stage_pages(result, *, head: int = 0, focus: int = 0, trained: bool = False,
                width: int = FRAME_SIZE[0], levels=None) -> list[StagePage]:
    """Every stage of ``result`` (an AttentionResult: the toy engine's, or a pretrained model's layer
    view; ``trained`` for the latter) drawn offscreen: the heatmaps of figures.stages' specs with the
    ``focus`` row outlined, ``head``'s where a stage is per head. The stage and its caption only: no
    control of the window's player is in a frame. ``levels``: the stages' colour levels
    (figures.stages.StageLevels) when they are known already (the window's player computed them in
    its worker), else computed here (O(trace size))."""
    from .render import ensure_application
    from .stages import STAGE_KEYS, StageLevels, caption_lines, stage_names, stage_specs

    check_frame_memory(result.n, result.config.d_model)
    ensure_application()
    head = min(max(int(head), 0), result.weights.shape[0] - 1)
    focus = min(max(int(focus), 0), result.n - 1)
    scale = StageLevels.of(result) if levels is None else levels
    pages = []
    for key, name in zip(STAGE_KEYS, stage_names()):
        caption = "\n".join(line for line in caption_lines(key, result, head, focus, trained) if line)
        if key == "tokens":
            pages.append(StagePage(_tokens_image(result, focus, width), name, caption, {}))
            continue
        specs = stage_specs(key, result, head, scale)
        pages.append(StagePage(_heatmaps_image(specs, focus, width), name, caption,
                               {spec["name"]: spec["matrix"] for spec in specs}))
    return pages


# Drawing a stage holds, per heatmap cell, the matrix's display copy and its RGBA image (three heatmaps
# at most), over a fixed cost of Qt's fonts and pictures. Measured with stage_pages (peak RSS growth,
# whitespace toy engine, d_model 64): 600 tokens +117 MB, 1,600 +123 MB, 2,400 +119 MB, 5,000 +116 MB
# (pyqtgraph draws a large image downsampled), so these bound it from above.
DRAWING_BASE = 160 * 1024**2
DRAWING_BYTES_PER_CELL = 24
DRAWING_BUDGET = 1024**3  # bytes the frames may take to draw (the trace itself has its own 2 GiB budget)
FRAMES_BYTES = 9 * 3 * FRAME_SIZE[0] * FRAME_SIZE[1] * 4  # nine RGBA frames and their copies


def drawing_bytes(n: int, d: int) -> int:
    """Bytes drawing every stage of ``n`` tokens of width ``d`` takes at most: its largest stage (three
    heatmaps of n × max(n, d) cells, or W_O's d × d), the fixed cost and the frames."""
    return (3 * n * max(n, d) + d * d) * DRAWING_BYTES_PER_CELL + DRAWING_BASE + FRAMES_BYTES


def check_frame_memory(n: int, d: int, budget: int | None = None) -> None:
    """Refuse, before anything is computed or drawn, a step-through of ``n`` tokens of width ``d`` whose
    drawing would not fit in ``budget`` (default DRAWING_BUDGET): through the window's player 5,000
    tokens took 2.1 GB and 13 s, and a frame of thousands of rows shows nothing readable."""
    from engine.core.memory import format_bytes

    budget = DRAWING_BUDGET if budget is None else budget
    need = drawing_bytes(n, d)
    if need > budget:
        most = math.isqrt(max(budget - drawing_bytes(0, d), 0) // (3 * DRAWING_BYTES_PER_CELL))
        raise EngineError("the step-through of {n} tokens would take about {need} to draw, over the {budget} "
                          "allowed: shorten the text to at most about {most} tokens",
                          n=n, need=format_bytes(need), budget=format_bytes(budget), most=most)


PICTURE_HEIGHT = 520  # px of a stage's heatmaps at FRAME_SIZE's width: the frame under two caption lines
TOKEN_CHARS = 40  # a longer token is shortened in the tokens strip (the heatmaps' labels: LABEL_CHARS)
CAPTION_CHARS = 400  # a caption line is shortened past this (a focused 10,000-character token would fill the frame)


def printed_caption(caption: str) -> str:
    """``caption`` as a frame or a page prints it: each line at most CAPTION_CHARS characters."""
    return "\n".join(line if len(line) <= CAPTION_CHARS else line[:CAPTION_CHARS - 1] + "…"
                     for line in caption.split("\n"))


def _heatmaps_image(specs: list[dict], focus: int, width: int):
    """One stage's heatmaps side by side, each with its colour bar, as a QImage ``width`` px wide."""
    import pyqtgraph as pg
    import pyqtgraph.exporters as exporters

    from .heatmap import HeatmapPlot
    from .stages import VALUE_COLUMNS
    from .token_axis import ColourBar

    widget = pg.GraphicsLayoutWidget()
    widget.setBackground("w")
    plots = []
    for index, spec in enumerate(specs):
        heat = HeatmapPlot(widget.ci, title=spec["title"], row=0, col=2 * index)
        rows, columns = spec["matrix"].shape
        heat.set_matrix(spec["matrix"], spec["rows"], spec["columns"], levels=spec["levels"],
                        colormap=spec["colormap"],
                        show_values=rows <= 14 and columns <= VALUE_COLUMNS[len(specs)])  # legible cells only
        heat.plot.setLabel("left", spec["axes"][0])
        heat.plot.setLabel("bottom", spec["axes"][1])
        heat.set_highlight(row=focus if spec["highlight"] else None)
        bar = ColourBar(heat.colormap, width=14)
        bar.setLevels(heat.levels)
        widget.ci.addItem(bar, row=0, col=2 * index + 1)
        plots.append(heat)
    widget.resize(int(width), PICTURE_HEIGHT)
    try:
        _show_offscreen(widget, plots)
        exporter = exporters.ImageExporter(widget.ci)
        exporter.parameters()["width"] = int(width)
        return exporter.export(toBytes=True)
    finally:
        widget.close()
        widget.deleteLater()


def _tokens_image(result, focus: int, width: int):
    """The tokens stage: every token as a chip, the focused one in red (as the player's strip)."""
    import html

    from PySide6.QtCore import QCoreApplication, QRectF
    from PySide6.QtGui import QColor, QFont, QImage, QPainter, QTextDocument

    from .stages import MAX_TOKEN_CHIPS
    from .text import fill

    chips = []
    for index, token in enumerate(result.tokens[:MAX_TOKEN_CHIPS]):
        colour, weight = ("#ff2d55", "bold") if index == focus else ("#1f4e79", "normal")
        text = token.text if len(token.text) <= TOKEN_CHARS else token.text[:TOKEN_CHARS - 1] + "…"
        chips.append(f"<span style='color:{colour}; font-weight:{weight}'>[{html.escape(text)}]</span>")
    if result.n > MAX_TOKEN_CHIPS:
        chips.append(html.escape(fill(QCoreApplication.translate("PlayerPanel", "… and %1 more"), result.n - MAX_TOKEN_CHIPS)))
    document = QTextDocument()
    font = QFont()
    font.setPointSizeF(font.pointSizeF() * 1.6)
    document.setDefaultFont(font)
    document.setTextWidth(width - 40)
    document.setHtml("<div align='center'>" + " ".join(chips) + "</div>")
    image = QImage(int(width), PICTURE_HEIGHT, QImage.Format.Format_RGB32)
    image.fill(QColor("white"))
    painter = QPainter(image)
    try:
        top = max(0.0, (PICTURE_HEIGHT - document.size().height()) / 2)
        painter.translate(20, top)
        document.drawContents(painter, QRectF(0, 0, width - 40, PICTURE_HEIGHT - top))
    finally:
        painter.end()
    return image


def _show_offscreen(widget, plots) -> None:
    from PySide6.QtCore import Qt
    from PySide6.QtWidgets import QApplication

    widget.setAttribute(Qt.WidgetAttribute.WA_DontShowOnScreen, True)
    widget.show()
    QApplication.processEvents()
    for heat in plots:
        heat.update_ticks()
    QApplication.processEvents()


def frame_image(page: StagePage, index: int, count: int, size=FRAME_SIZE):
    """A GIF / MP4 frame: the stage's name, its caption (wrapped) and its picture, on white, ``size`` px."""
    from PySide6.QtCore import QRectF, Qt
    from PySide6.QtGui import QColor, QFont, QImage, QPainter

    width, height = size
    image = QImage(width, height, QImage.Format.Format_RGB32)
    image.fill(QColor("white"))
    painter = QPainter(image)
    try:
        margin = 12.0
        heading = QFont()
        heading.setPointSizeF(13)
        heading.setBold(True)
        painter.setFont(heading)
        painter.setPen(QColor("#111"))
        line = painter.fontMetrics().height()
        painter.drawText(QRectF(margin, margin, width - 2 * margin, line), Qt.AlignmentFlag.AlignLeft,
                         f"{index + 1} / {count} · {page.name}")
        y = margin + line * 1.2
        body = QFont(heading)
        body.setBold(False)
        body.setPointSizeF(10.5)
        painter.setFont(body)
        caption = printed_caption(page.caption)
        box = painter.boundingRect(QRectF(margin, y, width - 2 * margin, height), Qt.TextFlag.TextWordWrap |
                                   Qt.TextFlag.TextWrapAnywhere, caption)
        painter.drawText(box, Qt.TextFlag.TextWordWrap | Qt.TextFlag.TextWrapAnywhere, caption)
        y = box.bottom() + line * 0.4
        room = QRectF(0, y, width, max(height - y, 1.0))
        scaled = page.image.size().scaled(room.size().toSize(), Qt.AspectRatioMode.KeepAspectRatio)
        left = (width - scaled.width()) / 2
        painter.drawImage(QRectF(left, y, scaled.width(), scaled.height()), page.image)
    finally:
        painter.end()
    return image


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
    frames = [Image.fromarray(_rgb_array(frame_image(page, index, len(pages)))) for index, page in enumerate(pages)]
    # one adaptive palette per frame; no optimisation, so a frame is never merged with the previous one
    frames = [frame.quantize(colors=256, method=Image.Quantize.MEDIANCUT) for frame in frames]
    with atomic_write(path) as stream:
        frames[0].save(stream, format="GIF", save_all=True, append_images=frames[1:], loop=0,
                       duration=int(seconds * 1000), optimize=False, disposal=1)


def write_mp4(pages: list[StagePage], path, seconds: float = SECONDS_PER_STAGE) -> None:
    """One video frame per stage at 1/seconds frames per second (H.264, yuv420p: plays everywhere).

    imageio-ffmpeg's bundled ffmpeg encodes into a held temporary file beside ``path``; its exit status
    decides: a full disk makes ffmpeg fail, and then nothing is written or replaced (imageio-ffmpeg's own
    writer ignores the status, and a truncated 16 KiB video was reported as written)."""
    import subprocess

    try:
        import imageio_ffmpeg
    except ModuleNotFoundError:
        raise EngineError("an MP4 needs the imageio-ffmpeg package, which this Python lacks (it bundles ffmpeg): "
                          "start the app with ./run, which installs it, or pip install imageio-ffmpeg; or export "
                          ".gif or .pdf") from None
    frames = _even([_rgb_array(frame_image(page, index, len(pages))) for index, page in enumerate(pages)])
    height, width = frames[0].shape[:2]
    with temporary_beside(path) as temporary:
        command = [imageio_ffmpeg.get_ffmpeg_exe(), "-y", "-hide_banner", "-loglevel", "error",
                   "-f", "rawvideo", "-pix_fmt", "rgb24", "-s", f"{width}x{height}", "-r", f"{1.0 / seconds:.6g}",
                   "-i", "-", "-an", "-c:v", "libx264", "-pix_fmt", "yuv420p", "-crf", "23", "-f", "mp4", temporary]
        try:
            ffmpeg = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        except OSError as error:
            raise EngineError("ffmpeg could not start: {reason}", reason=error.strerror or str(error)) from None
        try:
            _, errors = ffmpeg.communicate(b"".join(frame.tobytes() for frame in frames))
        finally:
            if ffmpeg.poll() is None:  # interrupted: no encoder left running
                ffmpeg.kill()
                ffmpeg.wait()
        if ffmpeg.returncode != 0:
            reason = _ffmpeg_reason(errors.decode("utf-8", "replace")) or f"exit status {ffmpeg.returncode}"
            raise EngineError("ffmpeg could not write {path!r}: {reason}", path=os.fspath(path), reason=reason)
        with open(temporary, "rb") as stream:
            data = stream.read()
    write_bytes_atomic(path, data)


def _ffmpeg_reason(log: str) -> str:
    """ffmpeg's last error line without its "[out#0/mp4 @ 0x…]" prefix (e.g. "Error closing file: No
    space left on device"), at most 200 characters."""
    lines = [re.sub(r"^(\[[^\]]*\]\s*)+", "", line).strip() for line in log.splitlines()]
    lines = [line for line in lines if line and not line.startswith("Last message repeated")]
    return lines[-1][:200] if lines else ""


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
            caption = printed_caption(page.caption)
            caption_box = painter.boundingRect(QRectF(area.left(), y, area.width(), area.height()),
                                               Qt.TextFlag.TextWordWrap | Qt.TextFlag.TextWrapAnywhere, caption)
            painter.drawText(caption_box, Qt.TextFlag.TextWordWrap | Qt.TextFlag.TextWrapAnywhere, caption)
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
