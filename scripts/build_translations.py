"""Update the Chinese translation source from the code, then build the catalogue the app loads.

    python scripts/build_translations.py          # lupdate app/ and figures/ → .ts, then lrelease .ts → .qm
    python scripts/build_translations.py --check  # change nothing; exit 1 if the .ts misses a string
                                                   # of the code, has an unfinished one, or the .qm is stale

The .ts (resources/i18n/attention_explorer_zh_CN.ts) is the source: translate the entries lupdate
marks type="unfinished" (Qt Linguist, or any editor), then run this again and commit both files.
Translations may also come as JSON lists of {"context", "source", "translation"} in
resources/i18n/zh_CN/*.json (one file a branch of work, so parallel work never conflicts in the .ts):
each run fills the .ts entries they name.
Strings are found by pyside6-lupdate in self.tr("..."), QCoreApplication.translate("Context", "...")
and QT_TRANSLATE_NOOP("Context", "...") calls — never inside f-strings, which it cannot read — and,
in context "EngineError", the template of every EngineError (or subclass) raised in engine/ and app/
(the engine cannot call Qt: :func:`engine_templates` reads them with ast and hands them to lupdate).
"""
from __future__ import annotations

import argparse
import ast
import json
import shutil
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FOLDER = ROOT / "resources" / "i18n"
LANGUAGE = "zh_CN"
TS = FOLDER / f"attention_explorer_{LANGUAGE}.ts"
QM = TS.with_suffix(".qm")


def tool(name: str) -> str:
    """The lupdate / lrelease executable that ships inside PySide6 (else the pyside6-… on PATH)."""
    try:
        import PySide6

        bundled = Path(PySide6.__file__).resolve().parent / name
        if bundled.exists():
            return str(bundled)
    except ImportError:  # pragma: no cover - PySide6 is a dependency
        pass
    found = shutil.which(f"pyside6-{name}") or shutil.which(name)
    if not found:
        raise SystemExit(f"{name} not found: install PySide6-Essentials")
    return found


def sources() -> list[str]:
    """Every Python file of the window and of its figures, relative to the repository (stable order)."""
    return sorted(str(path.relative_to(ROOT)) for folder in ("app", "figures") for path in (ROOT / folder).rglob("*.py"))


ERROR_CLASSES = {"EngineError", "ModelNotInstalled", "SessionError"}  # what carries a translatable template


def _literal_arguments(names: set[str], position: int) -> list[str]:
    """The literal string at ``position`` of every call of one of ``names`` in engine/ and app/ (sorted, unique)."""
    found = set()
    for path in sorted([*(ROOT / "engine").rglob("*.py"), *(ROOT / "app").rglob("*.py"), *(ROOT / "figures").rglob("*.py")]):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and len(node.args) > position \
                    and isinstance(node.args[position], ast.Constant) and isinstance(node.args[position].value, str) \
                    and getattr(node.func, "id", getattr(node.func, "attr", None)) in names:
                found.add(node.args[position].value)
    return sorted(found)


def engine_templates() -> list[str]:
    """The literal template of every ``EngineError(...)``-style call in engine/, app/ and figures/."""
    return _literal_arguments(ERROR_CLASSES, 0)


def model_titles() -> list[str]:
    """The title of every ``ModelEntry(name, title, …)`` of the registry (engine/models)."""
    return _literal_arguments({"ModelEntry"}, 1)


def update(ts: Path = TS) -> str:
    """Merge the code's strings into ``ts`` (kept translations stay, vanished ones go); lupdate's summary."""
    ts.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as folder:
        listing = Path(folder) / "engine_templates.py"  # what lupdate reads for context EngineError
        listing.write_text("".join(f'QT_TRANSLATE_NOOP("{context}", {json.dumps(t, ensure_ascii=False)})\n'
                                   for context, texts in (("EngineError", engine_templates()), ("Model", model_titles()))
                                   for t in texts), encoding="utf-8")
        done = subprocess.run(
            [tool("lupdate"), "-silent", "-no-obsolete", "-locations", "none", "-target-language", LANGUAGE,
             *sources(), str(listing), "-ts", str(ts)],
            cwd=ROOT, capture_output=True, text=True, check=True)
    return (done.stdout + done.stderr).strip()


PENDING = FOLDER / LANGUAGE  # resources/i18n/zh_CN/*.json


def apply_pending(ts: Path = TS, folder: Path = PENDING) -> int:
    """Fill the .ts entries named by the JSON files in ``folder``; how many entries changed."""
    wanted = {}
    for path in sorted(folder.glob("*.json")):
        for item in json.loads(path.read_text(encoding="utf-8")):
            wanted[(item["context"], item["source"])] = item["translation"]
    if not wanted:
        return 0
    tree = ET.parse(ts)
    changed = 0
    for context in tree.getroot().iter("context"):
        name = context.findtext("name")
        for message in context.iter("message"):
            text = wanted.get((name, message.findtext("source")))
            translation = message.find("translation")
            if text is None or translation.findall("numerusform"):
                continue
            if translation.text != text or translation.get("type") is not None:
                translation.text = text
                translation.attrib.pop("type", None)
                changed += 1
    if changed:
        tree.write(ts, encoding="utf-8", xml_declaration=True)
        text = ts.read_text(encoding="utf-8")
        if "<!DOCTYPE TS>" not in text:  # ElementTree drops the doctype lupdate writes
            text = text.replace("?>\n", "?>\n<!DOCTYPE TS>\n", 1)
        ts.write_text(text, encoding="utf-8")
    return changed


def release(ts: Path = TS, qm: Path = QM) -> None:
    """Compile ``ts`` into ``qm`` (unfinished entries are left out, so they show in English)."""
    subprocess.run([tool("lrelease"), "-silent", str(ts), "-qm", str(qm)], cwd=ROOT, check=True,
                   capture_output=True, text=True)


def messages(ts: Path = TS) -> list[dict]:
    """context, source, translation (the first plural form for %n messages), finished, for every entry."""
    out = []
    for context in ET.parse(ts).getroot().iter("context"):
        name = context.findtext("name")
        for message in context.iter("message"):
            translation = message.find("translation")
            forms = translation.findall("numerusform")
            text = forms[0].text if forms else translation.text
            out.append({"context": name, "source": message.findtext("source"), "translation": text or "",
                        "finished": translation.get("type") not in ("unfinished", "vanished", "obsolete")})
    return out


def check() -> list[str]:
    """Problems that would make the shipped catalogue differ from the code; [] when all is well."""
    problems = []
    with tempfile.TemporaryDirectory() as folder:
        fresh = Path(folder) / TS.name
        shutil.copyfile(TS, fresh)
        update(fresh)
        apply_pending(fresh)
        known = {(m["context"], m["source"]) for m in messages(TS)}
        for m in messages(fresh):
            if (m["context"], m["source"]) not in known:
                problems.append(f"not in the .ts yet: {m['context']}: {m['source']!r}")
        qm = Path(folder) / QM.name
        release(TS, qm)
        if not QM.exists() or QM.read_bytes() != qm.read_bytes():
            problems.append(f"{QM.relative_to(ROOT)} is not built from the current .ts")
    problems += [f"unfinished: {m['context']}: {m['source']!r}" for m in messages(TS) if not m["finished"]]
    return problems


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="report problems, change nothing")
    arguments = parser.parse_args(argv)
    if arguments.check:
        problems = check()
        for problem in problems:
            print(problem)
        return 1 if problems else 0
    update()
    apply_pending()
    release()
    entries = messages()
    unfinished = [m for m in entries if not m["finished"]]
    print(f"{TS.relative_to(ROOT)}: {len(entries)} messages, {len(entries) - len(unfinished)} translated, "
          f"{len(unfinished)} unfinished; built {QM.relative_to(ROOT)}")
    for m in unfinished:
        print(f"  unfinished: {m['context']}: {m['source']!r}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
