"""A Hugging Face hub cache and an LM Studio folder laid out on disk the way those tools lay them
out, with the family fixtures as models: for tests/engine/models/test_local_models.py and the screenshot script."""
from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from tests import FIXTURES

FIXTURES = FIXTURES / "families"


def hub_model(hub: Path, repo: str, family: str, revision: str = "0123abcd") -> Path:
    """models--owner--name/{blobs, refs/main, snapshots/<revision>/file → ../../blobs/<hash>}."""
    base = hub / ("models--" + repo.replace("/", "--"))
    (base / "blobs").mkdir(parents=True, exist_ok=True)
    (base / "refs").mkdir(exist_ok=True)
    (base / "refs" / "main").write_text(revision)
    snapshot = base / "snapshots" / revision
    snapshot.mkdir(parents=True, exist_ok=True)
    for index, file in enumerate(sorted((FIXTURES / family).iterdir())):
        blob = base / "blobs" / f"{index:040x}"
        shutil.copy(file, blob)
        os.symlink(os.path.relpath(blob, snapshot), snapshot / file.name)
    return snapshot


def lay_out(home: Path) -> dict:
    """~/.cache/huggingface/hub with gpt2, bert, qwen3, a pickle-only and an unknown model, a symlink
    loop; ~/.lmstudio/models/owner/repo/*.gguf; a folder the user added. Returns the paths."""
    hub = home / ".cache" / "huggingface" / "hub"
    paths = {
        "gpt2": hub_model(hub, "tiny/gpt2", "gpt2"),
        "bert": hub_model(hub, "tiny/bert", "bert"),
        "qwen3": hub_model(hub, "Qwen/tiny-qwen3", "qwen3"),
    }
    old = hub_model(hub, "tiny/llama", "llama", revision="old")
    paths["llama"] = hub_model(hub, "tiny/llama", "llama", revision="ffff0000")  # refs/main: the newer one
    paths["llama-old"] = old
    pickle = hub / "models--someone--pickled" / "snapshots" / "1"
    pickle.mkdir(parents=True)
    shutil.copy(FIXTURES / "bert" / "config.json", pickle / "config.json")
    (pickle / "pytorch_model.bin").write_bytes(b"\x80\x04")
    paths["pickled"] = pickle
    mamba = hub_model(hub, "state-spaces/mamba-tiny", "llama")
    config = json.loads((FIXTURES / "llama" / "config.json").read_text())
    config.update(model_type="mamba", architectures=["MambaForCausalLM"])
    (mamba / "config.json").unlink()
    (mamba / "config.json").write_text(json.dumps(config))
    paths["mamba"] = mamba
    studio = home / ".lmstudio" / "models" / "someone" / "tiny-GGUF"
    studio.mkdir(parents=True)
    for family in ("qwen2", "gpt2"):
        shutil.copy(FIXTURES / f"{family}.gguf", studio / f"tiny-{family}-F32.gguf")
    paths["studio"] = studio
    loop = home / ".lmstudio" / "models" / "loop"
    loop.mkdir()
    os.symlink("..", loop / "back")  # a symlink loop: walked once
    os.symlink(loop, loop / "self")
    added = home / "my-models" / "xlmr"
    shutil.copytree(FIXTURES / "xlm-roberta", added)
    paths["added"] = home / "my-models"
    return paths
