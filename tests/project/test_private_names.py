"""No module uses another module's ``_private`` names: parts of the window talk through the
controller and public attributes, so a module can change its insides without breaking another.

Checked with ast over app/, engine/ and cli/: ``from m import _name``, and an attribute access
``x._name`` where ``x`` is not ``self``, ``cls`` or ``super()``, unless a class of this module
declares the attribute ``_name`` (a method, a class attribute, or ``self._name = …``): a class's
own private names used by a sibling object of the same class, like ``other._undo`` in
Controller.adopt_history, stay inside the module. A module-level variable, a function or an
argument of the same spelling (a module's own ``_lock``) does not make another object's
``decoder._lock`` its own.
"""
from __future__ import annotations

import ast

from tests import ROOT

PACKAGES = ("app", "engine", "cli")

# (module path, name): each a private name of a library we do not own, with no public equivalent
ALLOWED = {
    # Python's own hook that runs before threads are joined at exit (engine/core/parallel.py says why)
    ("engine/core/parallel.py", "_register_atexit"),
    # gguf 0.19 exposes the block sizes of its quantisation types only through this table
    ("engine/models/gguf_file.py", "_type_traits"),
}


def private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def defined_here(tree: ast.AST) -> set[str]:
    """Private attributes the classes of this module declare: methods and class attributes in a
    class body, and ``self._name = …`` / ``cls._name = …`` assignments inside a class."""
    names = set()
    for cls in (node for node in ast.walk(tree) if isinstance(node, ast.ClassDef)):
        for item in cls.body:
            if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                names.add(item.name)
            elif isinstance(item, (ast.Assign, ast.AnnAssign)):
                targets = item.targets if isinstance(item, ast.Assign) else [item.target]
                names.update(target.id for target in targets if isinstance(target, ast.Name))
        for node in ast.walk(cls):
            if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store) and own_object(node.value):
                names.add(node.attr)
    return {name for name in names if private(name)}


def own_object(node: ast.expr) -> bool:
    if isinstance(node, ast.Name):
        return node.id in ("self", "cls")
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "super"


def uses_of_private_names(source: str) -> list[tuple[int, str]]:
    tree = ast.parse(source)
    here = defined_here(tree)
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            found += [(node.lineno, alias.name) for alias in node.names if private(alias.name)]
        elif isinstance(node, ast.Attribute) and private(node.attr) and not own_object(node.value) \
                and node.attr not in here:
            found.append((node.lineno, node.attr))
    return found


def test_the_checker_sees_both_kinds_and_spares_a_module_s_own_names():
    source = """
from engine.core.attention import _softmax_into
import app.window as w

class A:
    def __init__(self):
        self._mine = 1
    def adopt(self, other):
        return other._mine + self._x + super()._y + w._warn
"""
    assert uses_of_private_names(source) == [(2, "_softmax_into"), (9, "_warn")]


def test_a_module_s_own_variable_does_not_make_another_object_s_attribute_its_own():
    """A module with its own ``_lock`` and ``_last`` reaching into a model's lock and KV cache."""
    source = """
import threading
_lock = threading.Lock()
_last = {}

def unkept(decoder, _cache=None):
    with decoder._lock:
        cache = decoder._last
    return cache, _cache
"""
    assert uses_of_private_names(source) == [(7, "_lock"), (8, "_last")]


def test_no_module_uses_another_module_s_private_names():
    problems = []
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            relative = path.relative_to(ROOT).as_posix()
            for line, name in uses_of_private_names(path.read_text(encoding="utf-8")):
                if (relative, name) not in ALLOWED:
                    problems.append(f"{relative}:{line}: {name}")
    assert problems == [], "another module's private names:\n" + "\n".join(problems)
