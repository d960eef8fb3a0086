"""Corpus: what each head does over a corpus of texts, from a job's folder (``./run corpus``).

The panel opens a finished job's folder (engine/corpus/outputs.py's files, read in a worker lane)
and shows the per-head table (means over the corpus, sortable, each cell's tooltip its spread)
and the head clusters: every head a point of the 2-D MDS of the heads' Jensen–Shannon distances
(Clark et al. 2019), coloured by layer or by a measure. A click on a point or a double-click on a
row opens that head in the window: the job's model, its switched-off heads and the corpus
sentence where the head is most typical. The joint query–key map (AttentionViz, Yeh et al. 2023;
engine/corpus/qk_map.py) shows the head chosen in the table: its queries and keys over the
corpus's first texts in one plane, by PCA or by t-SNE (both computed by the job), a point's tooltip
its token and sentence.
"""
from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QT_TRANSLATE_NOOP, QAbstractTableModel, QCoreApplication, QModelIndex, \
    QSignalBlocker, Qt, QTimer
from PySide6.QtWidgets import (QComboBox, QDockWidget, QFileDialog, QHBoxLayout, QLabel,
                               QPushButton, QSplitter, QTabWidget, QVBoxLayout, QWidget)

from engine.corpus.measures import CORPUS_MEASURES
from engine.corpus.outputs import read_results
from engine.models import model_info

from ..controller import Controller
from ..i18n import error_text
from ..text import fill
from .base import Panel
from .sorted_table import sorted_table

TITLES = {
    "head": QT_TRANSLATE_NOOP("CorpusPanel", "head"),
    "count": QT_TRANSLATE_NOOP("CorpusPanel", "texts"),
    "entropy": QT_TRANSLATE_NOOP("CorpusPanel", "entropy (bits)"),
    "first": QT_TRANSLATE_NOOP("CorpusPanel", "on first token"),
    "special": QT_TRANSLATE_NOOP("CorpusPanel", "on special tokens"),
    "previous": QT_TRANSLATE_NOOP("CorpusPanel", "on previous token"),
    "self": QT_TRANSLATE_NOOP("CorpusPanel", "on itself"),
    "punctuation": QT_TRANSLATE_NOOP("CorpusPanel", "on punctuation"),
    "layer": QT_TRANSLATE_NOOP("CorpusPanel", "layer"),
}
COLUMNS = ("head", "count") + CORPUS_MEASURES
COLOURS = pg.colormap.get("viridis")
QUERY_BRUSH, KEY_BRUSH = pg.mkBrush(31, 119, 180, 170), pg.mkBrush(255, 127, 14, 170)  # AttentionViz: blue, orange


def title(name: str) -> str:
    return QCoreApplication.translate("CorpusPanel", TITLES[name])


class CorpusTableModel(QAbstractTableModel):
    """One row a head: layer.head, the text count and each measure's mean (sorted by UserRole)."""

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.arrays: dict | None = None

    def set_arrays(self, arrays: dict | None) -> None:
        self.beginResetModel()
        self.arrays = arrays
        self.endResetModel()

    def rowCount(self, parent=QModelIndex()) -> int:  # noqa: N802 - Qt name
        return 0 if self.arrays is None or parent.isValid() else len(self.arrays["layer"])

    def columnCount(self, parent=QModelIndex()) -> int:  # noqa: N802 - Qt name
        return len(COLUMNS)

    def data(self, index, role=Qt.ItemDataRole.DisplayRole):
        if not index.isValid() or self.arrays is None:
            return None
        row, column = index.row(), COLUMNS[index.column()]
        layer, head = int(self.arrays["layer"][row]), int(self.arrays["head"][row])
        if column == "head":
            value, shown = float(layer * 10_000 + head), f"{layer}.{head}"
        elif column == "count":
            value = float(self.arrays["count"][row])
            shown = f"{int(value):,}"
        else:
            value = float(self.arrays[column][row])
            shown = f"{value:.3f}"
        if role == Qt.ItemDataRole.DisplayRole:
            return shown
        if role == Qt.ItemDataRole.UserRole:
            return value
        if role == Qt.ItemDataRole.ToolTipRole and column in CORPUS_MEASURES:
            return fill(QCoreApplication.translate("CorpusPanel", "mean %1, standard deviation %2 over %3 texts"),
                        f"{value:.4f}", f"{float(self.arrays[column + '_std'][row]):.4f}",
                        f"{int(self.arrays['count'][row]):,}")
        if role == Qt.ItemDataRole.TextAlignmentRole:
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        return None

    def headerData(self, section, orientation, role=Qt.ItemDataRole.DisplayRole):  # noqa: N802 - Qt name
        if role == Qt.ItemDataRole.DisplayRole and orientation == Qt.Orientation.Horizontal:
            return title(COLUMNS[section])
        return None


class CorpusPanel(Panel):
    """A corpus job's head table and head clusters; a head opens on its most typical sentence."""

    def __init__(self, controller: Controller, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("corpusPanel")
        self.controller = controller
        self.arrays: dict | None = None
        self.folder = ""
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        top = QHBoxLayout()
        self.open_button = QPushButton(self.tr("Open job folder…"))
        self.open_button.setObjectName("corpusOpen")
        self.open_button.setToolTip(self.tr("A folder written by ./run corpus --out FOLDER"))
        self.open_button.clicked.connect(self._on_open_clicked)
        top.addWidget(self.open_button)
        self.caption = QLabel(self.tr("No corpus job open. Run one with ./run corpus --model MODEL --texts FILE "
                                      "--out FOLDER, then open its folder."))
        self.caption.setObjectName("corpusCaption")
        self.caption.setWordWrap(True)
        self.caption.setTextFormat(Qt.TextFormat.PlainText)  # holds file names and sentences
        top.addWidget(self.caption, 1)
        layout.addLayout(top)
        split = QSplitter(Qt.Orientation.Horizontal)
        self.table_model = CorpusTableModel(self)
        self.proxy, self.view = sorted_table(self.table_model, "corpusTable", self)
        self.view.doubleClicked.connect(self._on_row_double_clicked)
        self.view.selectionModel().currentRowChanged.connect(self._on_row_changed)
        split.addWidget(self.view)
        right = QWidget()
        right_layout = QVBoxLayout(right)
        right_layout.setContentsMargins(0, 0, 0, 0)
        colour_row = QHBoxLayout()
        colour_row.addWidget(QLabel(self.tr("Colour by")))
        self.colour_by = QComboBox()
        self.colour_by.setObjectName("corpusColour")
        for name in ("layer",) + CORPUS_MEASURES:
            self.colour_by.addItem(title(name), name)
        self.colour_by.currentIndexChanged.connect(lambda _: self._plot())
        colour_row.addWidget(self.colour_by, 1)
        self.colour_key = QLabel()  # what the two ends of the colours stand for (the map has no axis for them)
        self.colour_key.setObjectName("corpusColourKey")
        self.colour_key.setTextFormat(Qt.TextFormat.RichText)
        colour_row.addWidget(self.colour_key)
        right_layout.addLayout(colour_row)
        self.plot = pg.PlotWidget(background="w")
        self.plot.setObjectName("corpusClusters")
        self.plot.setMenuEnabled(False)
        self.plot.setMinimumHeight(160)
        self.plot.setLabel("bottom", self.tr("MDS axis 1 (Jensen–Shannon distance)"))
        self.plot.setLabel("left", self.tr("MDS axis 2"))
        for axis in ("left", "bottom"):
            self.plot.getAxis(axis).enableAutoSIPrefix(False)  # distances stay as they are, not "×0.001"
        self.plot.setAspectLocked(True)  # MDS: a distance reads the same along both axes
        self.scatter = pg.ScatterPlotItem(size=10, pen=pg.mkPen("#ffffff", width=0.5), hoverable=True,
                                          tip=lambda x, y, data: f"{data[0]}.{data[1]}")
        self.scatter.sigClicked.connect(self._on_point_clicked)
        self.plot.addItem(self.scatter)
        self.selected_point = pg.ScatterPlotItem(size=16, pen=pg.mkPen("#ff2d55", width=2), brush=pg.mkBrush(None))
        self.plot.addItem(self.selected_point)
        right_layout.addWidget(self.plot, 1)
        self.tabs = QTabWidget()
        self.tabs.setObjectName("corpusTabs")
        self.tabs.addTab(right, self.tr("Head clusters"))
        self.tabs.addTab(self._build_qk_tab(), self.tr("Query–key map"))
        split.addWidget(self.tabs)
        split.setStretchFactor(0, 3)
        split.setStretchFactor(1, 2)
        layout.addWidget(split, 1)
        self._reading = self.lane("corpus")
        self._reading.done.connect(self._on_read)
        self._reading.failed.connect(self._on_read_failed)
        self.set_model_connected()

    def _build_qk_tab(self) -> QWidget:
        tab = QWidget()
        layout = QVBoxLayout(tab)
        layout.setContentsMargins(0, 0, 0, 0)
        row = QHBoxLayout()
        row.addWidget(QLabel(self.tr("Head")))
        self.qk_head = QComboBox()
        self.qk_head.setObjectName("corpusQkHead")
        self.qk_head.currentIndexChanged.connect(lambda _: self._plot_qk())
        row.addWidget(self.qk_head, 1)
        self.qk_method = QComboBox()
        self.qk_method.setObjectName("corpusQkMethod")
        self.qk_method.addItem(self.tr("PCA"), "points")
        self.qk_method.addItem(self.tr("t-SNE"), "tsne")
        self.qk_method.setToolTip(self.tr("PCA keeps distances along its two axes; t-SNE keeps each point's near "
                                          "neighbours (computed by the job, over the first 150 tokens)"))
        self.qk_method.currentIndexChanged.connect(lambda _: self._plot_qk())
        row.addWidget(self.qk_method)
        layout.addLayout(row)
        self.qk_caption = QLabel()
        self.qk_caption.setObjectName("corpusQkCaption")
        self.qk_caption.setWordWrap(True)
        layout.addWidget(self.qk_caption)
        self.qk_plot = pg.PlotWidget(background="w")
        self.qk_plot.setObjectName("corpusQkMap")
        self.qk_plot.setMenuEnabled(False)
        self.qk_plot.setMinimumHeight(160)
        self.qk_plot.setAspectLocked(True)
        self.qk_plot.addLegend(offset=(8, 8))
        self.qk_queries = pg.ScatterPlotItem(size=6, pen=None, brush=QUERY_BRUSH, name=self.tr("queries"),
                                             hoverable=True, tip=self._token_tip)
        self.qk_keys = pg.ScatterPlotItem(size=6, pen=None, brush=KEY_BRUSH, name=self.tr("keys"),
                                          hoverable=True, tip=self._token_tip)
        self.qk_plot.addItem(self.qk_queries)
        self.qk_plot.addItem(self.qk_keys)
        layout.addWidget(self.qk_plot, 1)
        return tab

    # ------------------------------------------------------------------ opening a job
    def _on_open_clicked(self) -> None:
        folder = QFileDialog.getExistingDirectory(self, self.tr("Open a corpus job's folder"), self.folder)
        if folder:
            self.open_folder(folder)

    def open_folder(self, folder: str) -> None:
        """Read the job in ``folder`` in the worker; the panel shows it when it arrives."""
        self.folder = folder
        self.caption.setText(fill(self.tr("Reading %1 …"), folder))
        self._reading.submit(read_results, folder)

    def _on_read(self, arrays: dict) -> None:
        self.arrays = arrays
        self.table_model.set_arrays(arrays)
        layers, heads = int(arrays["layer"].max()) + 1, int(arrays["head"].max()) + 1
        try:
            name = QCoreApplication.translate("Model", model_info(str(arrays["model"])).title)
        except Exception:  # noqa: BLE001 - a gguf:/hf: path that has gone: its name still says what it was
            name = str(arrays["model"])
        text = fill(self.tr("%1: %2 texts, %3 layers × %4 heads"), name, f"{int(arrays['texts']):,}", layers, heads)
        if int(arrays["skipped"]):
            text += fill(self.tr(" (%1 long texts skipped)"), f"{int(arrays['skipped']):,}")
        if len(arrays["ablated_heads"]):
            text += fill(self.tr("; heads switched off: %1"),
                         ", ".join(f"{int(l)}.{int(h)}" for l, h in arrays["ablated_heads"]))
        self.caption.setText(text + self.tr(". Click a head to open it on its most typical sentence."))
        self._plot()
        with QSignalBlocker(self.qk_head):
            self.qk_head.clear()
            if "qk_points" in arrays:
                for layer, head in zip(arrays["layer"], arrays["head"]):
                    self.qk_head.addItem(f"{int(layer)}.{int(head)}")
        self._plot_qk()

    def _on_read_failed(self, error: BaseException) -> None:
        self.arrays = None
        self.table_model.set_arrays(None)
        self.scatter.setData([])
        self.selected_point.setData([])
        self.qk_head.clear()
        self._plot_qk()
        self.caption.setText(error_text(error))

    # ------------------------------------------------------------------ the clusters
    def colours(self) -> list:
        """One QColor a head: its layer's, or its value of the chosen measure, on viridis."""
        name = self.colour_by.currentData()
        values = np.asarray(self.arrays[name], dtype=np.float64)
        span = values.max() - values.min()
        scaled = (values - values.min()) / span if span > 0 else np.zeros_like(values)
        return COLOURS.map(scaled, mode="qcolor")

    def _plot(self) -> None:
        if self.arrays is None:
            return
        embedding = self.arrays["embedding"]  # (K, 2)
        spots = [{"pos": (float(x), float(y)), "data": (int(layer), int(head)), "brush": pg.mkBrush(colour)}
                 for (x, y), layer, head, colour in zip(embedding, self.arrays["layer"], self.arrays["head"],
                                                        self.colours())]
        self.scatter.setData(spots)
        self.colour_key.setText(self.colour_key_text())
        self.show_selection()

    def colour_key_text(self) -> str:
        """The lowest and the highest value of the colouring, each beside its colour: "● 0.003 → ● 0.985"."""
        name = self.colour_by.currentData()
        values = np.asarray(self.arrays[name], dtype=np.float64)
        low, high = COLOURS.map(np.array([0.0, 1.0]), mode="qcolor")

        def said(value: float) -> str:
            return fill(self.tr("layer %1"), int(value)) if name == "layer" else f"{value:.3f}"

        if values.max() == values.min():  # every head the same: one colour (colours() maps them all to the low end)
            return f'<span style="color:{low.name()}">●</span> {said(values.min())}'
        return (f'<span style="color:{low.name()}">●</span> {said(values.min())} → '
                f'<span style="color:{high.name()}">●</span> {said(values.max())}')

    def points(self) -> np.ndarray:
        """(K, 2) positions of the scatter's points (tests)."""
        x, y = self.scatter.getData()
        return np.column_stack([x, y])

    def _on_point_clicked(self, _item, points, *_) -> None:
        if len(points):
            self.open_head(*points[0].data())

    def _on_row_double_clicked(self, index) -> None:
        row = self.proxy.mapToSource(index).row()
        self.open_head(int(self.arrays["layer"][row]), int(self.arrays["head"][row]))

    # ------------------------------------------------------------------ the joint query-key map
    def _on_row_changed(self, current, _previous) -> None:
        if current.isValid() and self.qk_head.count():
            self.qk_head.setCurrentIndex(self.proxy.mapToSource(current).row())

    def _plot_qk(self) -> None:
        """The chosen head's N queries and N keys (qk_points[row]: (2N, 2), queries first), or by t-SNE
        its first M (qk_tsne[row]: (2M, 2); computed by the job: here only drawn)."""
        row = self.qk_head.currentIndex()
        key = "qk_" + self.qk_method.currentData()
        if self.arrays is None or key not in self.arrays or row < 0:
            self.qk_queries.setData([])
            self.qk_keys.setData([])
            self.qk_caption.setText(self.tr("No query–key map in this job (open a job folder).") if key == "qk_points"
                                    or self.arrays is None or "qk_points" not in self.arrays else
                                    self.tr("This job has no t-SNE map (it was run with --no-tsne, or before t-SNE "
                                            "was added): the same command without --no-tsne, on its folder, adds it."))
            return
        points = self.arrays[key][row]  # (2N, 2) or (2M, 2)
        n = len(points) // 2
        index = np.arange(n)  # the first n tokens: qk_token's and qk_sentence's rows
        self.qk_queries.setData(x=points[:n, 0], y=points[:n, 1], data=index)
        self.qk_keys.setData(x=points[n:, 0], y=points[n:, 1], data=index)
        texts = len(np.unique(self.arrays["qk_text_index"][:n]))
        if key == "qk_points":
            text = self.tr("Head %1: the queries and keys of %2 tokens from the first %3 texts, keys moved to the "
                           "queries' mean and both scaled to one mean norm (no dot product changes), then PCA. "
                           "A query near a key: a large score.")
        else:
            text = self.tr("Head %1: the queries and keys of %2 tokens from the first %3 texts, keys moved to the "
                           "queries' mean and both scaled to one mean norm, then t-SNE (perplexity 30): near points "
                           "are near in the model, but distances between groups and the axes mean nothing.")
        self.qk_caption.setText(fill(text, self.qk_head.currentText(), f"{n:,}", texts))

    def _token_tip(self, x, y, data) -> str:
        index = int(data)
        return f"{self.arrays['qk_token'][index]!r}\n{self.arrays['qk_sentence'][index]}"

    def qk_points(self) -> tuple[np.ndarray, np.ndarray]:
        """(queries (N, 2), keys (N, 2)) as the map shows them (tests)."""
        return tuple(np.column_stack(item.getData()) for item in (self.qk_queries, self.qk_keys))

    # ------------------------------------------------------------------ a head in the window
    def open_head(self, layer: int, head: int) -> None:
        """The job's model with its switched-off heads on the head's most typical sentence, that head selected."""
        if self.arrays is None:
            return
        row = int(np.nonzero((self.arrays["layer"] == layer) & (self.arrays["head"] == head))[0][0])
        model = str(self.arrays["model"])
        controller = self.controller
        try:
            configurable = model_info(model).configurable
            controller.set_model(model, None if configurable else layer)
            controller.set_ablation(frozenset((int(l), int(h)) for l, h in self.arrays["ablated_heads"]))
            sentence = str(self.arrays["typical_sentence"][row])
            if sentence:
                controller.update_config(text=sentence)
        except Exception as error:  # noqa: BLE001 - an EngineError (a model gone): said in the caption
            self.caption.setText(error_text(error))
            return
        controller.select(head=head)
        # a pretrained model raises Model layers (or Next token), whose group then replaces this one's
        # one turn later: come forward again after it, so the map just clicked stays on screen
        QTimer.singleShot(0, self, self._come_forward)

    def _come_forward(self) -> None:
        parent = self.parentWidget()
        while parent is not None and not isinstance(parent, QDockWidget):
            parent = parent.parentWidget()
        if parent is not None:
            parent.show()
            parent.raise_()

    def show_snapshot(self, snapshot) -> None:
        self.show_selection()

    def show_selection(self) -> None:
        """Ring the window's head when it is this job's model."""
        snapshot = self.controller.snapshot
        if self.arrays is None or snapshot is None or snapshot.model != str(self.arrays["model"]):
            self.selected_point.setData([])
            return
        rows = np.nonzero((self.arrays["layer"] == snapshot.layer) & (self.arrays["head"] == self.controller.head))[0]
        if not len(rows):
            self.selected_point.setData([])
            return
        x, y = self.arrays["embedding"][rows[0]]
        self.selected_point.setData([float(x)], [float(y)])
