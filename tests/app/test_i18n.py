"""The Chinese interface: the catalogue is complete and built, the window shows no English source string
once switched to Chinese, engine messages are translated with their values, the language follows the
stored choice or the system locale."""
from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from scripts.build_translations import messages as catalogue_entries
from tests import ROOT

TS = ROOT / "resources" / "i18n" / "attention_explorer_zh_CN.ts"
QM = TS.with_suffix(".qm")
LETTERS = re.compile(r"[A-Za-z]{2,}")  # an English word: what an untranslated string shows


def ts_messages() -> list[tuple[str, str, str, bool]]:
    """(context, source, translation, finished) of every .ts entry (first plural form), as the build
    script reads them (finished: no type; Qt's .ts allows only unfinished, vanished, obsolete)."""
    return [(m["context"], m["source"], m["translation"], m["finished"]) for m in catalogue_entries(TS)]


def placeholders(text: str) -> list[str]:
    """%N / %n of Qt strings and {name…} fields of engine templates."""
    return sorted(set(re.findall(r"%(?:\d+|n)|\{[^{}]*\}", text)))


# ---------------------------------------------------------------------------- the catalogue
def test_every_message_is_translated_with_its_placeholders():
    messages = ts_messages()
    assert len(messages) > 400
    unfinished = [(c, s) for c, s, t, done in messages if not done or not t.strip()]
    assert not unfinished, f"untranslated in the .ts: {unfinished[:5]}"
    broken = [(c, s, t) for c, s, t, _ in messages if placeholders(s) != placeholders(t)]
    assert not broken, f"placeholders lost: {broken[:5]}"
    # the Chinese has Chinese in it: at most formula-only entries stay as they are
    same = [s for _, s, t, _ in messages if s == t and LETTERS.search(re.sub(r"%\d|[A-Za-z]_\w+|d_model|d_k", "", s))]
    assert set(same) <= {"RoPE", "cos x", "exp", "softmax(8, 5, 7)", "Top-k", "Top-p", "Σ_c q_i[c] × k_j[c]", "JSON (*.json)",
                         "SoftMax", "PCA", "t-SNE"}, same  # SoftMax: a box of the paper's diagram, named as the
    # paper names it; PCA and t-SNE: the methods' names, written so in Chinese texts too


def test_qm_is_built_from_the_ts(tmp_path):
    from scripts.build_translations import release

    fresh = tmp_path / QM.name
    release(TS, fresh)
    assert QM.read_bytes() == fresh.read_bytes(), "run: python scripts/build_translations.py"


def _translatable_strings(path: Path) -> set[tuple[str, str]]:
    """(context, source) of every self.tr("…") (context: the enclosing class) and every
    translate("Context", "…") / QT_TRANSLATE_NOOP("Context", "…") call with literal text."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = set()

    def visit(node, cls):
        for child in ast.iter_child_nodes(node):
            inner = child.name if isinstance(child, ast.ClassDef) else cls
            if isinstance(child, ast.Call):
                name = getattr(child.func, "attr", getattr(child.func, "id", ""))
                args = child.args
                if name == "tr" and args and isinstance(args[0], ast.Constant) and cls:
                    found.add((cls, args[0].value))
                elif name in ("translate", "QT_TRANSLATE_NOOP") and len(args) >= 2 and all(
                        isinstance(a, ast.Constant) and isinstance(a.value, str) for a in args[:2]):
                    found.add((args[0].value, args[1].value))
                elif name == "tr" and args and not isinstance(args[0], ast.Constant):
                    found.add(("<not a literal>", ast.unparse(child)))
            visit(child, inner)

    visit(tree, None)
    return found


@pytest.mark.slow
def test_every_string_of_the_code_is_in_the_ts():
    """lupdate cannot read tr() inside f-strings or non-literal texts: this catches both, and strings
    added since the .ts was last updated."""
    known = {(c, s) for c, s, _, _ in ts_messages()}
    from scripts.build_translations import engine_templates

    code = set().union(*(_translatable_strings(p) for folder in ("app", "figures")
                         for p in sorted((ROOT / folder).rglob("*.py"))))
    assert len(code) > 400
    templates = engine_templates()
    assert len(templates) > 60 and "seed must be between 0 and {maximum}; got {seed}" in templates
    code |= {("EngineError", t) for t in templates}
    missing = sorted(code - known)
    assert not missing, f"not in the .ts (run scripts/build_translations.py and translate): {missing[:8]}"


# ---------------------------------------------------------------------------- the window in Chinese
def _untranslated_matchers():
    """Exact English sources and %N templates whose Chinese differs, as one predicate."""
    exact, patterns = set(), []
    for _, source, translation, _ in ts_messages():
        if translation == source or not LETTERS.search(re.sub(r"%(\d+|n)", "", source)):
            continue  # formulas and symbols are the same in both languages
        if placeholders(source):
            patterns.append(template_pattern(source.replace("%n", "%99")))
        else:
            exact.add(source)

    def untranslated(text: str) -> bool:
        return text in exact or any(p.fullmatch(text) for p in patterns)

    return untranslated


def template_pattern(template: str) -> re.Pattern:
    """The regular expression a Qt template's texts match: %N → any text, a repeated %N → the same."""
    parts, seen = [], set()
    for index, piece in enumerate(re.split(r"%(\d+)", template)):
        if index % 2 == 0:
            parts.append(re.escape(piece))
        elif piece in seen:
            parts.append(f"(?P=p{piece})")
        else:
            seen.add(piece)
            parts.append(f"(?P<p{piece}>.+?)")
    return re.compile("".join(parts), re.DOTALL)


def _pieces(text: str) -> list[str]:
    """The text and its parts between HTML tags, entities and line breaks."""
    if not text:
        return []
    parts = re.split(r"<[^>]*>|&nbsp;|\n", text)
    return [text] + [p.strip() for p in parts if p.strip() and p.strip() != text]


def visible_strings(window) -> list[tuple[str, str]]:
    """(where, text) for every string the window can show: widgets, tooltips, menus, tables,
    combo items, tab texts, dock titles and pyqtgraph titles, axis labels and legends."""
    import pyqtgraph as pg
    from PySide6.QtWidgets import (
        QAbstractButton, QComboBox, QDockWidget, QGroupBox, QLabel, QLineEdit, QListWidget, QMenu,
        QPlainTextEdit, QTabBar, QTableWidget, QTextEdit, QWidget,
    )

    found: list[tuple[str, str]] = [("window title", window.windowTitle())]

    def add(where, text):
        found.extend((where, piece) for piece in _pieces(text or ""))

    def walk_menu(menu: QMenu, path: str):
        for action in menu.actions():
            add(f"{path} > action", action.text())
            add(f"{path} > action tip", action.statusTip())
            if action.menu() is not None:
                walk_menu(action.menu(), f"{path} > {action.text()}")

    for action in window.menuBar().actions():
        add("menu", action.text())
        if action.menu() is not None:
            walk_menu(action.menu(), action.text())
    widgets = [window] + window.findChildren(QWidget)
    for widget in widgets:
        name = f"{type(widget).__name__} {widget.objectName()}"
        add(f"{name} tooltip", widget.toolTip())
        add(f"{name} status tip", widget.statusTip())
        for action in widget.actions():
            add(f"{name} action", action.text())
            add(f"{name} action tip", action.toolTip())
        if isinstance(widget, (QLabel, QAbstractButton)):
            add(name, widget.text())
        if isinstance(widget, QGroupBox):
            add(name, widget.title())
        if isinstance(widget, QDockWidget):
            add(name, widget.windowTitle())
        if isinstance(widget, (QLineEdit, QPlainTextEdit)):
            add(f"{name} placeholder", widget.placeholderText())
        if isinstance(widget, QTextEdit):
            add(name, widget.toPlainText())
        if isinstance(widget, QComboBox):
            for i in range(widget.count()):
                add(f"{name} item", widget.itemText(i))
        if isinstance(widget, QTabBar):
            for i in range(widget.count()):
                add(f"{name} tab", widget.tabText(i))
                add(f"{name} tab tip", widget.tabToolTip(i))
        if isinstance(widget, QListWidget):
            for i in range(widget.count()):
                add(f"{name} item", widget.item(i).text())
                add(f"{name} item tip", widget.item(i).toolTip())
        if isinstance(widget, QTableWidget):
            for header in (widget.horizontalHeaderItem, widget.verticalHeaderItem):
                for i in range(widget.columnCount() if header == widget.horizontalHeaderItem else widget.rowCount()):
                    item = header(i)
                    if item is not None:
                        add(f"{name} header", item.text())
                        add(f"{name} header tip", item.toolTip())
            for r in range(widget.rowCount()):
                for c in range(widget.columnCount()):
                    item = widget.item(r, c)
                    if item is not None:
                        add(f"{name} cell", item.text())
                        add(f"{name} cell tip", item.toolTip())
        if isinstance(widget, pg.GraphicsView):
            for item in widget.scene().items():
                if isinstance(item, pg.LabelItem):
                    add(f"{name} label", item.text)
                elif isinstance(item, pg.AxisItem):
                    add(f"{name} axis", item.labelText)
                elif isinstance(item, pg.TextItem):
                    add(f"{name} text", item.textItem.toPlainText())
    return found


@pytest.fixture
def chinese_window(window, qtbot):
    """The fixture's window switched to Chinese (a new window); English again afterwards."""
    from PySide6.QtWidgets import QApplication

    import app.i18n as i18n

    window.controller.select(head=1, focus=2, stage="scaled")
    chinese = window.switch_language(i18n.CHINESE)
    try:
        assert chinese is not window and not window.isVisible()
        assert chinese.wait_until_idle(30)
        yield chinese
    finally:
        chinese.close()
        i18n.install_translator(QApplication.instance(), i18n.ENGLISH)
        assert not chinese.controller.worker.is_alive()


def _show_every_dock(window, qtbot) -> None:
    for key, dock in window.docks.items():
        window.panel(key)
        dock.show()
        dock.raise_()
        assert window.wait_until_idle(30)
        panel = window.panel(key)
        if hasattr(panel, "is_idle"):
            qtbot.waitUntil(lambda: bool(panel.is_idle()), timeout=30000)
    assert window.wait_until_idle(30)


@pytest.mark.slow
def test_the_chinese_window_shows_no_english_source_string(chinese_window, qtbot):
    from app.i18n import active_language, install_language_menu

    assert active_language() == "zh_CN"
    window = chinese_window
    install_language_menu(window, window.view_menu)  # also when the window does not add it itself
    window.resize(1500, 950)
    _show_every_dock(window, qtbot)
    strings = visible_strings(window)
    assert len(strings) > 300
    untranslated = _untranslated_matchers()
    left = sorted({(where, text) for where, text in strings if untranslated(text)})
    assert not left, "\n".join(f"{where}: {text!r}" for where, text in left[:20])
    texts = {text for _, text in strings}
    for expected in ("文件(&F)", "注意力热力图", "分词器", "自动", "查询词元", "逐步演示", "语言 (Language)"):
        assert expected in texts, expected


@pytest.mark.slow
def test_switching_keeps_settings_selection_and_layout(chinese_window):
    window = chinese_window
    c = window.controller
    assert (c.head, c.focus, c.stage) == (1, 2, "scaled")
    assert window.docks["input"].windowTitle() == "输入"
    assert window.panels["attention"].stage.currentText() == "缩放后分数（÷√d_k，掩码）"
    from PySide6.QtCore import QSettings

    assert QSettings("AttentionExplorer", "AttentionExplorer").value("language") == "zh_CN"


@pytest.mark.slow
def test_switching_keeps_sentence_b_and_the_model(window, qtbot):
    """Typed work survives a language switch: the comparison's sentence B, MiniLM and its layer."""
    from PySide6.QtWidgets import QApplication

    import app.i18n as i18n

    window.panels["compare"].build().text_b.setText("苹果发布了新手机")
    window.controller.model, window.controller.layer = "minilm", 2  # as if chosen in the toolbar
    window.controller.select(head=1, focus=2, stage="scores")
    chinese = window.switch_language(i18n.CHINESE)
    try:
        assert chinese is not window
        assert chinese.panels["compare"].build().text_b.text() == "苹果发布了新手机"
        assert (chinese.controller.model, chinese.controller.layer) == ("minilm", 2)
        assert chinese.controller.view_state() == window.controller.view_state()
        assert chinese.layer_spin.value() == 2 and chinese.model_combo.currentData() == "minilm"
        assert chinese.wait_until_idle(60)
    finally:
        chinese.close()
        i18n.install_translator(QApplication.instance(), i18n.ENGLISH)


@pytest.mark.slow
def test_language_menu_switches_back_to_english(window, qtbot):
    from PySide6.QtWidgets import QApplication

    import app.i18n as i18n

    menu = i18n.install_language_menu(window, window.view_menu)
    assert i18n.install_language_menu(window, window.view_menu) is menu  # once per menu
    actions = {a.data(): a for a in menu.actions()}
    assert list(actions) == ["system", "en", "zh_CN"]
    assert all(a.isCheckable() for a in actions.values()) and actions["system"].isChecked()
    try:
        actions["zh_CN"].trigger()
        qtbot.waitUntil(lambda: getattr(window, "successor", None) is not None, timeout=10000)
        chinese = window.successor
        assert chinese.wait_until_idle(30)
        assert chinese.menuBar().actions()[0].text() == "文件(&F)"
        chinese_menu = chinese.view_menu.findChild(type(menu), i18n.MENU_OBJECT_NAME) or \
            i18n.install_language_menu(chinese, chinese.view_menu)
        assert {a.data(): a.isChecked() for a in chinese_menu.actions()}["zh_CN"]
        english = chinese.switch_language(i18n.ENGLISH)
        assert english is not chinese and english.wait_until_idle(30)
        assert english.menuBar().actions()[0].text() == "&File"
        assert english.panels["input"].tokenizer.itemText(0) == "auto"
        assert english.switch_language(i18n.ENGLISH) is english  # nothing to rebuild
    finally:
        for w in QApplication.topLevelWidgets():
            if w is not window and type(w).__name__ == "MainWindow":
                w.close()
        i18n.install_translator(QApplication.instance(), i18n.ENGLISH)


# ---------------------------------------------------------------------------- choosing the language
def test_language_follows_the_stored_choice_then_the_system(qapp, monkeypatch):
    from PySide6.QtCore import QSettings

    import app.i18n as i18n

    settings = QSettings("AttentionExplorer", "AttentionExplorer")
    try:
        monkeypatch.setattr(i18n, "system_locale_name", lambda: "zh-Hans-CN")
        assert i18n.install_translator(qapp) == "zh_CN"  # nothing stored: the system's
        assert qapp.translate("MainWindow", "&File") == "文件(&F)"
        monkeypatch.setattr(i18n, "system_locale_name", lambda: "en-US")
        assert i18n.install_translator(qapp) == "en"
        assert qapp.translate("MainWindow", "&File") == "&File"
        settings.setValue("language", "zh_CN")
        assert i18n.install_translator(qapp) == "zh_CN"  # the stored choice wins
        settings.setValue("language", "system")
        assert i18n.install_translator(qapp) == "en"
        assert i18n.resolve("zh") == "zh_CN" and i18n.resolve("en_GB") == "en"
    finally:
        i18n.install_translator(qapp, "en")


# ---------------------------------------------------------------------------- engine messages
def engine_errors() -> list:
    """Real errors (exception objects) of the engine's and the session reader's checks."""
    from engine import AttentionConfig, EngineError
    from engine.analysis.explain import explain
    from engine.analysis.inspect import inspect_cell
    from engine.toy.labs import shuffle_test

    from app.session import SessionError, parse_session

    messages = []
    for call in (
        lambda: AttentionConfig(text=""),
        lambda: AttentionConfig(text="   "),
        lambda: AttentionConfig(d_model=10, heads=4),
        lambda: AttentionConfig(d_model=12, heads=4, positional="rope"),
        lambda: AttentionConfig(heads=0),
        lambda: AttentionConfig(d_model=100000),
        lambda: AttentionConfig(heads=2.5),
        lambda: AttentionConfig(mask="future"),
        lambda: AttentionConfig(seed=-1),
        lambda: AttentionConfig(temperature=-1),
        lambda: AttentionConfig(temperature=1e-9),
        lambda: AttentionConfig(temperature="x"),
        lambda: AttentionConfig(scale="yes"),
        lambda: AttentionConfig(embeddings={"小明": [1, 0]}, d_model=4, heads=1),
        lambda: AttentionConfig(embeddings={"小明": ["a"]}, d_model=1, heads=1),
        lambda: AttentionConfig(embeddings={"小明": [float("inf")]}, d_model=1, heads=1),
        lambda: AttentionConfig(embeddings={"小明": [1e9]}, d_model=1, heads=1),
        lambda: AttentionConfig(embeddings={"小明": []}, d_model=1, heads=1),
        lambda: AttentionConfig(embeddings=[1, 2]),
        lambda: AttentionConfig.from_dict({"colour": 1}),
        lambda: __import__("engine").compute(AttentionConfig(text="\u200b\u200b")),
        lambda: __import__("engine").compute(AttentionConfig(text="a " * 3000, d_model=512, heads=512,
                                                              memory_budget=10**6)),
        lambda: explain(__import__("engine").compute(AttentionConfig(text="a b", d_model=4, heads=2)), 5, 0),
        lambda: explain(__import__("engine").compute(AttentionConfig(text="a b", d_model=4, heads=2)), 0, 9),
        lambda: inspect_cell(__import__("engine").compute(AttentionConfig(text="a b", d_model=4, heads=2)), 0, 0, 7),
        lambda: shuffle_test(AttentionConfig(text="a b c", d_model=4, heads=2), [0, 0, 1]),
        lambda: parse_session("{"),
        lambda: parse_session('{"format": "attention-explorer-session", "version": 9}'),
        lambda: parse_session('{"format": "attention-explorer-session", "version": 1, '
                              '"config": {"d_model": 10, "heads": 4}}'),
    ):
        try:
            call()
        except (EngineError, SessionError) as error:
            messages.append(error)
        else:  # pragma: no cover - the check above did not raise: the test needs updating
            raise AssertionError("expected an error")
    return messages


def test_engine_messages_are_translated_with_their_values(qapp):
    import app.i18n as i18n

    errors = engine_errors()
    assert all(i18n.error_text(e) == str(e) for e in errors)  # English: the engine's own text
    i18n.install_translator(qapp, "zh_CN")
    try:
        for error in errors:
            message, translated = str(error), i18n.error_text(error)
            assert translated != message, f"no Chinese for {message!r}"
            assert re.search(r"[\u4e00-\u9fff]", translated), translated
            for number in re.findall(r"\d+(?:\.\d+)?", message):
                assert number in translated, (message, translated)
        assert i18n.error_text(ValueError("something else entirely")) == "something else entirely"
        nested = next(e for e in errors if "settings are invalid" in str(e))
        assert i18n.error_text(nested) == "会话中的设置无效：d_model（10）必须能被头数 heads（4）整除；可以试试这些头数：[1, 2, 5, 10]"
    finally:
        i18n.install_translator(qapp, "en")


@pytest.mark.slow
def test_every_engine_template_has_a_chinese_translation_with_its_fields(qapp):
    """Each template raised in engine/ or app/ translates (context EngineError) and fills from the same values."""
    import string

    from app import i18n
    from scripts.build_translations import engine_templates

    def names(text):
        return sorted({f for _, f, _, _ in string.Formatter().parse(text) if f is not None})

    i18n.install_translator(qapp, "zh_CN")
    try:
        for template in engine_templates():
            translated = i18n.translate("EngineError", template)
            assert translated != template and re.search(r"[\u4e00-\u9fff]", translated), template
            assert names(translated) == names(template), (template, translated)
    finally:
        i18n.install_translator(qapp, "en")


@pytest.mark.slow
def test_app_never_parses_an_engine_message():
    """app/ tells errors apart by their class and field: no text of an engine template is compared,
    searched or matched there, nothing looks for "pip install", no `in str(error)`."""
    import ast

    from scripts.build_translations import engine_templates

    templates = engine_templates()
    matchers = {"startswith", "endswith", "search", "match", "fullmatch", "findall", "sub", "split", "find", "index"}
    for path in sorted((ROOT / "app").rglob("*.py")):
        source = path.read_text(encoding="utf-8")
        assert not re.search(r"\bin\s+str\(", source), path
        assert "pip install" not in source or path.name == "cli.py", path  # the CLI's own setup hints
        probes = []
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, ast.Compare):
                probes += [node.left, *node.comparators]
            elif isinstance(node, ast.Call) and getattr(node.func, "attr", None) in matchers:
                probes += node.args
        for probe in probes:
            if isinstance(probe, ast.Constant) and isinstance(probe.value, str) and " " in probe.value.strip():
                hits = [t for t in templates if probe.value in t]
                assert not hits, f"{path.name} matches engine text {probe.value!r} (from {hits[0]!r})"
