"""A table of heads as the Head dashboard and the Corpus dock show it: sorted by the number behind
each cell (the source model's UserRole, not its text), one row selected at a time, columns as wide as
their contents, first column ascending."""
from __future__ import annotations

from PySide6.QtCore import QAbstractItemModel, QObject, QSortFilterProxyModel, Qt
from PySide6.QtWidgets import QAbstractItemView, QHeaderView, QTableView


def sorted_table(source: QAbstractItemModel, name: str, owner: QObject) -> tuple[QSortFilterProxyModel, QTableView]:
    """(proxy, view) over ``source``; the view is named ``name`` (tests and layout checks find it)."""
    proxy = QSortFilterProxyModel(owner)
    proxy.setSourceModel(source)
    proxy.setSortRole(Qt.ItemDataRole.UserRole)
    view = QTableView()
    view.setObjectName(name)
    view.setModel(proxy)
    view.setSortingEnabled(True)
    view.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
    view.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
    view.verticalHeader().setVisible(False)
    view.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
    view.sortByColumn(0, Qt.SortOrder.AscendingOrder)
    return proxy, view
