"""The application's names (QSettings keys, the title) and where its settings are kept."""
from __future__ import annotations

from PySide6.QtCore import QSettings

APP_VERSION = "0.1.0"  # as in pyproject.toml
ORGANIZATION = "AttentionExplorer"
APPLICATION = "Attention Explorer"


def use_settings_folder(folder: str) -> None:
    """Keep every QSettings (native and ini, user and system scope) in ``folder``: tests,
    benchmarks and the screenshot script must never touch the user's own settings."""
    for fmt in (QSettings.Format.NativeFormat, QSettings.Format.IniFormat):
        for scope in (QSettings.Scope.UserScope, QSettings.Scope.SystemScope):
            QSettings.setPath(fmt, scope, folder)
