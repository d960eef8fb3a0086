"""Load custom projection matrices (W_Q, W_K, W_V, optionally W_O) for ``AttentionConfig.projections``.

Seed 001 computes its scores with matrices W_q, W_k, W_v drawn in figures; the toy engine's
random or identity weights cannot give them. A file supplies them:

- ``.json``: ``{"w_q": [[…], …], "w_k": …, "w_v": …, "w_o": … (optional)}`` (names in any case;
  keys starting with "_", e.g. "_comment", are notes and are skipped);
- ``.npz``: arrays named ``w_q``, ``w_k``, ``w_v`` (and optionally ``w_o``);
- ``.npy``: one array of shape (3, d, d) (W_Q, W_K, W_V) or (4, d, d) (… and W_O).

The matrices use the row-vector convention of the seeds, q = x · W_Q: row i of W_Q is what
input feature i adds to q. Shapes, numbers and bounds are checked by AttentionConfig (the same
rules as the embeddings table); this module only reads the file.
"""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from .config import PROJECTION_NAMES
from ..core.errors import EngineError

MAX_FILE_BYTES = 64 * 1024**2  # 4 matrices of 2048 × 2048 float32 fit


def load_projections(path: str | Path) -> dict:
    """The matrices in ``path`` as {"w_q": ndarray | list, …}, ready for ``AttentionConfig(projections=…)``."""
    path = Path(path)
    try:
        size = path.stat().st_size
    except OSError as error:
        raise EngineError("cannot read the projections file {path}: {reason}", field="projections",
                          path=str(path), reason=error.strerror or str(error)) from None
    if size > MAX_FILE_BYTES:
        raise EngineError("the projections file {path} is {size} bytes; at most {limit} are read",
                          field="projections", path=str(path), size=size, limit=MAX_FILE_BYTES)
    suffix = path.suffix.lower()
    try:
        if suffix == ".json":
            data = json.loads(path.read_text(encoding="utf-8"))
            if not isinstance(data, dict):
                raise EngineError('the projections file {path} must hold an object {{"w_q": …, "w_k": …, "w_v": …}}',
                                  field="projections", path=str(path))
            return {key: value for key, value in data.items() if not key.startswith("_")}
        if suffix == ".npz":
            with np.load(path, allow_pickle=False) as archive:
                return {name: archive[name] for name in archive.files}
        if suffix == ".npy":
            stack = np.load(path, allow_pickle=False)
            if stack.ndim != 3 or stack.shape[0] not in (3, 4):
                raise EngineError("the .npy projections file {path} must hold a (3, d, d) or (4, d, d) array; "
                                  "it holds {shape}", field="projections", path=str(path),
                                  shape=" × ".join(map(str, stack.shape)))
            return dict(zip(PROJECTION_NAMES, stack))
    except EngineError:
        raise
    except (OSError, ValueError, UnicodeDecodeError) as error:  # JSONDecodeError is a ValueError
        raise EngineError("cannot read the projections file {path}: {reason}", field="projections",
                          path=str(path), reason=str(error)) from None
    raise EngineError("the projections file {path} must end in .json, .npz or .npy", field="projections",
                      path=str(path))
