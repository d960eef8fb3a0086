"""Figures for export: one head or every head's matrix as a PNG or SVG, with or without a window.

The same :class:`HeatmapPlot` the window shows, laid out in one GraphicsLayoutWidget with a
shared colour bar, rendered offscreen. PNG via pyqtgraph's ImageExporter at a chosen width;
SVG via SVGExporter with every cell a vector rectangle and the labels as text (for very long
inputs, beyond 128 tokens, a bitmap upscaled nearest-neighbour so viewers do not blur it). Files are written atomically.
"""
from __future__ import annotations

import math
import os
import sys
from pathlib import Path

import numpy as np

from engine import AttentionResult, EngineError
from engine.toy.trace import STAGES



def QT_TRANSLATE_NOOP(context: str, text: str) -> str:  # noqa: N802 - the marker lupdate looks for
    return text


# figure texts: English unless the window installed a translator (context "Figure")
STAGE_TITLES = {"scores": QT_TRANSLATE_NOOP("Figure", "raw scores q·kᵀ"),
                "scaled": QT_TRANSLATE_NOOP("Figure", "scaled scores"),
                "weights": QT_TRANSLATE_NOOP("Figure", "softmax weights")}
FIGURE_TITLE = QT_TRANSLATE_NOOP("Figure", "%1 · d_model %2 · %3 heads · %4 tokens")
WORDS_TITLE = QT_TRANSLATE_NOOP("Figure", "%1 by words · d_model %2 · %3 heads · %4 words from %5 pieces")
HEAD_TITLE = QT_TRANSLATE_NOOP("Figure", "head %1")
QUERY_AXIS = QT_TRANSLATE_NOOP("Figure", "query token")
KEY_AXIS = QT_TRANSLATE_NOOP("Figure", "key token")


def ensure_application():
    """The running QApplication, or a new offscreen one (command line)."""
    from PySide6.QtWidgets import QApplication

    app = QApplication.instance()
    if app is None:
        if "QT_QPA_PLATFORM" not in os.environ:
            os.environ["QT_QPA_PLATFORM"] = "offscreen"
        quiet_offscreen_messages()
        app = QApplication(sys.argv[:1])
        from .fonts import install_cjk_font

        install_cjk_font(app)
    return app


# what the offscreen platform says of every widget drawn for a file: nothing the user can act on
# (eight lines on stderr for one `export --steps`)
OFFSCREEN_NOISE = ("This plugin does not support propagateSizeHints()",)
_quieted = False


def quiet_offscreen_messages() -> None:
    """Drop Qt's OFFSCREEN_NOISE messages; every other message is written to stderr as Qt would."""
    global _quieted
    if _quieted:
        return
    from PySide6.QtCore import qInstallMessageHandler

    def handler(_kind, _context, message: str) -> None:
        if not any(noise in message for noise in OFFSCREEN_NOISE):
            try:
                sys.stderr.write(message + "\n")
            except (AttributeError, OSError, ValueError):  # no stderr: nowhere to say it
                pass

    qInstallMessageHandler(handler)
    _quieted = True


def _heads(result: AttentionResult, head) -> list[int]:
    count = result.weights.shape[0]
    if head in (None, "all"):
        return list(range(count))
    try:
        head = int(head)
    except (TypeError, ValueError):
        raise EngineError("head must be a number from 0 to {last} or 'all'; got {head!r}", last=count - 1, head=head) from None
    if not 0 <= head < count:
        raise EngineError("head {head} does not exist: there are {count} heads (0 … {last})",
                          head=head, count=count, last=count - 1)
    return [head]


LAYOUT_WIDTH = 800  # pixels: a PNG wider than this is this layout scaled up, fonts included
VECTOR_CELLS = 128 * 128  # SVG: up to this many cells per head are vector rectangles, beyond a bitmap


def _by_words(words, stage: str):
    """``words`` = (labels (w,), weights (heads, w, w)) checked: the softmax weights only (a word's scores
    do not add up from its pieces' scores)."""
    if words is None:
        return None
    labels, weights = words
    labels, weights = [str(label) for label in labels], np.asarray(weights)
    if stage != "weights":
        raise EngineError("by words a figure shows the softmax weights (scores do not add up over a word's "
                          "pieces); got the {stage!r} stage", stage=stage)
    if weights.ndim != 3 or weights.shape[1:] != (len(labels), len(labels)):
        raise EngineError("by words: {count} words but weights of shape {shape}", count=len(labels),
                          shape=tuple(weights.shape))
    return labels, weights


def build_figure(result: AttentionResult, head="all", stage: str = "weights", width: int = 1200,
                 upscale: int = 1, label: str = "", vector: bool = False, words=None):
    """A GraphicsLayoutWidget with the chosen heads' matrices and a shared colour bar. ``words``:
    (labels (w,), weights (heads, w, w)), the attention by words drawn instead of the pieces (what the
    window shows with *By words*)."""
    import pyqtgraph as pg

    from .heatmap import DIVERGING_MAP, WEIGHTS_MAP, HeatmapPlot
    from .stages import pair_bounds

    if stage not in STAGES:
        raise EngineError("stage must be one of {stages}; got {stage!r}", stages=', '.join(STAGES), stage=stage)
    heads = _heads(result, head)
    words = _by_words(words, stage)
    ensure_application()
    bounds = pair_bounds(result) if words is None else {"weights": words[1].reshape(len(words[1]), -1).max(axis=1)}
    columns = max(1, math.ceil(math.sqrt(len(heads))))
    rows = math.ceil(len(heads) / columns)
    widget = pg.GraphicsLayoutWidget()
    widget.setBackground("w")
    from PySide6.QtCore import QCoreApplication

    from .text import fill

    def translate(text: str) -> str:
        return QCoreApplication.translate("Figure", text)

    if words is None:
        title = fill(translate(FIGURE_TITLE), translate(STAGE_TITLES[stage]), result.config.d_model,
                     result.weights.shape[0], result.n)
    else:
        title = fill(translate(WORDS_TITLE), translate(STAGE_TITLES[stage]), result.config.d_model,
                     result.weights.shape[0], len(words[0]), result.n)
    title = (f"{label} · " if label else "") + title
    widget.ci.addLabel(title, row=0, col=0, colspan=columns + 1, size="11pt", color="#111")
    if stage == "weights":
        levels = (0.0, max(float(bounds["weights"][heads].max()), 1e-6))
        colormap = WEIGHTS_MAP
    else:
        bound = max(float(bounds[stage][heads].max()), 1e-6)
        levels, colormap = (-bound, bound), DIVERGING_MAP
    labels = result.token_texts if words is None else words[0]
    matrices = getattr(result, stage) if words is None else words[1]  # (heads, n, n) or (heads, w, w)
    plots = []
    for index, h in enumerate(heads):
        heat = HeatmapPlot(widget.ci, title=fill(translate(HEAD_TITLE), h), row=1 + index // columns,
                           col=index % columns)
        heat.set_matrix(matrices[h], labels, labels, levels=levels, colormap=colormap,
                        show_values=None if len(heads) == 1 else False, upscale=upscale)
        if vector:
            heat.use_vector_cells()
        # axis titles on the outer plots only: the left column and the bottom row
        if index % columns == 0:
            heat.plot.setLabel("left", translate(QUERY_AXIS))
        if index // columns == rows - 1 or index + columns >= len(heads):
            heat.plot.setLabel("bottom", translate(KEY_AXIS))
        plots.append(heat)
    bar = pg.ColorBarItem(colorMap=pg.colormap.get(colormap), interactive=False, width=14, values=levels)
    widget.ci.addItem(bar, row=1, col=columns, rowspan=rows)
    cell = width / columns
    height = int(40 + rows * cell * 0.95)
    widget.resize(int(width), height)
    return widget, plots


def _show_offscreen(widget, plots) -> None:
    from PySide6.QtCore import Qt
    from PySide6.QtWidgets import QApplication

    widget.setAttribute(Qt.WidgetAttribute.WA_DontShowOnScreen, True)
    widget.show()
    QApplication.processEvents()
    for heat in plots:
        heat.update_ticks()
    QApplication.processEvents()


def render_image(result: AttentionResult, head="all", stage: str = "weights", width: int = 1200, label: str = "",
                 words=None):
    """The figure as a QImage exactly ``width`` pixels wide."""
    import pyqtgraph.exporters as exporters

    # laid out at most LAYOUT_WIDTH wide and scaled up to ``width``: labels grow with the picture (a
    # 1600-pixel export for slides had ~10-pixel labels)
    widget, plots = build_figure(result, head, stage, min(int(width), LAYOUT_WIDTH), label=label, words=words)
    try:
        _show_offscreen(widget, plots)
        exporter = exporters.ImageExporter(widget.ci)
        exporter.parameters()["width"] = int(width)
        image = exporter.export(toBytes=True)
    finally:
        widget.close()
        widget.deleteLater()
    return image


def figure_bytes(result: AttentionResult, suffix: str, head="all", stage: str = "weights", width: int = 1200,
                 label: str = "", words=None) -> bytes:
    """The figure as the bytes of a .png or .svg file (drawn in memory: no library writes a file)."""
    if suffix == ".png":
        from PySide6.QtCore import QBuffer, QByteArray, QIODevice

        image = render_image(result, head, stage, width, label, words)
        data = QByteArray()
        buffer = QBuffer(data)
        buffer.open(QIODevice.OpenModeFlag.WriteOnly)
        if image.isNull() or not image.save(buffer, "PNG"):
            raise EngineError("could not draw the image ({width} px wide)", width=width)
        buffer.close()
        return bytes(data.data())
    return _svg_bytes(result, head, stage, width, label, words)


def export_figure(result: AttentionResult, path, head="all", stage: str = "weights", width: int = 1200,
                  label: str = "", words=None) -> Path:
    """Write the figure to ``path`` (.png or .svg, any case), atomically; returns the path. ``words``: see
    :func:`build_figure`."""
    from engine.core.safe_io import write_bytes_atomic

    path = Path(path)
    suffix = path.suffix.lower()
    if suffix not in (".png", ".svg"):
        raise EngineError("images are .png or .svg; got {name!r}", name=path.name)
    if not 64 <= int(width) <= 16384:
        raise EngineError("width must be between 64 and 16384 pixels; got {width}", width=width)
    write_bytes_atomic(path, figure_bytes(result, suffix, head, stage, width, label, words))
    return path


def _svg_bytes(result: AttentionResult, head, stage: str, width: int, label: str = "", words=None) -> bytes:
    import pyqtgraph.exporters as exporters

    n = result.n if words is None else len(words[0])
    vector = n * n <= VECTOR_CELLS  # cells as rectangles: sharp at any zoom
    upscale = 1 if vector else max(1, min(16, math.ceil(512 / max(n, 1))))
    widget, plots = build_figure(result, head, stage, width, upscale=upscale, label=label, vector=vector,
                                 words=words)
    try:
        _show_offscreen(widget, plots)
        exporter = exporters.SVGExporter(widget.ci)
        svg = exporter.export(toBytes=True)
    finally:
        widget.close()
        widget.deleteLater()
    return _named_fonts(svg if isinstance(svg, bytes) else bytes(svg))


def _named_fonts(svg: bytes) -> bytes:
    """Name in the SVG the fonts Qt really measured the labels with.

    pyqtgraph writes the application font's alias ("Sans Serif"), which another renderer (rsvg,
    a browser) resolves to a font of its own, often wider: "capital" came out as "capita", its
    last letter under the heatmap. The resolved family, the CJK fallback and
    the generic family keep the text as wide as it was laid out wherever those fonts exist."""
    from PySide6.QtGui import QFontInfo
    from PySide6.QtWidgets import QApplication

    font = QApplication.font()
    families = [QFontInfo(font).family(), *font.families(), "sans-serif"]
    named = []
    for family in families:
        if family and family not in named and family.lower() not in ("sans serif", "sans"):
            named.append(family)
    value = ", ".join(f"'{name}'" if " " in name and name != "sans-serif" else name for name in named)
    value = value.replace("&", "&amp;").replace('"', "&quot;").encode()
    for alias in (b'font-family="&quot;Sans Serif&quot;"', b'font-family="Sans Serif"'):
        svg = svg.replace(alias, b'font-family="' + value + b'"')
    return svg


def image_pixels(image) -> np.ndarray:
    """(height, width, 4) uint8 RGBA copy of a QImage (tests and checks)."""
    from PySide6.QtGui import QImage

    image = image.convertToFormat(QImage.Format.Format_RGBA8888)
    height, width = image.height(), image.width()
    buffer = np.frombuffer(image.constBits(), dtype=np.uint8, count=image.sizeInBytes())
    return buffer.reshape(height, image.bytesPerLine())[:, : width * 4].reshape(height, width, 4).copy()
