"""Pictures of activation-patching grids (``./run patch --out x.png|svg``), drawn with QPainter.

One panel per grid (resid_pre, attn_out, mlp_out: layers × tokens; head_z: layers × heads),
cells as rectangles (sharp in SVG at any zoom), colour from white (the corrupted run's measure)
to dark red (the clean run's), cells never run (cancelled) hatched grey. Layer 0 at the top.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from engine.core.errors import EngineError

CELL = 22  # pixels per cell at the natural size
MARGIN_LEFT, MARGIN_TOP, GAP = 56, 40, 40


def restored(value: np.ndarray, corrupt: float, clean: float) -> np.ndarray:
    """How much of the clean measure a cell brought back: (value − corrupt) / (clean − corrupt),
    clipped to [0, 1] for colour (NaN stays NaN)."""
    span = clean - corrupt
    if not np.isfinite(span) or abs(span) < 1e-12:
        return np.zeros_like(value)
    return np.clip((value - corrupt) / span, 0.0, 1.0)


def _color(fraction: float):
    from PySide6.QtGui import QColor

    if not np.isfinite(fraction):
        return None
    return QColor(255, int(255 * (1 - fraction * 0.85)), int(255 * (1 - fraction)))  # white → red


def _draw(painter, arrays: dict, width: int, height: int) -> None:
    from PySide6.QtCore import QRectF, Qt
    from PySide6.QtGui import QBrush, QColor, QFont, QPen

    painter.fillRect(0, 0, width, height, QColor("white"))
    font = QFont()
    font.setPointSize(8)
    painter.setFont(font)
    tokens = [str(t) for t in arrays["tokens"]]
    clean, corrupt = float(arrays["clean_p"]), float(arrays["corrupt_p"])
    x = MARGIN_LEFT
    measure = str(arrays["measure"])
    title = f"{measure}: clean {clean:.4g}, corrupted {corrupt:.4g}"
    if not bool(arrays.get("complete", True)):
        title += " — PARTIAL (cancelled)"
    painter.setPen(QPen(QColor("black")))
    painter.drawText(QRectF(8, 4, width - 16, 18), Qt.AlignLeft, title)
    for name in ("resid_pre", "attn_out", "mlp_out", "head_z"):
        if name not in arrays:
            continue
        grid = np.asarray(arrays[name], dtype=np.float64)
        layers, columns = grid.shape
        fractions = restored(grid, corrupt, clean)
        painter.setPen(QPen(QColor("black")))
        painter.drawText(QRectF(x, MARGIN_TOP - 18, columns * CELL, 16), Qt.AlignLeft, name)
        for l in range(layers):
            for c in range(columns):
                rect = QRectF(x + c * CELL, MARGIN_TOP + l * CELL, CELL, CELL)
                color = _color(fractions[l, c])
                if color is None:
                    painter.fillRect(rect, QBrush(QColor(200, 200, 200), Qt.BDiagPattern))
                else:
                    painter.fillRect(rect, color)
            if x == MARGIN_LEFT:
                painter.drawText(QRectF(4, MARGIN_TOP + l * CELL, MARGIN_LEFT - 8, CELL),
                                 Qt.AlignRight | Qt.AlignVCenter, f"L{l}")
        labels = tokens if name != "head_z" else [f"H{h}" for h in range(columns)]
        painter.save()
        for c, label in enumerate(labels):
            painter.save()
            painter.translate(x + c * CELL + CELL / 2 + 4, MARGIN_TOP + layers * CELL + 4)
            painter.rotate(90)
            painter.drawText(QRectF(0, 0, 120, CELL), Qt.AlignLeft | Qt.AlignVCenter, label[:16])
            painter.restore()
        painter.restore()
        x += columns * CELL + GAP


def size_of(arrays: dict) -> tuple[int, int]:
    widths = [np.shape(arrays[name])[1] for name in ("resid_pre", "attn_out", "mlp_out", "head_z") if name in arrays]
    layers = max(np.shape(arrays[name])[0] for name in ("resid_pre", "attn_out", "mlp_out", "head_z") if name in arrays)
    width = MARGIN_LEFT + sum(w * CELL + GAP for w in widths)
    height = MARGIN_TOP + layers * CELL + 130
    return width, height


def export_patch_figure(arrays: dict, path) -> Path:
    """Write the grids of ``arrays`` (engine.analysis.patching.PatchResult.arrays()) as .png or .svg."""
    from PySide6.QtCore import QBuffer, QByteArray, QIODevice, QRect, QSize
    from PySide6.QtGui import QImage, QPainter

    from engine.core.safe_io import write_bytes_atomic

    from .render import ensure_application

    ensure_application()
    path = Path(path)
    suffix = path.suffix.lower()
    width, height = size_of(arrays)
    if suffix == ".png":
        image = QImage(width, height, QImage.Format_ARGB32)
        painter = QPainter(image)
        _draw(painter, arrays, width, height)
        painter.end()
        data = QByteArray()
        buffer = QBuffer(data)
        buffer.open(QIODevice.WriteOnly)
        image.save(buffer, "PNG")
        payload = bytes(data.data())
    elif suffix == ".svg":
        from PySide6.QtSvg import QSvgGenerator

        data = QByteArray()
        buffer = QBuffer(data)
        buffer.open(QIODevice.WriteOnly)
        generator = QSvgGenerator()
        generator.setOutputDevice(buffer)
        generator.setSize(QSize(width, height))
        generator.setViewBox(QRect(0, 0, width, height))
        painter = QPainter(generator)
        _draw(painter, arrays, width, height)
        painter.end()
        payload = bytes(data.data())
    else:
        raise EngineError("images are .png or .svg; got {name!r}", name=path.name)
    write_bytes_atomic(path, payload)
    return path
