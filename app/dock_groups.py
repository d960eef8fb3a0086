"""A handful of named places instead of fourteen tabs: the bottom docks in groups.

Why: along the bottom, fourteen tabs were cut to "Vector d…", "Roll…" on a 1366-pixel
screen, and a newcomer could not tell where to start. The bottom docks now belong to five
groups (Basics, Steps, Labs, Model, Analysis, Evidence, Prediction); a switcher in the toolbar (and View → Panels,
Ctrl+Alt+1…7) shows one group's docks as tabs and hides the others'. A hidden dock keeps its
place in the tab row (Qt keeps a placeholder), so switching back restores it as it was.

Code elsewhere that shows a dock (``dock.show(); dock.raise_()``: the player's F6, a decoder
bringing Next token forward, a preset opening Across languages) needs no change: a dock of
another group that becomes visible switches the group to its own, one event-loop turn later.
"""
from __future__ import annotations

from PySide6.QtCore import QT_TRANSLATE_NOOP, QCoreApplication, QObject, Qt, QTimer
from PySide6.QtGui import QAction, QActionGroup, QKeySequence
from PySide6.QtWidgets import QDockWidget, QToolBar

from .dock_table import group_keys

# (name, title): the groups in the switcher's order; their docks are app/dock_table.py's rows of that group
GROUPS = (
    ("basics", QT_TRANSLATE_NOOP("DockGroups", "Basics")),
    ("steps", QT_TRANSLATE_NOOP("DockGroups", "Steps")),
    ("labs", QT_TRANSLATE_NOOP("DockGroups", "Labs")),
    ("model", QT_TRANSLATE_NOOP("DockGroups", "Model")),
    ("analysis", QT_TRANSLATE_NOOP("DockGroups", "Analysis")),
    ("evidence", QT_TRANSLATE_NOOP("DockGroups", "Evidence")),
    ("prediction", QT_TRANSLATE_NOOP("DockGroups", "Prediction")),
)
# What each group holds, for the switcher's tooltips
TIPS = {
    "basics": QT_TRANSLATE_NOOP("DockGroups", "Vector diffs, Matrices, Comparison, Cell inspector: each token's vector "
                                              "before and after, the weights, two sentences, one weight taken apart"),
    "steps": QT_TRANSLATE_NOOP("DockGroups", "The step-through player: the pipeline one stage at a time"),
    "labs": QT_TRANSLATE_NOOP("DockGroups", "Positional encoding lab, Scaling lab, Vectors in the plane"),
    "model": QT_TRANSLATE_NOOP("DockGroups", "Trained models: Model layers, Across languages, Next token, Logit lens"),
    "analysis": QT_TRANSLATE_NOOP("DockGroups", "Rollout, Switch heads off, Head dashboard, Corpus"),
    "evidence": QT_TRANSLATE_NOOP("DockGroups", "Causal evidence: activation patching, leave-one-out"),
    "prediction": QT_TRANSLATE_NOOP("DockGroups", "How a prediction is built: direct logit attribution and the lens grid, "
                                                  "information-flow routes, saliency from gradients"),
}
DEFAULT_GROUP = "basics"
# share of the window's height the bottom area takes when a group is first shown (the player's charts and
# the layer grids need more than the vector diffs); afterwards each group keeps the height it was left at.
# Model: a real-model preset opens it under its captioned heatmap, which keeps 16 labelled rows at 1366 × 768
# with 0.40 (0.45 left it 224 pixels: 8 of 16 labels); Model layers turns its map when shorter (fit_room)
BOTTOM_SHARE = {"basics": 0.40, "steps": 0.48, "labs": 0.45, "model": 0.40, "analysis": 0.46, "evidence": 0.46, "prediction": 0.46}


def _tr(text: str) -> str:
    return QCoreApplication.translate("DockGroups", text)


class DockGroups(QObject):
    """The groups of ``docks`` (key → QDockWidget) and the toolbar that switches between them."""

    def __init__(self, window, docks: dict[str, QDockWidget]) -> None:
        super().__init__(window)
        self.window, self.docks = window, docks
        self.current = DEFAULT_GROUP
        self._switching = False
        self._heights: dict[str, int] = {}  # the bottom area's height each group was left at
        self._on_top: dict[str, str] = {}  # the dock each group was left showing
        self.group_of = {key: name for name, _title in GROUPS for key in group_keys(name)}
        self.toolbar = QToolBar(QCoreApplication.translate("DockGroups", "Panels"), window)
        self.toolbar.setObjectName("panelGroupsToolBar")
        self.actions: dict[str, QAction] = {}
        exclusive = QActionGroup(self)
        exclusive.setExclusive(True)
        for number, (name, title) in enumerate(GROUPS, start=1):
            action = QAction(_tr(title), self)
            action.setObjectName(f"group-{name}")
            action.setCheckable(True)
            action.setShortcut(QKeySequence(f"Ctrl+Alt+{number}"))
            action.setToolTip(f"{_tr(title)} ({action.shortcut().toString(QKeySequence.SequenceFormat.NativeText)}): "
                              f"{_tr(TIPS[name])}")
            action.setStatusTip(_tr(TIPS[name]))
            action.triggered.connect(lambda _=False, n=name: self.select(n))
            exclusive.addAction(action)
            self.toolbar.addAction(action)
            self.actions[name] = action
        self.actions[self.current].setChecked(True)
        self._fit_timer = QTimer(self)  # the window's first show and resizes: the bottom panel fitted again
        self._fit_timer.setSingleShot(True)
        self._fit_timer.setInterval(50)
        self._fit_timer.timeout.connect(lambda: self._fit(self._shown_key()))
        window.installEventFilter(self)
        self._chips_timer = QTimer(self)  # more tokens, more rows of chips: the chips' dock grows under the form
        self._chips_timer.setSingleShot(True)
        self._chips_timer.setInterval(50)
        self._chips_timer.timeout.connect(self._fit_chips)
        chips = docks.get("tokens")
        if chips is not None and chips.widget() is not None and hasattr(chips.widget(), "widget"):
            chips.widget().widget().installEventFilter(self)  # its holder: LayoutRequest when its minimum changes
        self._grow_timer = QTimer(self)  # the shown panel's content changed (the player's next stage): grow to it
        self._grow_timer.setSingleShot(True)
        self._grow_timer.setInterval(50)
        self._grow_timer.timeout.connect(self._grow)
        self._holders = {}
        for key in self.group_of:
            scroll = docks[key].widget()
            holder = scroll.widget() if scroll is not None and hasattr(scroll, "widget") else None
            if holder is not None:
                holder.installEventFilter(self)  # LayoutRequest: its panel's minimum may have changed
                self._holders[holder] = key
        controller = getattr(window, "controller", None)
        if controller is not None:  # a new sentence: its chips laid out, then their rows fitted
            controller.snapshotArrived.connect(lambda *_: self._chips_timer.start())
        heads = getattr(window, "panels", {}).get("heads")
        if heads is not None and hasattr(heads, "rowsChanged"):  # 8 or 12 heads: a taller top row, fitted again
            heads.rowsChanged.connect(self._fit_timer.start)
        for key in self.group_of:
            docks[key].visibilityChanged.connect(lambda visible, k=key: self._on_visibility(k, visible))
            docks[key].installEventFilter(self)  # raise_() of a dock in another group: go there

    def names(self) -> list[str]:
        return [name for name, _title in GROUPS]

    def keys(self, name: str) -> tuple[str, ...]:
        return group_keys(name)

    def select(self, name: str, raise_key: str | None = None) -> None:
        """Show group ``name``'s docks (tabbed where they were) and hide the other groups'."""
        if name not in self.actions:
            name = DEFAULT_GROUP
        self._switching = True
        try:
            if name != self.current:
                on_top = [k for k in self.keys(self.current) if self.docks[k].isVisible()
                          and not self.docks[k].visibleRegion().isEmpty()]
                if on_top:
                    self._on_top[self.current] = on_top[0]
                shown_heights = [self.docks[k].height() for k in self.keys(self.current) if self.docks[k].isVisible()]
                if shown_heights:
                    self._heights[self.current] = max(shown_heights)
            self.current = name
            self.actions[name].setChecked(True)
            for key, group in self.group_of.items():
                dock = self.docks[key]
                if group != name and not dock.isFloating():
                    dock.hide()
            for key in self.keys(name):
                self.docks[key].show()
            shown = raise_key or self._on_top.get(name) or self.keys(name)[0]  # the tab it was left on
            self.docks[shown].raise_()
            # again once a tab just shown is in its tab bar, unless another group was chosen since (the
            # language switch selects the default group, then the one shown): raised then, it would
            # read as code bringing a dock of another group forward and switch back to it
            QTimer.singleShot(0, self.docks[shown], lambda key=shown: self._raise_again(key))
            share = BOTTOM_SHARE.get(name, 0) * (0.85 if self.window.height() < 700 else 1.0)  # small screens: the
            height = self._heights.get(name) or int(self.window.height() * share) or None  # input and heatmap first
            if height and self.window.isVisible():
                from .layout_sizes import set_bottom_height

                set_bottom_height(self.window, shown, height)
                # once the new heights are laid out (and the lazy panel built): a group shown at its
                # default share grows to what its panel needs; one the user left at a height keeps it
                QTimer.singleShot(0, self.window, lambda: self._fit(shown if name not in self._heights else None))
        finally:
            self._switching = False

    def _raise_again(self, key: str) -> None:
        if self.group_of.get(key) == self.current:
            self.docks[key].raise_()

    def _fit(self, key: str | None, tries: int = 3) -> None:
        from .layout_sizes import fit_bottom, keep_head_grid_whole

        if key is not None and self.group_of.get(key) == self.current:
            from .lazy import LazyPanel

            lazy = self.window.panels.get(key)
            if isinstance(lazy, LazyPanel) and lazy.panel is None:  # fitted once built (after the first result)
                lazy.build_soon(lambda _panel: QTimer.singleShot(0, self.window, lambda: self._fit(key, tries)))
                return
            panel = self.window.panel(key)  # a lazy panel counts once built and shown (Qt shows it a turn later)
            if panel.isHidden() and tries > 0:
                QTimer.singleShot(0, self.window, lambda: self._fit(key, tries - 1))
                return
            fit_bottom(self.window, key)  # the head grid too
            return
        keep_head_grid_whole(self.window)

    def _grow(self) -> None:
        from .layout_sizes import fit_bottom

        key = self._shown_key()
        if key is not None and self.window.isVisible() and not self._switching:
            fit_bottom(self.window, key, grow_only=True)

    def _fit_chips(self, again: bool = True) -> None:
        from .layout_sizes import keep_tokens_whole

        if self.window.isVisible():
            chips = getattr(self.window.panels.get("tokens"), "chips", None)
            if chips is not None:
                chips.doItemsLayout()  # the list lays its chips out later (batched): measure them laid out
            keep_tokens_whole(self.window)
            if again:  # a long sentence's chips may take another turn to be laid out
                QTimer.singleShot(200, self.window, lambda: self._fit_chips(again=False))

    def _shown_key(self) -> str | None:
        """The current group's dock on top of its tabs, if any."""
        return next((k for k in self.keys(self.current) if self.docks[k].isVisible()
                     and not self.docks[k].visibleRegion().isEmpty()), None)

    def forget_heights(self) -> None:
        """Reset layout: every group starts again from its default share of the height."""
        self._heights.clear()
        self._on_top.clear()

    def menu_actions(self) -> list[QAction]:
        return list(self.actions.values())

    def _on_visibility(self, key: str, visible: bool) -> None:
        """A dock of another group was shown from elsewhere (F6, a model, a preset): go to its group."""
        if visible and not self._switching and self.group_of[key] != self.current \
                and not self.docks[key].isFloating():
            QTimer.singleShot(0, self.window, lambda: self._follow(key))

    def eventFilter(self, watched, event) -> bool:  # noqa: N802 - Qt name
        """``dock.raise_()`` on a dock hidden because its group is not shown (a tab brought forward
        by code, as before the groups) switches to that group; a dock the user closed stays closed."""
        from PySide6.QtCore import QEvent

        holders = self.__dict__.get("_holders") or {}
        if event.type() == QEvent.Type.LayoutRequest and holders.get(watched) is not None:
            if holders[watched] == self._shown_key():
                self._grow_timer.start()
            return False
        if event.type() == QEvent.Type.LayoutRequest and "tokens" in self.docks \
                and watched is getattr(self.docks["tokens"].widget(), "widget", lambda: None)():
            self._chips_timer.start()
            return False
        if watched is self.window and event.type() in (QEvent.Type.Show, QEvent.Type.Resize):
            self._fit_timer.start()  # the first show, a maximised or resized window: once it settles
            return False
        if event.type() == QEvent.Type.ZOrderChange and not self._switching and isinstance(watched, QDockWidget):
            key = next((k for k, dock in self.docks.items() if dock is watched), None)
            if key in self.group_of and self.group_of[key] != self.current and watched.isHidden() \
                    and self.window.isVisible():
                QTimer.singleShot(0, self.window, lambda: self._follow_raise(key))
        return False

    def _follow_raise(self, key: str) -> None:
        if self.group_of[key] != self.current:
            self.select(self.group_of[key], raise_key=key)

    def _follow(self, key: str) -> None:
        dock = self.docks[key]
        if dock.isVisible() and self.group_of[key] != self.current:
            self.select(self.group_of[key], raise_key=key)
