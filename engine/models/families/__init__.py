"""The model families the app runs, one module each (bert.py, roberta.py, gpt2.py, llama.py, mistral.py,
qwen2.py, qwen3.py, phi3.py, gemma2.py, gemma3.py, olmo2.py). A family module says:

    NAME, TITLE, KIND           "mistral", "Mistral", "decoder" (or "encoder")
    MODEL_TYPES                 config.json's model_type values it reads ("xlm-roberta" is roberta's)
    GGUF_ARCHITECTURES          general.architecture values of its GGUF files (may be empty)
    TOKENIZER                   what its tokenizer is and adds (shown in the docs, not computed)
    config(info)                config.json → the block's config (engine.models.llama.DecoderConfig or
                                engine.models.bert.BertConfig), every key that changes the computation
                                read, every value the block cannot compute refused naming the key
    table(info, names)          our tensor name → (the folder's name, transpose?): its HF weight-name table
    shapes(info)                extra expected shapes of our names (fused tensors), optional
    prepare(tensors, config, source)  fused splits and stored-form fixes before the block reads the
                                tensors ("hf" or "gguf"), optional
    gguf_config(reader, config) the GGUF metadata's block features on top of the common numbers, optional

This file finds them (every module of the package but the shared ones: common.py, rotary.py and
loading.py) and answers which family
a model_type or a GGUF architecture is; every list of supported families the user reads is made
here (:func:`folder_families`, :func:`gguf_architectures`). Adding a family touches: its module here;
scripts/make_family_fixtures.py (its transformers config, and its GGUF tensors if llama.cpp writes it);
the fixtures it writes (tests/fixtures/families/<name>/, <name>_reference.npz, <name>.gguf);
tests/engine/models/test_families.py (FAMILIES, GGUF_FAMILIES, DECODERS, a refusal per new config key); and, for a new
block feature, engine/models/llama.py's DecoderConfig flag beside its reference in reference_block.
"""
from __future__ import annotations

import functools
import importlib
import pkgutil
from types import ModuleType

SHARED = ("common", "rotary", "loading")  # what the families share, not families


@functools.lru_cache(maxsize=1)
def registry() -> dict[str, ModuleType]:
    """Family name → its module, in the order the modules' ORDER numbers give (the menus' order)."""
    found = []
    for module in pkgutil.iter_modules(__path__):
        if module.name in SHARED:
            continue
        family = importlib.import_module(f"{__name__}.{module.name}")
        found.append(family)
    found.sort(key=lambda family: (family.ORDER, family.NAME))
    return {family.NAME: family for family in found}


def family(name: str) -> ModuleType:
    return registry()[name]


def by_model_type() -> dict[str, str]:
    """config.json's model_type → family name."""
    return {model_type: module.NAME for module in registry().values() for model_type in module.MODEL_TYPES}


def by_gguf_architecture() -> dict[str, str]:
    """GGUF general.architecture → family name (llama.cpp writes Mistral as "llama": the llama family's)."""
    return {arch: module.NAME for module in registry().values() for arch in module.GGUF_ARCHITECTURES}


def encoder_families() -> frozenset[str]:
    return frozenset(name for name, module in registry().items() if module.KIND == "encoder")


def folder_families() -> str:
    """"bert, roberta, gpt2, …": the families a Hugging Face folder may be of, for messages and menus."""
    return ", ".join(registry())


def gguf_architectures() -> str:
    """"gpt2, llama, …": the GGUF architectures the app opens."""
    return ", ".join(by_gguf_architecture())


def prepare_tensors(tensors, config, family_name: str, source: str):
    """The family's fused splits and stored-form fixes (``source`` "hf" or "gguf"), or the tensors as
    they are: the one step both file readers hand their tensors through."""
    prepare = getattr(family(family_name), "prepare", None)
    result = prepare(tensors, config, source) if prepare is not None else None
    return tensors if result is None else result
