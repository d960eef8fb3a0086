"""A chart's legend as a line of text above the chart, never drawn over the data."""
from __future__ import annotations

import html

from PySide6.QtWidgets import QLabel


def legend_label(entries, object_name: str = "") -> QLabel:
    """A QLabel reading "■ name   ■ name …"; ``entries`` are (CSS colour, symbol, name)."""
    label = QLabel(" &nbsp; ".join(f'<span style="color:{colour}">{symbol}</span> {html.escape(name)}'
                                   for colour, symbol, name in entries))
    label.setWordWrap(True)
    if object_name:
        label.setObjectName(object_name)
    return label
