"""The interface language: English (the source) or Simplified Chinese, through Qt's translators.

Every user-visible string of the window goes through ``self.tr(...)``; ``pyside6-lupdate`` collects
them into resources/i18n/attention_explorer_zh_CN.ts (the translations' source, edited by hand) and
``pyside6-lrelease`` builds the .qm that is loaded here (scripts/build_translations.py does both).

- :func:`install_translator` at start-up: the language stored in QSettings ("language": system, en or
  zh_CN), where "system" follows the system locale (zh* → Chinese).
- :func:`install_language_menu` adds View ▸ Language (System / English / 简体中文);
  :func:`switch_language` stores the choice, swaps the translators and rebuilds the window (Qt
  widgets do not re-translate themselves), keeping settings, selection and layout.
- :func:`translate_engine_message` translates the engine's English error messages (engine/ cannot
  import Qt) by matching them against their templates, placeholders kept.
- :func:`setting_label` is the display text of a setting's value (auto, none, causal …) in combo boxes.
"""
from __future__ import annotations

import re
from pathlib import Path

from PySide6.QtCore import QT_TRANSLATE_NOOP, QCoreApplication, QLibraryInfo, QLocale, QSettings, QTimer, QTranslator
from PySide6.QtGui import QAction, QActionGroup

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
_live_window = None  # the window switch_language made: a module reference keeps it alive


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

    Choosing an entry calls :func:`switch_language` once the menu has closed. Calling this again
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
        action.triggered.connect(lambda _=False, c=code: QTimer.singleShot(0, lambda: switch_language(window, c)))
    menu.language_group = group
    return menu


def switch_language(window, code: str):
    """Store ``code`` (system, en, zh_CN), install its translators and rebuild ``window`` in it.

    Returns the window now on screen: a new MainWindow with the same settings, head, focused
    token, stage, model and layer, comparison sentence B, undo history, geometry and dock layout
    (the old one is closed), or ``window`` itself when the language does not change.
    """
    global _live_window
    code = code if code in CHOICES else SYSTEM
    store = settings()
    store.setValue(SETTINGS_KEY, code)
    store.sync()
    before = _language
    if install_translator(None, code) == before:
        return window
    from app.window import MainWindow

    old = window.controller
    config = old.config
    compare = getattr(window.panels.get("compare"), "panel", None)  # None while never opened
    sentence_b = compare.text_b.text() if compare is not None else ""
    new = MainWindow(config=config)
    new.restoreGeometry(window.saveGeometry())
    new.restoreState(window.saveState())
    history = getattr(window, "_history", None)  # the undo stack survives the switch
    if isinstance(history, list) and isinstance(getattr(new, "_history", None), list):
        new._history[:] = history
        new.undo_action.setEnabled(bool(history))
    controller = new.controller
    controller.head, controller.focus, controller.stage = old.head, old.focus, old.stage
    controller.set_config(config, immediate=True)
    if old.model != controller.model or old.layer != controller.layer:
        controller.set_model(old.model, old.layer)  # MiniLM stays MiniLM, at the same layer
    if sentence_b:  # the comparison's sentence B is typed work too
        new.panels["compare"].build().text_b.setText(sentence_b)
    new.show()
    window.close()
    _live_window = new
    return new


def live_window():
    """The window the last language switch made (None before any switch)."""
    return _live_window


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
# The engine's messages (engine/config.py, memory.py, compute.py, explain.py, inspect.py,
# tokenize.py, labs.py, export.py, minilm.py) and the app's own plain-Python ones (session.py,
# render.py), as templates:
# %N stands for any text; a %N used twice must repeat the same text. More specific first.
ENGINE_MESSAGES = (
    QT_TRANSLATE_NOOP("EngineMessage", "text must be a string"),
    QT_TRANSLATE_NOOP("EngineMessage", "text is empty: type a sentence, e.g. 小明 喜欢 苹果"),
    QT_TRANSLATE_NOOP("EngineMessage", "text holds an invalid character (a lone surrogate): retype it"),
    QT_TRANSLATE_NOOP("EngineMessage", "the text has no tokens (only spaces or control characters): type a word"),
    QT_TRANSLATE_NOOP("EngineMessage", "d_model (%1) must be divisible by heads (%2); try heads in %3"),
    QT_TRANSLATE_NOOP("EngineMessage", "RoPE rotates pairs of dimensions, so d_k = d_model / heads must be even; "
                                       "it is %1 (d_model %2, heads %3)"),
    QT_TRANSLATE_NOOP("EngineMessage", "seed must be between 0 and %1; got %2"),
    QT_TRANSLATE_NOOP("EngineMessage", "scale must be true or false; got %1"),
    QT_TRANSLATE_NOOP("EngineMessage", "temperature must be a number; got %1"),
    QT_TRANSLATE_NOOP("EngineMessage", "temperature must be a positive number; got %1"),
    QT_TRANSLATE_NOOP("EngineMessage", "temperature must be at least %1; got %2"),
    QT_TRANSLATE_NOOP("EngineMessage", "memory_budget must be a positive number of bytes; got %1"),
    QT_TRANSLATE_NOOP("EngineMessage", "%1 must be one of %2; got %3"),
    QT_TRANSLATE_NOOP("EngineMessage", "%1 must be a whole number; got %2"),
    QT_TRANSLATE_NOOP("EngineMessage", "%1 must be positive; got %2"),
    QT_TRANSLATE_NOOP("EngineMessage", "%1 must be at most %2; got %3"),
    QT_TRANSLATE_NOOP("EngineMessage", "embeddings table must map token text to a list of numbers, "
                                       "e.g. {\"小明\": [1, 0]}; got %1"),
    QT_TRANSLATE_NOOP("EngineMessage", "embeddings table key %1 must be a non-empty token string"),
    QT_TRANSLATE_NOOP("EngineMessage", "embedding for %1 must be a list of numbers, got %2"),
    QT_TRANSLATE_NOOP("EngineMessage", "embedding for %1 holds %2, which is not a number"),
    QT_TRANSLATE_NOOP("EngineMessage", "embedding for %1 holds %2: only finite numbers are allowed"),
    QT_TRANSLATE_NOOP("EngineMessage", "embedding for %1 holds %2: values must lie between %3 and %4"),
    QT_TRANSLATE_NOOP("EngineMessage", "embedding for %1 is empty"),
    QT_TRANSLATE_NOOP("EngineMessage", "embedding for %1 has %2 numbers but d_model is %3: give every vector "
                                       "exactly %3 numbers or change d_model"),
    QT_TRANSLATE_NOOP("EngineMessage", "settings must be an object of name: value pairs"),
    QT_TRANSLATE_NOOP("EngineMessage", "unknown setting(s): %1"),
    QT_TRANSLATE_NOOP("EngineMessage", "%1 tokens at d_model %2 with %3 heads need about %4, over the %5 memory "
                                       "budget: shorten the text, or use fewer heads or a smaller d_model"),
    QT_TRANSLATE_NOOP("EngineMessage", "head %1 does not exist: there are %2 heads (0 … %3)"),
    QT_TRANSLATE_NOOP("EngineMessage", "token %1 does not exist: there are %2 tokens (0 … %3)"),
    QT_TRANSLATE_NOOP("EngineMessage", "query token %1 does not exist: there are %2 tokens (0 … %3)"),
    QT_TRANSLATE_NOOP("EngineMessage", "key token %1 does not exist: there are %2 tokens (0 … %3)"),
    QT_TRANSLATE_NOOP("EngineMessage", "the jieba tokenizer needs the jieba package: pip install jieba"),
    QT_TRANSLATE_NOOP("EngineMessage", "unknown tokenizer %1"),
    QT_TRANSLATE_NOOP("EngineMessage", "permutation must be a list of token positions; got %1"),
    QT_TRANSLATE_NOOP("EngineMessage", "permutation must order the positions 0 … %1 once each; got %2"),
    QT_TRANSLATE_NOOP("EngineMessage", "a token holds white space, so the shuffled sentence cannot be rebuilt "
                                       "from the tokens"),
    QT_TRANSLATE_NOOP("EngineMessage", "the shuffled sentence tokenized differently from the original tokens"),
    QT_TRANSLATE_NOOP("EngineMessage", "head must be a number from 0 to %1 or 'all'; got %2"),
    QT_TRANSLATE_NOOP("EngineMessage", "images are .png or .svg; got %1"),
    QT_TRANSLATE_NOOP("EngineMessage", "width must be between 64 and 16384 pixels; got %1"),
    QT_TRANSLATE_NOOP("EngineMessage", "cannot write %1: the folder %2 does not exist"),
    QT_TRANSLATE_NOOP("EngineMessage", "cannot write %1: permission denied"),
    QT_TRANSLATE_NOOP("EngineMessage", "could not write the image to %1"),
    QT_TRANSLATE_NOOP("EngineMessage", "the file holds %1, which is not a finite number"),
    QT_TRANSLATE_NOOP("EngineMessage", "not a valid session file: JSON error at line %1, column %2"),
    QT_TRANSLATE_NOOP("EngineMessage", "not an Attention Explorer session file (its \"format\" field is missing "
                                       "or different)"),
    QT_TRANSLATE_NOOP("EngineMessage", "the session file has no valid \"version\" number"),
    QT_TRANSLATE_NOOP("EngineMessage", "the session was written by a newer Attention Explorer (format version %1); "
                                       "this version reads format %2: please update the app"),
    QT_TRANSLATE_NOOP("EngineMessage", "unknown session format version %1"),
    QT_TRANSLATE_NOOP("EngineMessage", "the session file has no \"config\" object"),
    QT_TRANSLATE_NOOP("EngineMessage", "the session's settings are invalid: %1"),
    QT_TRANSLATE_NOOP("EngineMessage", "the session's \"view\" must be an object"),
    QT_TRANSLATE_NOOP("EngineMessage", "the session's view.%1 must be a whole number ≥ 0"),
    QT_TRANSLATE_NOOP("EngineMessage", "the session's view.stage must be one of %1"),
    QT_TRANSLATE_NOOP("EngineMessage", "cannot export to %1: %2; use %3"),
    QT_TRANSLATE_NOOP("EngineMessage", "unknown file type %1"),
    QT_TRANSLATE_NOOP("EngineMessage", "no file type (suffix)"),
    # the pretrained model (engine/minilm.py)
    QT_TRANSLATE_NOOP("EngineMessage", "text is empty: type a sentence, e.g. The animal didn't cross the street."),
    QT_TRANSLATE_NOOP("EngineMessage", "%1. Install it with: %2"),
    QT_TRANSLATE_NOOP("EngineMessage", "the pretrained model %1 is not installed (package %2)"),
    QT_TRANSLATE_NOOP("EngineMessage", "the package %1 has no model/%2: reinstall it"),
    QT_TRANSLATE_NOOP("EngineMessage", "reading the model needs the safetensors package"),
    QT_TRANSLATE_NOOP("EngineMessage", "tokenizing for the model needs the tokenizers package"),
    QT_TRANSLATE_NOOP("EngineMessage", "%1 is damaged or not the expected file (sha256 %2, expected %3): "
                                       "reinstall with %4"),
    QT_TRANSLATE_NOOP("EngineMessage", "cannot read the tokenizer %1: %2"),
    QT_TRANSLATE_NOOP("EngineMessage", "cannot read the model in %1: %2"),
    QT_TRANSLATE_NOOP("EngineMessage", "%1 lacks %2"),
    # the most general last
    QT_TRANSLATE_NOOP("EngineMessage", "cannot write %1: %2"),
    QT_TRANSLATE_NOOP("EngineMessage", "cannot read %1: %2"),
    QT_TRANSLATE_NOOP("EngineMessage", "%1 is not a UTF-8 text file"),
    QT_TRANSLATE_NOOP("EngineMessage", "%1 is not a finite number"),
    QT_TRANSLATE_NOOP("EngineMessage", "%1 does not exist"),
)
_PLACEHOLDER = re.compile(r"%(\d+)")
_patterns: list[tuple[re.Pattern, str]] | None = None


def template_pattern(template: str) -> re.Pattern:
    """The regular expression a template's messages match: %N → any text, a repeated %N → the same."""
    parts, seen = [], set()
    for index, piece in enumerate(_PLACEHOLDER.split(template)):
        if index % 2 == 0:
            parts.append(re.escape(piece))
        elif piece in seen:
            parts.append(f"(?P=p{piece})")
        else:
            seen.add(piece)
            parts.append(f"(?P<p{piece}>.+?)")
    return re.compile("".join(parts), re.DOTALL)


def translate_engine_message(message: str) -> str:
    """``message`` in the interface language: a known engine message translated with its values
    kept (a value that is itself a known message is translated too), anything else unchanged."""
    global _patterns
    if _language == ENGLISH or not message:
        return message
    if _patterns is None:
        _patterns = [(template_pattern(t), t) for t in ENGINE_MESSAGES]
    for pattern, template in _patterns:
        match = pattern.fullmatch(message)
        if match is None:
            continue
        translated = translate("EngineMessage", template)
        if translated == template:
            return message
        values = {int(name[1:]): value for name, value in match.groupdict().items()}
        return fill(translated, *(translate_engine_message(values.get(i, "")) for i in range(1, max(values, default=0) + 1)))
    return message


def error_text(error) -> str:
    """What a failed job says to the user, in the interface language."""
    if isinstance(error, str):
        return translate_engine_message(error)
    message = str(error) or type(error).__name__
    if not isinstance(error, ValueError):
        message = f"{type(error).__name__}: {message}"
    return translate_engine_message(message)
