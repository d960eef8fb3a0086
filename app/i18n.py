"""The interface language: English (the source) or Simplified Chinese, through Qt's translators.

Every user-visible string of the window goes through ``self.tr(...)``; ``pyside6-lupdate`` collects
them into resources/i18n/attention_explorer_zh_CN.ts (the translations' source, edited by hand) and
``pyside6-lrelease`` builds the .qm that is loaded here (scripts/build_translations.py does both).

- :func:`install_translator` at start-up: the language stored in QSettings ("language": system, en or
  zh_CN), where "system" follows the system locale (zh* → Chinese).
- :func:`install_language_menu` adds View ▸ Language (System / English / 简体中文); choosing one
  calls the window's ``switch_language`` (app.window), which uses :func:`store_and_install` and
  rebuilds itself from the controller's view state (Qt widgets do not re-translate themselves).
- :func:`error_text` translates an exception: an EngineError's template (engine/ cannot import Qt),
  filled with its values.
- :func:`setting_label` is the display text of a setting's value (auto, none, causal …) in combo boxes.
"""
from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QT_TRANSLATE_NOOP, QCoreApplication, QLibraryInfo, QLocale, QSettings, QTimer, QTranslator
from PySide6.QtGui import QAction, QActionGroup

from engine.core.errors import EngineError

from .text import fill

SETTINGS_ORGANIZATION = SETTINGS_APPLICATION = "AttentionExplorer"  # as app.window.MainWindow.settings
SETTINGS_KEY = "language"
SYSTEM, ENGLISH, CHINESE = "system", "en", "zh_CN"
CHOICES = (SYSTEM, ENGLISH, CHINESE)
CATALOG = "attention_explorer"
TRANSLATIONS_FOLDER = Path(__file__).resolve().parent.parent / "resources" / "i18n"
MENU_OBJECT_NAME = "languageMenu"

_translators: list[QTranslator] = []  # installed on the QApplication now
_language = ENGLISH  # the language the installed translators give


def translate(context: str, text: str) -> str:
    return QCoreApplication.translate(context, text)


# ---------------------------------------------------------------------------- choosing
def settings() -> QSettings:
    return QSettings(SETTINGS_ORGANIZATION, SETTINGS_APPLICATION)


def stored_choice() -> str:
    """system, en or zh_CN, as stored in QSettings (system when nothing valid is stored)."""
    value = settings().value(SETTINGS_KEY, SYSTEM)
    return value if value in CHOICES else SYSTEM


def system_locale_name() -> str:
    """The system's first UI language, e.g. "zh-Hans-CN" or "en-US" (tests replace this)."""
    languages = QLocale.system().uiLanguages()
    return languages[0] if languages else QLocale.system().name()


def system_language() -> str:
    """zh_CN when the system locale is Chinese (zh, zh_CN, zh-Hans …), en otherwise."""
    return CHINESE if system_locale_name().lower().startswith("zh") else ENGLISH


def resolve(code: str | None = None) -> str:
    """The language a choice means: None → the stored choice; system → the locale's; zh* → zh_CN."""
    if code is None:
        code = stored_choice()
    if code == SYSTEM:
        return system_language()
    return CHINESE if str(code).lower().startswith("zh") else ENGLISH


def active_language() -> str:
    """en or zh_CN: what the installed translators give."""
    return _language


def catalog_path(language: str = CHINESE) -> Path:
    return TRANSLATIONS_FOLDER / f"{CATALOG}_{language}.qm"


# ---------------------------------------------------------------------------- translators
def install_translator(app=None, code: str | None = None) -> str:
    """Install the translators for ``code`` (None: the stored choice) on ``app``; returns en or zh_CN.

    Chinese loads the app's catalogue and Qt's own (dialog buttons, context menus). English
    removes them: the sources are English. A missing catalogue falls back to English.
    """
    global _language
    app = app or QCoreApplication.instance()
    language = resolve(code)
    for translator in _translators:
        app.removeTranslator(translator)
    _translators.clear()
    if language != ENGLISH:
        ours = QTranslator(app)
        if ours.load(str(catalog_path(language))):
            qt_base = QTranslator(app)
            if qt_base.load(f"qtbase_{language}", QLibraryInfo.path(QLibraryInfo.LibraryPath.TranslationsPath)):
                app.installTranslator(qt_base)
                _translators.append(qt_base)
            app.installTranslator(ours)  # installed last: asked first
            _translators.append(ours)
        else:
            language = ENGLISH
    _language = language
    return language


# ---------------------------------------------------------------------------- the menu
def install_language_menu(window, view_menu):
    """Add View ▸ Language (System / English / 简体中文, one checked) to ``view_menu``; returns it.

    Choosing an entry calls ``window.switch_language(code)`` once the menu has closed. Calling this again
    on the same menu returns the existing submenu.
    """
    existing = view_menu.findChild(type(view_menu), MENU_OBJECT_NAME)
    if existing is not None:
        return existing
    menu = view_menu.addMenu(translate("Language", "Language"))
    menu.setObjectName(MENU_OBJECT_NAME)
    menu.setToolTipsVisible(True)
    group = QActionGroup(menu)
    group.setExclusive(True)
    choice = stored_choice()
    now = "简体中文" if system_language() == CHINESE else "English"
    # the languages are named in their own language, so either reader finds theirs
    for code, text, tip in (
        (SYSTEM, translate("Language", "System"),
         fill(translate("Language", "Follow the system's language (now: %1)"), now)),
        (ENGLISH, "English", "English interface"),
        (CHINESE, "简体中文", "中文界面"),
    ):
        action = QAction(text, menu)
        action.setObjectName(f"language_{code}")
        action.setCheckable(True)
        action.setChecked(code == choice)
        action.setData(code)
        action.setToolTip(tip)
        action.setStatusTip(tip)
        group.addAction(action)
        menu.addAction(action)
        # after the menu closes: the window that owns this menu is replaced
        action.triggered.connect(lambda _=False, c=code: QTimer.singleShot(0, window, lambda: window.switch_language(c)))
    menu.language_group = group
    return menu


def store_and_install(code: str) -> bool:
    """Store ``code`` (system, en, zh_CN) as the choice and install its translators; True when the
    interface language changed (the window then rebuilds itself: Qt widgets do not re-translate)."""
    code = code if code in CHOICES else SYSTEM
    store = settings()
    store.setValue(SETTINGS_KEY, code)
    store.sync()
    before = _language
    return install_translator(None, code) != before


# ---------------------------------------------------------------------------- setting values
SETTING_LABELS = {
    ("tokenizer", "auto"): QT_TRANSLATE_NOOP("Setting", "auto"),
    ("tokenizer", "whitespace"): QT_TRANSLATE_NOOP("Setting", "whitespace"),
    ("tokenizer", "chars"): QT_TRANSLATE_NOOP("Setting", "chars"),
    ("tokenizer", "jieba"): QT_TRANSLATE_NOOP("Setting", "jieba"),
    ("positional", "none"): QT_TRANSLATE_NOOP("Setting", "none"),
    ("positional", "sinusoidal"): QT_TRANSLATE_NOOP("Setting", "sinusoidal"),
    ("positional", "rope"): QT_TRANSLATE_NOOP("Setting", "rope"),
    ("mask", "none"): QT_TRANSLATE_NOOP("Setting", "none"),
    ("mask", "causal"): QT_TRANSLATE_NOOP("Setting", "causal"),
    ("weights", "random"): QT_TRANSLATE_NOOP("Setting", "random"),
    ("weights", "identity"): QT_TRANSLATE_NOOP("Setting", "identity"),
    ("stage", "scores"): QT_TRANSLATE_NOOP("Setting", "scores"),
    ("stage", "scaled"): QT_TRANSLATE_NOOP("Setting", "scaled"),
    ("stage", "weights"): QT_TRANSLATE_NOOP("Setting", "weights"),
}


def setting_label(name: str, value) -> str:
    """Display text of a setting's value: the value itself in English, e.g. 因果 for mask causal."""
    source = SETTING_LABELS.get((name, value))
    return translate("Setting", source) if source else str(value)


# ---------------------------------------------------------------------------- engine messages
# scripts/build_translations.py collects every EngineError template of engine/ and app/ into the .ts
def error_text(error: BaseException) -> str:
    """A failure in the interface language. An EngineError's template is translated (Qt context
    "EngineError", the engine cannot import Qt) and filled with its values, a nested EngineError
    value translated too; any other exception reads as Python says it."""
    if isinstance(error, EngineError):
        template = translate("EngineError", error.template)
        if not error.values:
            return template
        values = {name: error_text(value) if isinstance(value, EngineError) else value
                  for name, value in error.values.items()}
        try:
            return template.format(**values)
        except (KeyError, IndexError, ValueError):  # a translation that lost a field: the English is right
            return str(error)
    message = str(error) or type(error).__name__
    return message if isinstance(error, (ValueError, OSError)) else f"{type(error).__name__}: {message}"
