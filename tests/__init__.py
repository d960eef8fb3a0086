"""The test suite, laid out like the code it tests: engine/, app/, cli/, figures/, and project/ for
what spans the tree (import rules, packaging, the documents). A package, so that every test module
has one name (``tests.engine.core.test_hooks``) and shares the helpers beside this file.

ROOT is the repository; FIXTURES the reference files the scripts in scripts/ wrote."""
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "tests" / "fixtures"
