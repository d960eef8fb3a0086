"""Every dock of the window in one table: a new panel is its file, one row here and its
translations (and a worker job if it needs one). Which models a panel shows is its own
``NEEDS`` (app/panels/base.py: capabilities, read also where a panel lives outside a dock).

No Qt here: the table is data read by app/shell/docks.py (which builds the docks) and
app/dock_groups.py (which shows one group of bottom docks at a time).
"""
from __future__ import annotations

from dataclasses import dataclass


def QT_TRANSLATE_NOOP(context: str, text: str) -> str:  # noqa: N802 - the marker lupdate looks for
    return text


@dataclass(frozen=True)
class Dock:
    key: str  # objectName f"{key}Dock", saved in the layout: never rename
    title: str  # English, translated in context "MainWindow"
    module: str  # app/panels/<module>.py
    panel: str  # its Panel class
    area: str  # left | right | bottom
    group: str = ""  # the bottom docks' group (app/dock_groups.py); "" for the docks always shown
    eager: bool = False  # built at start (on screen from the first picture); else when first shown
    tab_with: str = ""  # tabbed behind this dock in the default layout
    front: bool = False  # the group's tab raised when the group is first shown (else its first dock)


DOCKS: tuple[Dock, ...] = (
    Dock("input", QT_TRANSLATE_NOOP("MainWindow", "Input"), "input_panel", "InputPanel", "left", eager=True),
    Dock("tokens", QT_TRANSLATE_NOOP("MainWindow", "Tokens"), "tokens_panel", "TokensPanel", "left", eager=True),
    Dock("attention", QT_TRANSLATE_NOOP("MainWindow", "Attention heatmap"), "attention_panel", "AttentionPanel", "right", eager=True),
    Dock("heads", QT_TRANSLATE_NOOP("MainWindow", "Head grid"), "headgrid_panel", "HeadGridPanel", "right", eager=True),
    Dock("arithmetic", QT_TRANSLATE_NOOP("MainWindow", "Worked arithmetic"), "arithmetic_panel", "ArithmeticPanel", "right", eager=True),
    Dock("diffs", QT_TRANSLATE_NOOP("MainWindow", "Vector diffs"), "diffs_panel", "DiffsPanel", "bottom", "basics"),
    Dock("player", QT_TRANSLATE_NOOP("MainWindow", "Step-through player"), "player_panel", "PlayerPanel", "bottom", "steps",
         tab_with="diffs"),
    Dock("matrices", QT_TRANSLATE_NOOP("MainWindow", "Matrices"), "matrices_panel", "MatricesPanel", "bottom", "basics",
         tab_with="diffs"),
    Dock("compare", QT_TRANSLATE_NOOP("MainWindow", "Comparison"), "compare_panel", "ComparePanel", "bottom", "basics",
         tab_with="diffs"),
    # along the bottom, its parts side by side: behind the worked arithmetic in the right column it had
    # 100–300 px of height and scrolled at every size
    Dock("inspector", QT_TRANSLATE_NOOP("MainWindow", "Cell inspector"), "inspector_panel", "InspectorPanel", "bottom",
         "basics", tab_with="diffs"),
    Dock("plane", QT_TRANSLATE_NOOP("MainWindow", "Vectors in the plane"), "plane_panel", "PlanePanel", "bottom", "labs",
         tab_with="diffs"),
    Dock("positional", QT_TRANSLATE_NOOP("MainWindow", "Positional encoding lab"), "positional_panel", "PositionalPanel", "bottom",
         "labs", tab_with="diffs", front=True),
    Dock("scaling", QT_TRANSLATE_NOOP("MainWindow", "Scaling lab"), "scaling_panel", "ScalingPanel", "bottom", "labs",
         tab_with="diffs"),
    Dock("layers", QT_TRANSLATE_NOOP("MainWindow", "Model layers"), "layers_panel", "LayersPanel", "bottom", "model", tab_with="diffs"),
    Dock("words", QT_TRANSLATE_NOOP("MainWindow", "Across languages"), "words_compare_panel", "WordsComparePanel", "bottom", "model",
         tab_with="diffs"),
    Dock("next", QT_TRANSLATE_NOOP("MainWindow", "Next token"), "next_token_panel", "NextTokenPanel", "bottom", "model",
         tab_with="diffs"),
    Dock("lens", QT_TRANSLATE_NOOP("MainWindow", "Logit lens"), "logit_lens_panel", "LogitLensPanel", "bottom", "model",
         tab_with="diffs"),
    Dock("rollout", QT_TRANSLATE_NOOP("MainWindow", "Rollout"), "analysis_panel", "RolloutPanel", "bottom", "analysis",
         tab_with="diffs"),
    Dock("ablation", QT_TRANSLATE_NOOP("MainWindow", "Switch heads off"), "analysis_panel", "AblationPanel", "bottom", "analysis",
         tab_with="diffs"),
    Dock("dashboard", QT_TRANSLATE_NOOP("MainWindow", "Head dashboard"), "analysis_panel", "DashboardPanel", "bottom", "analysis",
         tab_with="diffs"),
    Dock("corpus", QT_TRANSLATE_NOOP("MainWindow", "Corpus"), "corpus_panel", "CorpusPanel", "bottom", "analysis", tab_with="diffs"),
    Dock("patching", QT_TRANSLATE_NOOP("MainWindow", "Activation patching"), "evidence_panel", "PatchingPanel", "bottom", "evidence",
         tab_with="diffs"),
    Dock("occlusion", QT_TRANSLATE_NOOP("MainWindow", "Leave-one-out"), "evidence_panel", "OcclusionPanel", "bottom", "evidence",
         tab_with="diffs"),
    Dock("attribution", QT_TRANSLATE_NOOP("MainWindow", "Attribution"), "attribution_panel", "AttributionPanel", "bottom",
         "prediction", tab_with="diffs"),
    Dock("routes", QT_TRANSLATE_NOOP("MainWindow", "Routes"), "routes_panel", "RoutesPanel", "bottom", "prediction",
         tab_with="diffs"),
    Dock("saliency", QT_TRANSLATE_NOOP("MainWindow", "Saliency"), "saliency_panel", "SaliencyPanel", "bottom", "prediction",
         tab_with="diffs"),
)


def group_keys(group: str) -> tuple[str, ...]:
    """The docks of a bottom group in tab order, the one raised first in front."""
    rows = [dock for dock in DOCKS if dock.group == group]
    return tuple(dock.key for dock in sorted(rows, key=lambda dock: not dock.front))
