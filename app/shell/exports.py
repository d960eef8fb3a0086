"""File → Export: the heatmap as an image, the step-through, the data, the clipboard. Images are
drawn here (widgets live in the GUI thread); files are written in the worker's export lane."""
from __future__ import annotations

from PySide6.QtCore import QCoreApplication as Q, QObject, Qt
from PySide6.QtWidgets import QApplication, QFileDialog, QInputDialog

from engine import EngineError
from engine.models import model_info

from ..text import fill


def saved_to(save, result, path: str) -> str:
    """The export job: ``save(result, path)``, answering with the path written."""
    save(result, path)
    return path


class Exports(QObject):
    """File → Export and the clipboard; the files are written in the worker's export lane."""

    def __init__(self, window) -> None:
        super().__init__(window)
        self.w = window
        self._export_lane = window.controller.worker.lane("export", self)
        self._export_lane.done.connect(self._on_exported)
        self._export_lane.failed.connect(self._on_export_failed)

    def export_heatmap_dialog(self, all_heads: bool = False) -> None:
        if self.w.controller.snapshot is None:
            return
        default = "attention-all-heads.png" if all_heads else f"attention-head{self.w.controller.head}.png"
        path, chosen = QFileDialog.getSaveFileName(self.w, Q.translate("MainWindow", "Export heatmap"), self.w.sessions.last_folder(default, "image"),
                                                   Q.translate("MainWindow", "PNG image (*.png);;SVG drawing (*.svg)"))
        if not path:
            return
        if not path.lower().endswith((".png", ".svg")):
            path += ".svg" if "svg" in chosen.lower() else ".png"
        width = 1600
        if path.lower().endswith(".png"):
            width, ok = QInputDialog.getInt(self.w, Q.translate("MainWindow", "Image width"), Q.translate("MainWindow", "Width in pixels:"), 1600, 64, 16384, 100)
            if not ok:
                return
        self.export_heatmap(path, "all" if all_heads else self.w.controller.head, width)

    def export_heatmap(self, path: str, head, width: int = 1600) -> bool:
        from figures.render import export_figure

        words = self._shown_words()
        QApplication.setOverrideCursor(Qt.CursorShape.WaitCursor)
        try:
            export_figure(self.w.controller.snapshot.result, path, head=head,
                          stage="weights" if words else self.w.controller.stage, width=width,
                          label=self._figure_label(), words=words)
        except (EngineError, OSError) as error:
            self.w.warn(Q.translate("MainWindow", "Could not export the image"), error)
            return False
        finally:
            QApplication.restoreOverrideCursor()
        self.w.sessions.remember_folder("image", path)
        self.w.statusBar().showMessage(fill(Q.translate("MainWindow", "Exported %1"), path), 4000)
        return True

    def export_steps_dialog(self) -> None:
        if self.w.controller.snapshot is None:
            return
        path, chosen = QFileDialog.getSaveFileName(
            self.w, Q.translate("MainWindow", "Export step-through"), self.w.sessions.last_folder("steps.gif", "image"),
            Q.translate("MainWindow", "Animated GIF (*.gif);;MP4 video (*.mp4);;PDF handout (*.pdf)"))
        if path:
            if not path.lower().endswith((".gif", ".mp4", ".pdf")):
                path += ".mp4" if "mp4" in chosen.lower() else ".pdf" if "pdf" in chosen.lower() else ".gif"
            self.export_steps(path)

    def export_steps(self, path: str) -> bool:
        """Draw the stages here (pictures are drawn in this thread), the player's result with its head and
        focus; encode them in the worker. The frames hold the stage, its heatmaps and caption, never the
        player's controls (figures/steps.py)."""
        from figures.steps import export_steps, stage_pages

        player = self.w.navigation.show_player()
        result = player.shown_result()
        if result is None:
            self.w.warn(Q.translate("MainWindow", "Could not export the step-through"),
                       EngineError("the player has no result yet: wait for the computation and try again"))
            return False
        trained = not model_info(self.w.controller.model).configurable
        try:
            pages = stage_pages(result, head=self.w.controller.head, focus=self.w.controller.focus, trained=trained,
                                levels=player.stage_levels())  # its worker's bounds: none computed here
        except EngineError as error:  # too large to draw: said before anything is drawn
            self.w.warn(Q.translate("MainWindow", "Could not export the step-through"), error)
            return False
        self.w.sessions.remember_folder("image", path)
        title = self.w.controller.config.text if self.w.controller.config.text else ""
        self._export_lane.submit(saved_to, lambda result, target: export_steps(result, target, title=title),
                                 pages, path)
        return True

    def export_data_dialog(self) -> None:
        if self.w.controller.snapshot is None:
            return
        path, chosen = QFileDialog.getSaveFileName(
            self.w, Q.translate("MainWindow", "Export data"), self.w.sessions.last_folder("attention.npz", "data"),
            Q.translate("MainWindow", "NumPy arrays (*.npz);;JSON (*.json);;CSV weights (*.csv)"))
        if path:
            if not path.lower().endswith((".npz", ".json", ".csv")):
                path += "." + ("json" if "json" in chosen.lower() else "csv" if "csv" in chosen.lower() else "npz")
            self.export_data(path)

    def export_data(self, path: str) -> None:
        """Write, in the worker, what ``./run export --model M --text T [--ablate …] [--by words]``
        writes for the model and text on screen (engine.files.export.export_run); report when done."""
        from engine.analysis.request import RunRequest

        from ..jobs.trained import export_shown

        snapshot = self.w.controller.snapshot
        config = snapshot.result.config
        request = RunRequest(text=config.text, ablate=frozenset(snapshot.ablate), by_words=self.w.controller.by_words)
        request = self._asked_by_the_prediction_docks(request)
        self.w.sessions.remember_folder("data", path)
        self._export_lane.submit(saved_to, lambda request_, target: export_shown(snapshot.model, config, request_,
                                                                                target), request, path)

    def _asked_by_the_prediction_docks(self, request):
        """``request`` with what the Prediction docks show for the same text and switched-off heads: the
        Attribution dock's answer, contrast and lens grid, the Routes dock's token and τ. Export data then
        writes their keys too, as ``export --dla --answer A [--contrast C] --lens-grid --routes --tau T
        --position P`` does; a dock never opened, or showing another text, adds nothing."""
        from dataclasses import replace

        attribution = getattr(self.w.built_panel("attribution"), "result", None)
        if attribution is not None and attribution.request.text == request.text \
                and frozenset(attribution.request.ablate) == request.ablate:
            request = replace(request, answer=attribution.request.answer, contrast=attribution.request.contrast,
                              lens_grid=attribution.request.lens_grid)
        drawing = getattr(self.w.built_panel("routes"), "value", None)  # key: (model, text, ablate, token, τ)
        if drawing is not None and drawing.key[1] == request.text and frozenset(drawing.key[2]) == request.ablate:
            request = replace(request, tau=drawing.key[4], position=drawing.key[3])
        return request

    def _on_exported(self, path: str) -> None:
        self.w.statusBar().showMessage(fill(Q.translate("MainWindow", "Exported %1"), path), 4000)

    def _on_export_failed(self, error) -> None:
        self.w.warn(Q.translate("MainWindow", "Could not export the data"), error)

    def _shown_words(self):
        """(words, weights (heads, w, w)) when the heatmap shows attention by words, else None: an image
        shows what the window shows (*By words*: the softmax weights rolled up, as the attention panel)."""
        snapshot = self.w.controller.snapshot
        words = snapshot.words if snapshot is not None and self.w.controller.by_words else None
        return None if words is None else (words.words, words.weights)

    def _figure_label(self) -> str:
        snapshot = self.w.controller.snapshot
        if snapshot is None or model_info(snapshot.model).configurable:
            return ""
        return fill(Q.translate("MainWindow", "%1, layer %2"), Q.translate("Model", model_info(snapshot.model).title),
                    snapshot.layer)

    def copy_image(self) -> None:
        from figures.render import render_image

        if self.w.controller.snapshot is None:
            return
        words = self._shown_words()
        image = render_image(self.w.controller.snapshot.result, head=self.w.controller.head,
                             stage="weights" if words else self.w.controller.stage, width=1200,
                             label=self._figure_label(), words=words)
        QApplication.clipboard().setImage(image)
        self.w.statusBar().showMessage(Q.translate("MainWindow", "Heatmap copied to the clipboard"), 3000)

