"""What the scripts that write reference fixtures with transformers share (run under /work/refvenv):
the fixture's "meta" entry (versions and settings, so a fixture says what made it) and the write."""
from __future__ import annotations

import json
import platform
from pathlib import Path

import numpy as np


def reference_meta(**fields) -> np.ndarray:
    """``fields`` (model, checksum, what was done) plus torch's, transformers', numpy's and Python's
    versions, eager attention and float32: one JSON string, as a 0-d array for np.savez."""
    import torch
    import transformers

    return np.array(json.dumps({**fields, "torch": torch.__version__, "transformers": transformers.__version__,
                                "numpy": np.__version__, "python": platform.python_version(),
                                "attn_implementation": "eager", "dtype": "float32"}))


def save_fixture(path: Path, arrays: dict) -> None:
    """np.savez_compressed into ``path`` (its folder made), and say how large it came out."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(path, **arrays)
    print(f"wrote {path} ({path.stat().st_size / 1e6:.2f} MB)")
