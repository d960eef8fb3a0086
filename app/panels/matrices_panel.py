"""Matrices: W_Q, W_K, W_V, W_O (d × d) and the selected head's Q, K, V (n × d_k)."""
from __future__ import annotations

from PySide6.QtWidgets import QGridLayout, QWidget

from ..controller import Controller
from ..heatmap import DIVERGING_MAP, HeatmapView, symmetric_levels
from ..text import fill
from .base import Panel

WEIGHT_NAMES = ("w_q", "w_k", "w_v", "w_o")
HEAD_NAMES = ("q", "k", "v")


class MatricesPanel(Panel):
    """Seven heatmaps in a grid, each on its own symmetric scale."""

    def show_snapshot(self, snapshot) -> None:
        self.refresh()

    def show_selection(self) -> None:
        self.refresh(full=False)

    def __init__(self, controller: Controller, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("matricesPanel")
        self.controller = controller
        grid = QGridLayout(self)
        grid.setContentsMargins(2, 2, 2, 2)
        self.views: dict[str, HeatmapView] = {}
        titles = {"w_q": "W_Q", "w_k": "W_K", "w_v": "W_V", "w_o": "W_O"}
        for column, name in enumerate(WEIGHT_NAMES):
            view = HeatmapView(title=titles[name], colorbar=False)
            view.setObjectName(f"{name}Heatmap")
            grid.addWidget(view, 0, column)
            self.views[name] = view
        for column, name in enumerate(HEAD_NAMES):
            view = HeatmapView(title=name.upper(), colorbar=False)
            view.setObjectName(f"{name}Heatmap")
            grid.addWidget(view, 1, column)
            self.views[name] = view
        self._shown_head = None
        self.set_model_connected()

    def refresh(self, full: bool = True) -> None:
        snapshot = self.controller.snapshot
        if snapshot is None:
            return
        result, head = snapshot.result, self.controller.head
        if full:
            for name in WEIGHT_NAMES:
                matrix = getattr(result, name)
                self.views[name].set_matrix(matrix, levels=symmetric_levels(matrix), colormap=DIVERGING_MAP,
                                            show_values=matrix.shape[0] <= 8)
        if full or head != self._shown_head:
            self._shown_head = head
            labels = result.token_texts
            for name in HEAD_NAMES:
                matrix = getattr(result, name)[head]  # (n, d_k)
                view = self.views[name]
                view.plot.setTitle(fill(self.tr("%1 of head %2 (tokens × d_k)"), name.upper(), head))
                view.set_matrix(matrix, labels, None, levels=symmetric_levels(matrix), colormap=DIVERGING_MAP,
                                show_values=matrix.shape[0] <= 8 and matrix.shape[1] <= 8)
