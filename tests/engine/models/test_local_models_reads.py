"""The Local models scan on hostile caches: a snapshot's ``refs/main`` that is a device, a FIFO or a
huge sparse file, and home-relative locations (``~nosuchuser/…``) that name nobody's home. The scan
must end quickly in bounded memory and list what it can; nothing raises."""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests import ROOT
from engine.models.local_models import default_roots, scan
from tests.local_cache import hub_model

MEMORY_LIMIT = 2 << 30  # the child's address space: an unbounded read of /dev/zero or 4 GiB fails, not the machine


def hostile_ref(hub: Path, kind: str) -> Path:
    """A hub model whose refs/main is ``kind``; its one snapshot (the scan must still find it)."""
    snapshot = hub_model(hub, "tiny/bert", "bert", revision="0123abcd")
    ref = hub / "models--tiny--bert" / "refs" / "main"
    ref.unlink()
    if kind == "/dev/zero":
        os.symlink("/dev/zero", ref)
    elif kind == "fifo":
        os.mkfifo(ref)
    else:  # a 4 GiB sparse file: no disk used, a whole read would take 4 GiB of memory
        with open(ref, "wb") as stream:
            stream.truncate(4 << 30)
    return snapshot


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["/dev/zero", "fifo", "sparse 4 GiB"])
def test_a_hostile_refs_main_neither_hangs_nor_fills_memory(tmp_path, kind):
    hub = tmp_path / "hub"
    snapshot = hostile_ref(hub, kind)
    code = textwrap.dedent("""
        import resource, sys
        limit = int(sys.argv[2])
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
        from engine.models.local_models import scan
        found = scan([(sys.argv[1], "hub")])
        print(repr([str(model.path) for model in found]))
        status = open("/proc/self/status").read()  # VmHWM: this program's peak (ru_maxrss keeps the parent's)
        print(status.split("VmHWM:")[1].split()[0])
        """)
    done = subprocess.run([sys.executable, "-c", code, str(hub), str(MEMORY_LIMIT)], capture_output=True, text=True,
                          timeout=60, cwd=str(ROOT), env=dict(os.environ, PYTHONPATH=str(ROOT)))
    assert done.returncode == 0, done.stderr[-800:]
    paths, peak_kib = done.stdout.splitlines()
    assert paths == repr([str(snapshot)])  # the only revision, chosen without the ref
    assert int(peak_kib) < 300 * 1024  # KiB: the scan's own few MB beyond Python and NumPy


@pytest.mark.parametrize("variable", ["HF_HOME", "HF_HUB_CACHE"])
def test_a_home_of_nobody_is_a_folder_that_is_not_there(tmp_path, variable):
    """Path.expanduser raised RuntimeError("Could not determine home directory") for ~nosuchuser."""
    environ = {variable: "~nosuchuser-of-this-machine/x"}
    roots = default_roots(environ, tmp_path)
    assert [str(root) for root, _ in roots][0].startswith("~nosuchuser-of-this-machine/x")
    assert scan(roots + [(Path("~nosuchuser-of-this-machine/added"), "added")]) == []


def test_no_home_at_all(tmp_path, monkeypatch):
    """HOME unset and no password entry: the home-relative places are left out, the others stay."""
    monkeypatch.delenv("HOME", raising=False)
    monkeypatch.setattr("pwd.getpwuid", lambda uid: (_ for _ in ()).throw(KeyError(uid)))
    roots = default_roots({"HF_HUB_CACHE": str(tmp_path)})
    assert roots == [(tmp_path, "hub")]
