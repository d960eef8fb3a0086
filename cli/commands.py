"""Command line of Attention Explorer (see docs/FORMAT.md).

    ./run                                           # the window
    ./run --session my.json                         # the window, opening a saved session
    ./run export --text "小明 喜欢 苹果" --out trace.npz   # .npz .json .csv (.png .svg)
    ./run export --help                             # every option
    ./run patch --model minilm --clean TEXT --corrupt TEXT --out grids.npz   # activation patching
    ./run patch --help                              # every patching option
    ./run corpus --model minilm --texts sentences.txt --out heads   # heads over a corpus
    ./run corpus --help                             # every corpus option

Every failure of ``export`` exits with code 2 and exactly one ``error: …`` line on stderr (bad
input, a missing package, a full disk, even a bug); SIGINT, SIGTERM and SIGHUP exit with 128 +
the signal's number. No file is left behind on error or interruption: every output goes through
engine/core/safe_io.py's atomic writer. Only the standard library loads at start: the engine (NumPy)
when exporting, Qt only for the window or images.
Without a display (Linux, no DISPLAY or WAYLAND_DISPLAY) the window is refused in one line
instead of Qt's abort; ``export`` needs none.
"""
from __future__ import annotations

import argparse
import errno
import os
import signal
import sys
from pathlib import Path

from .options import add_window_options, parse_ablate, starts_window

IMAGE_SUFFIXES = (".png", ".svg")
DEFAULT_WIDTH = 1200


class UsageError(Exception):
    """Bad input on the command line: exit code 2."""


class SetupError(Exception):
    """A missing part of the installation: exit code 2, the message says what to install."""


class Interrupted(KeyboardInterrupt):
    """SIGTERM or SIGHUP, raised like SIGINT's KeyboardInterrupt so that every cleanup runs."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


def top_parser() -> argparse.ArgumentParser:
    """``./run --help``: the window's options and the commands (``export``, ``patch``, ``corpus``)."""
    parser = argparse.ArgumentParser(
        prog="./run", add_help=False,
        usage="./run [--session FILE] [--text TEXT]\n       ./run export --text TEXT --out FILE [options]"
              "\n       ./run patch --model MODEL --clean TEXT --corrupt TEXT --out FILE [options]"
              "\n       ./run corpus --model MODEL --texts FILE --out FOLDER [options]",
        description="Attention Explorer: watch self-attention work. Without a command it opens the window "
                    "(a display is needed); `export` writes a trace or a picture, `patch` the activation-patching "
                    "grids of a pretrained model, `corpus` what each head does over a file of texts (no display "
                    "needed).",
        epilog="examples:\n" + "\n".join("  " + line.strip() for line in __doc__.split("\n\n")[1].splitlines())
               + "\n\n`./run export --help`, `./run patch --help` and `./run corpus --help` list every option.",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    add_window_options(parser)
    parser.add_argument("-h", "--help", action="store_true", help="show this message and exit")
    return parser


def missing_display() -> bool:
    """True where Qt would abort for want of a screen: Linux with neither an X11 nor a Wayland
    display, and no headless platform (offscreen, minimal, vnc …) chosen."""
    if not sys.platform.startswith("linux"):
        return False
    if os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"):
        return False
    platform = os.environ.get("QT_QPA_PLATFORM", "")
    return not platform or platform.split(":")[0] in ("xcb", "wayland")


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # argparse would print usage lines and exit by itself
        raise UsageError(message)

    def _get_values(self, action, arg_strings):
        # argparse (before 3.13) drops a "--" value even when glued to its option (--text=--),
        # leaving [] where a string belongs; a value given as --opt=-- is a value, not a marker.
        if action.nargs is None and arg_strings == ["--"]:
            return self._get_value(action, "--")
        return super()._get_values(action, arg_strings)


def _model_name(value: str) -> str:
    """``--model``: a registry name, a .gguf file or a Hugging Face model folder (registered under its path)."""
    from engine.core.errors import EngineError
    from engine.models import MODELS, model_info, register_folder, register_gguf

    if value in MODELS:
        return value
    if value.startswith(("gguf:", "hf:")):  # a session's saved name
        try:
            return model_info(value).name
        except EngineError as error:
            raise argparse.ArgumentTypeError(str(error)) from None
    if os.path.isdir(os.path.expanduser(value)) and not value.lower().endswith(".gguf"):  # a .gguf folder: named so below
        try:
            return register_folder(value)
        except EngineError as error:
            raise argparse.ArgumentTypeError(str(error)) from None
    if value.lower().endswith(".gguf"):
        from engine.core.safe_io import check_model_path

        try:  # ~ expanded as the window does; a symlink loop, a folder, a FIFO … named for what they are
            path, _ = check_model_path(value)
        except EngineError as error:  # argparse would replace a ValueError's message by its own
            raise argparse.ArgumentTypeError(str(error)) from None
        return register_gguf(path)
    raise argparse.ArgumentTypeError(f"invalid choice: {value!r} (choose from {', '.join(MODELS)}, a .gguf file "
                                     "or a Hugging Face model folder)")


def build_parser() -> argparse.ArgumentParser:
    """The ``export`` command's options (choices come from the engine's config and model registry)."""
    from engine.toy.config import MASKS, POSITIONALS, TOKENIZERS, WEIGHTS
    from engine.models import DEFAULT_MODEL, MODELS
    from engine.toy.trace import STAGES

    parser = _Parser(prog="main.py export", allow_abbrev=False,
                     description="Compute one self-attention trace and write it to a file.")
    add = parser.add_argument
    add("--text", required=True, help="the sentence to attend over")
    add("--model", type=_model_name, default=DEFAULT_MODEL, metavar="{" + ",".join(MODELS) + "}|FILE.gguf|FOLDER",
        help="; ".join(f"{e.name}: {e.title} ({e.credit})" for e in MODELS.values())
        + f"; or a local GGUF file or Hugging Face model folder (default {DEFAULT_MODEL}: takes the options below)")
    add("--layer", type=int, metavar="L", help="pretrained models' images: which layer (default 0)")
    add("--tokenizer", choices=TOKENIZERS)
    add("--d-model", type=int, metavar="N", help="width of every token vector (default 64)")
    add("--heads", type=int, metavar="H", help="number of heads; must divide d_model (default 4)")
    add("--seed", type=int, metavar="S", help="seeds embeddings and random weights (default 0)")
    add("--positional", choices=POSITIONALS)
    add("--mask", choices=MASKS)
    add("--no-scale", action="store_true", help="do not divide the scores by √d_k")
    add("--temperature", type=float, metavar="T", help="extra divisor of the scores, > 0 (default 1)")
    add("--weights", choices=WEIGHTS)
    add("--embeddings", metavar="TABLE.json", help='token → vector table, e.g. {"小明": [1, 0]}')
    add("--out", required=True, metavar="FILE", help="output: .npz .json .csv (.png .svg images), any case")
    add("--head", default="all", metavar="N|all", help="images: which head (default all)")
    add("--steps", action="store_true",
        help="the step-through player's stages, one frame or page each: --out x.gif, x.mp4 or x.pdf (a handout)")
    add("--stage", choices=STAGES, default="weights", help="images: which matrix (default weights)")
    add("--width", type=int, default=DEFAULT_WIDTH, metavar="PX", help="images: width in pixels")
    add("--by", choices=("pieces", "words"), default="pieces",
        help="toy engine .npz/.json: also write words, word_index and word_attentions (attention rolled up by "
             "words: summed over a word's key pieces, averaged over its query pieces); pretrained models always "
             "write them. Images (.png .svg): the softmax weights by words, as the window's By words")
    add("--ablate", metavar="L.H[,L.H…]", help="switch heads off (layer.head, 0-based; the toy engine has layer 0): "
        "every exported array is of the run without them")
    add("--table", choices=("weights", "head-stats"), default="weights",
        help=".csv: the attention weights (default) or the head table (one row per head)")
    add("--flow", action="store_true", help=".npz/.json: also write attention_flow (n, n), the maximum flow from "
        "each input token (column) to each final position (row) (Abnar & Zuidema 2020)")
    add("--occlusion", action="store_true", help=".npz/.json of a pretrained model: also write occlusion (n,), "
        "leave-one-out: a decoder's p(--answer) or an encoder's sentence-embedding cosine without each token")
    add("--answer", metavar="TOKEN", help="decoders' --occlusion and --saliency: the answer token, e.g. ' Paris' (its "
        "first token when it has several); encoders' and the toy's --saliency: the text compared with")
    add("--saliency", action="store_true", help=".npz/.json: also write saliency (n,), "
        "saliency_target and saliency_method (with --method ig, ig_completeness): how much each token's input "
        "pushed the target, a decoder's log p(--answer) or an encoder's (the toy's) sentence-embedding cosine to "
        "--answer's")
    add("--method", choices=("grad", "ixg", "ig"), help="--saliency: the gradient norm, input × gradient (default) "
        "or integrated gradients")
    add("--ig-steps", type=int, metavar="M", help="--method ig: midpoint steps from the baseline (default 32; the "
        "memory budget sets the top)")
    add("--baseline", metavar="zero|ID", help="--method ig: zero (default) or a token id whose input stands in "
        "every place (e.g. a padding token's)")
    add("--value-zeroing", action="store_true", help=".npz/.json: also write value_zeroing (layers, n, n) and "
        "value_zeroing_rollout: how much each token's output changes when another token's values are zeroed, "
        "layer by layer (Mohebbi et al. 2023)")
    add("--dla", action="store_true", help="decoders' .npz: also write direct logit attribution of --answer "
        "(and --contrast): dla_embed, dla_heads, dla_mlp, dla_head_positions, dla_bias, dla_total, logit or logit_diff")
    add("--contrast", metavar="TOKEN", help="--dla: a second token; the logit difference answer − contrast is split")
    add("--lens-grid", action="store_true", help="decoders' .npz: also write the logit lens at every position: "
        "lens_top_ids, lens_top_tokens, lens_p_answer (layers + 1, n)")
    add("--routes", action="store_true", help=".npz/.json of a pretrained model: also write route_edges, the "
        "information-flow route to --position (default the last token) above --tau (Ferrando & Voita 2024)")
    add("--tau", type=float, metavar="T", help="--routes: keep edges whose importance exceeds T, 0 < T < 1 "
        "(default 0.04)")
    add("--position", type=int, metavar="P", help="--routes: the token the route leads to (0-based; default the last)")
    return parser


def _check_routes(options, image: bool, pretrained: bool) -> None:
    """``--routes``, ``--tau`` and ``--position`` refused in one line before anything is computed."""
    if not options.routes:
        if options.tau is not None or options.position is not None:
            raise UsageError("--tau and --position are read by --routes; add --routes")
        return
    if image:
        raise UsageError("--routes is written to data files (.npz, .json), not to images")
    if not pretrained:
        raise UsageError("--routes needs a pretrained --model (the toy engine has no residual stream or MLP)")
    if options.tau is not None:
        from engine.analysis.routes import check_tau

        check_tau(options.tau)


def _evidence(options, model, trace, attentions) -> dict:
    """``--flow`` / ``--occlusion`` arrays (engine.analysis.flow, engine.analysis.occlusion) for the export."""
    import numpy as np

    extra = {}
    ablate = frozenset(getattr(trace, "ablate", frozenset()))
    if options.flow:
        from engine.analysis.flow import flow_of_run

        # switched-off heads (--ablate) count as zero weights in the heads' mean (engine.analysis.rollout)
        extra["attention_flow"] = flow_of_run(attentions, ablate)
    if options.occlusion:
        if model is None:
            raise UsageError("--occlusion needs a pretrained --model (the toy engine has no sentence to leave out of)")
        from engine.analysis.occlusion import leave_one_out
        from engine.analysis.request import RunRequest

        result = leave_one_out(model, RunRequest(text=options.text, ablate=ablate, answer=options.answer))
        if result.answer is not None and result.answer.note:
            sys.stderr.write(f"note: {result.answer.note}\n")
        extra["occlusion"] = result.values
        extra["occlusion_baseline"] = np.float64(result.baseline)
    elif options.answer is not None and not (options.dla or options.lens_grid or options.saliency):
        raise UsageError("--answer is read by --occlusion, --saliency, --dla and --lens-grid (and `./run patch`); add "
                         "--occlusion, --saliency, --dla or --lens-grid")
    if options.saliency:
        from cli.saliency import saliency_arrays

        if model is None:  # the toy engine: its run's settings, an encoder's target (engine.grad.toy)
            from engine.models.toy import ToyModel

            model = ToyModel(trace.config)

        extra.update(saliency_arrays(options, model, ablate))
    return extra


def _parse_ablate(text: str | None) -> frozenset:
    """``--ablate 3.1,5.11`` → {(3, 1), (5, 11)} (checked against the model by :func:`_check_ablate`)."""
    try:
        return parse_ablate(text)
    except ValueError as error:
        raise UsageError(str(error)) from None


def _check_ablate(ablate: frozenset, layers: int, heads: int, title: str) -> None:
    """A head the model lacks: one line naming its layers × heads."""
    for layer, head in sorted(ablate):
        if layer >= layers or head >= heads:
            raise UsageError(f"--ablate {layer}.{head} does not exist: {title} has {layers} × {heads} "
                             f"(layers × heads: layers 0 … {layers - 1}, heads 0 … {heads - 1})")


def _export_data(options, model, trace, evidence=None) -> None:
    """Write the run of ``--text`` with every analysis that applies (engine.files.export.export_run,
    what File → Export data writes too); ``--table head-stats`` writes the head table (.csv)."""
    from engine.analysis.request import NotApplicable, RunRequest
    from engine.analysis.runs import Runs
    from engine.analysis.table import run_analysis
    from engine.files.export import export_run, output_suffix, save_head_table

    asks = options.dla or options.lens_grid  # the answer reaches the analyses only when they are asked for
    request = RunRequest(text=options.text, ablate=_parse_ablate(options.ablate), by_words=options.by == "words",
                         answer=options.answer if asks else None, contrast=options.contrast if asks else None,
                         lens_grid=options.lens_grid,
                         value_zeroing=options.value_zeroing)  # the analysis table's value_zeroing row
    if options.routes:  # the analysis table's routes row reads τ and the position from the request
        from dataclasses import replace

        from engine.analysis.routes import DEFAULT_TAU

        request = replace(request, tau=DEFAULT_TAU if options.tau is None else options.tau,
                          position=-1 if options.position is None else options.position)
    runs = Runs(model, request, trace=trace)
    if options.dla:
        _check_dla(model, runs)
    if (evidence or options.value_zeroing or options.routes) and output_suffix(options.out) == ".csv":
        raise UsageError("--flow, --occlusion, --value-zeroing and --routes are written to .npz or .json, not .csv")
    for name, asked in (("value_zeroing", options.value_zeroing), ("routes", options.routes)):
        if asked:  # the table would leave a text over the limit out with its reason: say it, write nothing
            from engine.analysis.request import check_tokens
            from engine.analysis.table import analysis

            check_tokens(runs.trace.n, analysis(name).limit, analysis(name).title)
    if options.table == "head-stats":
        if output_suffix(options.out) != ".csv":
            raise UsageError("--table head-stats writes a .csv file; .npz and .json always hold head_stats")
        table = run_analysis("head_stats", model, runs=runs)
        if isinstance(table, NotApplicable):
            raise table.reason
        save_head_table(table.head_stats, options.out)
        return
    export_run(model, request, options.out, extra=evidence, runs=runs)


def _check_dla(model, runs) -> None:
    """``--dla``: the attribution before anything is written (a model it does not apply to, a bad
    answer: one line); a note when the answer or the contrast was cut to its first token."""
    from engine.analysis.request import NotApplicable
    from engine.analysis.table import run_analysis

    result = run_analysis("dla", model, runs=runs)  # its run is kept in runs: the export reuses it
    if isinstance(result, NotApplicable):
        raise result.reason
    if result.note:
        sys.stderr.write(f"note: {result.note}\n")


def _check_attribution_options(options, entry=None) -> None:
    """--dla / --contrast / --lens-grid: what they need, before a model is loaded."""
    if options.contrast is not None and not options.dla:
        raise UsageError("--contrast is read by --dla; add --dla")
    if not (options.dla or options.lens_grid):
        return
    flag = "--dla" if options.dla else "--lens-grid"
    if options.dla and options.answer is None:
        raise UsageError("--dla needs --answer TOKEN: the token whose logit is split, e.g. --answer ' Paris'")
    if entry is None or not entry.predicts_next_token:
        title = "the toy engine" if entry is None else entry.title
        raise UsageError(f"{flag} reads a decoder's unembedding; {title} has no unembedding: use a decoder "
                         f"(--model smollm2, a .gguf file or a decoder's folder)")


def _words_of(options, result, special_tokens: frozenset = frozenset()):
    """``--by words`` for a picture: (words, weights (heads, w, w)) of ``result``'s layer rolled up
    (engine.text.words, the model's special tokens words of their own: the window's word view); else None."""
    if options.by != "words":
        return None
    from engine.text.words import word_arrays

    arrays = word_arrays(options.text, result.tokens, result.weights, special_tokens)
    return tuple(str(word) for word in arrays["words"]), arrays["word_attentions"]


def _check_output(out: str) -> None:
    """Refuse an output path that cannot be written, before computing anything."""
    target = Path(out)
    parent = target.parent
    if os.path.islink(out) and not os.path.exists(out):  # a dangling link: its target's folder is the one missing
        real = os.path.realpath(out)
        if not os.path.isdir(os.path.dirname(real)):
            raise UsageError(f"cannot write {out!r}: it is a symbolic link to {real!r}, whose folder "
                             f"{os.path.dirname(real)!r} does not exist")
    if not parent.is_dir():
        raise UsageError(f"cannot write {out!r}: the folder {os.fspath(parent)!r} does not exist")
    if target.is_dir():
        raise UsageError(f"cannot write {out!r}: it is a folder")
    if not os.access(parent, os.W_OK):
        raise UsageError(f"cannot write {out!r}: the folder {os.fspath(parent)!r} is read-only")


def _image_exporter():
    """figures.render.export_figure, imported only when an image is asked for (with Qt and pyqtgraph)."""
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")  # no window needed to draw a file
    try:
        import PySide6.QtGui  # noqa: F401 - imported here so a missing package is named now,
        import pyqtgraph  # noqa: F401 - not halfway through drawing

        from figures.render import export_figure
    except ModuleNotFoundError as error:
        package = (error.name or "PySide6").split(".")[0]
        raise SetupError(f".png and .svg export needs the {package} package, which this Python lacks: use "
                         f"`./run export …` (it installs requirements.txt into .venv), or pip install {package}, "
                         f"or export .npz .json .csv") from None
    except ImportError as error:  # e.g. Qt's libEGL missing
        raise SetupError(f".png and .svg export cannot load Qt ({error}): export .npz .json .csv instead") from None
    return export_figure


def _parse_head(text: str, heads: int):
    if text == "all":
        return "all"
    try:
        head = int(text)
    except ValueError:
        raise UsageError(f"--head must be a head number or 'all'; got {text!r}") from None
    if not 0 <= head < heads:
        raise UsageError(f"--head {head} does not exist: there are {heads} heads (0 … {heads - 1})")
    return head


TOY_ONLY = ("tokenizer", "d_model", "heads", "seed", "positional", "mask", "temperature", "weights", "embeddings")


def _export_pretrained(options, image: bool) -> None:
    """A pretrained ``--model``: its trace, or one layer's picture."""
    import numpy as np

    from engine.models import model_info

    given = [f"--{name.replace('_', '-')}" for name in TOY_ONLY if getattr(options, name) is not None]
    if options.no_scale:
        given.append("--no-scale")
    if given:
        raise UsageError(f"{', '.join(given)}: options of the toy engine, not used by --model {options.model}")
    from engine.text.text_rule import require_visible_text

    require_visible_text(options.text)  # the toy engine's rule, for every model
    entry = model_info(options.model)
    _check_attribution_options(options, entry)
    if entry.predicts_next_token and not image:  # known before loading: refuse without spending the model's memory
        from engine.files.export import output_suffix

        if output_suffix(options.out) != ".npz":
            raise UsageError(f"--model {options.model}: a decoder's trace is written as .npz (or a .png/.svg picture)")
    model = entry.load()
    facts = model.facts  # what the model declares (engine/models/contract.py)
    layer = 0 if options.layer is None else options.layer
    if not 0 <= layer < facts.layers:
        raise UsageError(f"--layer {layer} does not exist: {entry.title} has layers 0 … {facts.layers - 1}")
    head = _parse_head(options.head, facts.heads)
    ablate = _parse_ablate(options.ablate)
    _check_ablate(ablate, facts.layers, facts.heads, entry.title)
    if facts.capabilities.next_token_logits:
        return _export_decoder(options, entry, model, layer, head, image, ablate)
    export_figure = _image_exporter() if image else None
    with np.errstate(over="raise", invalid="raise", divide="raise"):
        trace = model.run(options.text, ablate=ablate)
    if image:
        result = model.layer_view(trace, layer)
        export_figure(result, options.out, head=head, stage=options.stage, width=options.width,
                      label=f"{entry.title}, layer {layer}", words=_words_of(options, result, facts.special_tokens))
    else:
        _export_data(options, model, trace, _evidence(options, model, trace, trace.attentions))
    _report(f"wrote {options.out}: {trace.n} word pieces, {trace.num_layers} layers × {trace.num_heads} heads "
            f"({entry.title})")


def check_decoder_export(model, text: str, budget: int | None = None) -> int:
    """Refuse, before computing, a decoder export whose trace and word view do not fit the memory
    budget together (the forward pass checks only its own trace). Returns the bytes."""
    from engine.core.memory import check_export_budget
    from engine.models.llama import estimate_forward_bytes
    from engine.text.words import words_of
    from engine.core.memory import DEFAULT_MEMORY_BUDGET

    tokenized = model.tokenize(text)
    n = len(tokenized.input_ids)
    words, _ = words_of(text, tokenized.tokens)
    kept = estimate_forward_bytes(n, model.config, new=0)  # what the trace keeps once computed
    return check_export_budget(n, kept, len(words), model.config.num_heads,
                               DEFAULT_MEMORY_BUDGET if budget is None else budget)


def _export_decoder(options, entry, model, layer: int, head, image: bool, ablate: frozenset = frozenset()) -> None:
    """A decoder ``--model``: its arrays as .npz, or one layer's picture."""
    from engine.files.export import output_suffix

    if not image and output_suffix(options.out) != ".npz":
        raise UsageError(f"--model {options.model}: a decoder's trace is written as .npz (or a .png/.svg picture)")
    if not image:
        check_decoder_export(model, options.text)
    trace = model.run(options.text, ablate=ablate)
    if image:
        result = model.layer_view(trace, layer)
        _image_exporter()(result, options.out, head=head, stage=options.stage, width=options.width,
                          label=f"{entry.title}, layer {layer}",
                          words=_words_of(options, result, model.facts.special_tokens))
    else:
        _export_data(options, model, trace, _evidence(options, model, trace, trace.attentions))
    _report(f"wrote {options.out}: {trace.n} tokens, {trace.num_layers} layers × {trace.num_heads} heads "
            f"({entry.title})")


def _toy_config(options):
    """The toy engine's config from the options given (``export`` and ``export --steps`` read the same ones)."""
    from engine import AttentionConfig
    from engine.files.documents import load_embeddings_table

    settings = {name: getattr(options, name)
                for name in ("text", "tokenizer", "d_model", "heads", "seed", "positional", "mask", "temperature", "weights")
                if getattr(options, name) is not None}
    if options.no_scale:
        settings["scale"] = False
    if options.embeddings is not None:
        settings["embeddings"] = load_embeddings_table(options.embeddings)
    return AttentionConfig(**settings)


def export(args: list[str]) -> None:
    """Run ``export`` with its arguments; raises UsageError / EngineError on bad input."""
    import numpy as np

    from engine import compute
    from engine.files.export import ALL_SUFFIXES, output_suffix
    from engine.models import model_info

    options = build_parser().parse_args(args)
    if options.steps:
        return _export_steps(options)
    image = output_suffix(options.out, ALL_SUFFIXES) in IMAGE_SUFFIXES
    _check_output(options.out)
    if options.width <= 0:
        raise UsageError(f"--width must be a positive number of pixels; got {options.width}")
    if options.by == "words" and image and options.stage != "weights":
        raise UsageError(f"--by words draws the softmax weights (a word's scores do not add up from its pieces'); "
                         f"leave out --stage {options.stage}")
    if (options.flow or options.occlusion or options.value_zeroing or options.saliency) and image:
        raise UsageError("--flow, --occlusion, --value-zeroing and --saliency are written to data files (.npz, .json), "
                         "not to images")
    if (options.dla or options.lens_grid) and image:
        raise UsageError("--dla and --lens-grid are written to .npz files, not to images")
    _check_routes(options, image, not model_info(options.model).configurable)
    from cli.saliency import SaliencyUsage, check_options

    try:
        check_options(options)
    except SaliencyUsage as error:
        raise UsageError(str(error)) from None
    if not model_info(options.model).configurable:
        return _export_pretrained(options, image)
    if options.layer is not None:
        raise UsageError(f"--layer applies to pretrained models only, not --model {options.model}")
    _check_attribution_options(options)
    config = _toy_config(options)
    head = _parse_head(options.head, config.heads)
    export_figure = _image_exporter() if image else None
    ablate = _parse_ablate(options.ablate)
    _check_ablate(ablate, 1, config.heads, "the toy engine")
    with np.errstate(over="raise", invalid="raise", divide="raise"):
        result = compute(config, ablate=ablate) if ablate else compute(config)
    if image:
        export_figure(result, options.out, head=head, stage=options.stage, width=options.width,
                      words=_words_of(options, result))
    else:
        from engine.models.toy import ToyModel

        _export_data(options, ToyModel(config), result, _evidence(options, None, result, result.weights[None]))
    plural = lambda count, word: f"{count} {word}{'s' * (count != 1)}"  # noqa: E731
    _report(f"wrote {options.out}: {plural(result.n, 'token')}, {plural(config.heads, 'head')}, d_model {config.d_model}")


def _export_steps(options) -> None:
    """``export --steps --out x.gif|mp4|pdf``: the player's stages of the toy engine, drawn offscreen."""
    from engine.models import model_info

    suffix = os.path.splitext(options.out)[1].lower()
    if suffix not in (".gif", ".mp4", ".pdf"):
        raise UsageError(f"--steps writes .gif, .mp4 or .pdf; got {options.out!r}")
    _check_output(options.out)
    if not model_info(options.model).configurable:
        return _export_model_steps(options)
    import numpy as np

    from engine import compute
    from engine.text.tokenize import tokenize
    from figures.steps import check_frame_memory

    config = _toy_config(options)
    head = _parse_head(options.head, config.heads)
    _image_exporter()  # names a missing Qt now
    check_frame_memory(len(tokenize(config.text, config.tokenizer)), config.d_model)  # before the trace
    with np.errstate(over="raise", invalid="raise", divide="raise"):
        result = compute(config)
    count = _write_steps(result, options.out, head, trained=False, title=config.text)
    _report(f"wrote {options.out}: {count} stages")


def _write_steps(result, out: str, head, trained: bool, title: str) -> int:
    """The stages of ``result`` drawn offscreen (figures.steps: the stage, its heatmaps and caption)
    and written as .gif, .mp4 or .pdf; returns how many."""
    from figures.steps import export_steps, stage_pages

    pages = stage_pages(result, head=0 if head == "all" else head, trained=trained)
    export_steps(pages, out, title=title)
    return len(pages)


def _export_model_steps(options) -> None:
    """``export --steps --model M``: the player's stages of a pretrained model's ``--layer`` (default 0),
    as the window's player shows them (its Q, K, V, scores and weights of that layer)."""
    given = [f"--{name.replace('_', '-')}" for name in TOY_ONLY if getattr(options, name) is not None]
    if options.no_scale:
        given.append("--no-scale")
    if given:
        raise UsageError(f"{', '.join(given)}: options of the toy engine, not used by --model {options.model}")
    from engine.models import model_info
    from engine.text.text_rule import require_visible_text

    require_visible_text(options.text)
    entry = model_info(options.model)
    model = entry.load()  # the engine's loader, as `export --model` (the command line runs once: no cache)
    facts = model.facts
    layer = 0 if options.layer is None else options.layer
    if not 0 <= layer < facts.layers:
        raise UsageError(f"--layer {layer} does not exist: {entry.title} has layers 0 … {facts.layers - 1}")
    head = _parse_head(options.head, facts.heads)
    _image_exporter()  # names a missing Qt now
    from figures.steps import check_frame_memory

    check_frame_memory(len(model.tokenize(options.text).input_ids), facts.d_model)  # before the trace
    # the layer the window's player shows for this model: its layer view of the whole trace
    result = model.layer_view(model.run(options.text), layer)
    count = _write_steps(result, options.out, head, trained=True, title=f"{entry.title}, layer {layer}")
    _report(f"wrote {options.out}: {count} stages ({entry.title}, layer {layer})")


def patch_parser() -> argparse.ArgumentParser:
    """``./run patch``: activation patching (engine.analysis.patching) from the command line."""
    from engine.models import MODELS

    parser = _Parser(prog="./run patch", allow_abbrev=False,
                     description="Activation patching: the corrupted prompt run again with one activation of the "
                                 "clean run copied in (residual stream, attention output, MLP output per layer and "
                                 "token; each head), and what it does to the measure (docs/FORMAT.md).")
    add = parser.add_argument
    pretrained = [name for name, entry in MODELS.items() if not entry.configurable]  # the toy engine has no layers to patch
    add("--model", type=_model_name, required=True, metavar="{" + ",".join(pretrained) + "}|FILE.gguf|FOLDER",
        help="a pretrained model: a registry name, a local GGUF file or a Hugging Face model folder")
    add("--clean", required=True, metavar="TEXT", help="the clean prompt")
    add("--corrupt", required=True, metavar="TEXT", help="the corrupted prompt (the same number of tokens)")
    add("--answer", metavar="TOKEN", help="decoders: the answer token whose probability is measured, e.g. ' Paris'")
    add("--position", type=int, metavar="P", help="encoders: the token whose final vector is compared with the "
        "clean run's (default 0)")
    add("--grids", default="resid_pre,attn_out,mlp_out,head_z", metavar="G[,G…]",
        help="which grids (default all four)")
    add("--out", required=True, metavar="FILE", help="output: .npz .json .csv (.png .svg picture)")
    add("--approx", action="store_true", help=".npz/.json: also write attribution patching's first-order estimate "
        "of each grid (one backward of the corrupted run) under the grid's key with the suffix _atp")
    return parser


def patch(args: list[str]) -> None:
    """Run ``patch`` with its arguments; raises UsageError / EngineError on bad input."""
    import json

    import numpy as np

    from engine.analysis import patching
    from engine.files.export import ALL_SUFFIXES, output_suffix
    from engine.models import model_info
    from engine.core.safe_io import atomic_write

    options = patch_parser().parse_args(args)
    suffix = output_suffix(options.out, ALL_SUFFIXES)
    _check_output(options.out)
    if options.approx and suffix not in (".npz", ".json"):
        raise UsageError("--approx writes its grids to .npz or .json")
    grids = tuple(g.strip() for g in options.grids.split(",") if g.strip())
    if not grids or any(g not in patching.GRIDS for g in grids):
        raise UsageError(f"--grids takes names from {', '.join(patching.GRIDS)}; got {options.grids!r}")
    export_figure = None
    if suffix in IMAGE_SUFFIXES:
        _image_exporter()
        from figures.patch_figure import export_patch_figure as export_figure
    entry = model_info(options.model)
    if entry.configurable:
        raise UsageError(f"--model {options.model}: patching needs a pretrained model (it has layers to patch)")
    model = entry.load()
    decoder = patching.is_decoder_model(model)
    if decoder and options.position is not None:
        raise UsageError("--position is for encoders; a decoder's measure is read at the last position")
    if not decoder and options.answer is not None:
        raise UsageError("--answer is for decoders; an encoder's measure is the cosine at --position")
    from engine.analysis.request import RunRequest

    request = RunRequest(text=options.clean, answer=options.answer,
                         position=0 if options.position is None else options.position)
    result = patching.activation_patching(model, request, options.corrupt, grids)
    for note in result.notes:
        sys.stderr.write(f"note: {note}\n")
    arrays = result.arrays()
    if options.approx:
        from engine.analysis.attribution_patching import attribution_patching

        arrays.update(attribution_patching(model, options.clean, options.corrupt, options.answer, options.position,
                                           grids=grids).arrays())
    if export_figure is not None:
        export_figure(arrays, options.out)
    elif suffix == ".npz":
        with atomic_write(options.out) as stream:
            np.savez(stream, **arrays)
    elif suffix == ".json":
        document = {name: np.asarray(value).tolist() for name, value in arrays.items()}  # numpy scalars too
        with atomic_write(options.out) as stream:
            stream.write(json.dumps({"format": "attention-explorer-patching", "version": 1, **document},
                                    ensure_ascii=False).encode("utf-8"))
    else:
        import csv
        import io

        text = io.StringIO(newline="")
        writer = csv.writer(text)
        writer.writerow(["grid", "layer", "column", "label", "value"] + (["logit_diff"] if decoder else []))
        labels = [str(t) for t in arrays["tokens"]]
        for grid in grids:
            values = arrays[grid]
            for l in range(values.shape[0]):
                for c in range(values.shape[1]):
                    label = f"H{c}" if grid == "head_z" else labels[c]
                    row = [grid, l, c, label, format(values[l, c], ".9g")]
                    if decoder:
                        row.append(format(arrays[f"{grid}_logit_diff"][l, c], ".9g"))
                    writer.writerow(row)
        with atomic_write(options.out) as stream:
            stream.write(text.getvalue().encode("utf-8"))
    setup = result.setup
    _report(f"wrote {options.out}: {setup.n} tokens, {setup.layers} layers × {setup.heads} heads, "
            f"{setup.measure} clean {setup.clean_value:.4g} corrupted {setup.corrupt_value:.4g} ({entry.title})")


def _report(line: str) -> None:
    """Print the success line; a closed stdout (``export … | true``) does not undo a written file."""
    if sys.stdout is None:  # started with stdout closed: the file is written, nothing to say it on
        return
    try:
        print(line, flush=True)
    except OSError:  # a closed pipe (export … | true), /dev/full: the file is still written
        devnull = os.open(os.devnull, os.O_WRONLY)  # so that the flush at exit does not fail again
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)


def _raise_interrupted(signum, frame):
    raise Interrupted(signum)


def _catch_termination() -> dict:
    """SIGTERM and SIGHUP raise :class:`Interrupted` (as SIGINT raises KeyboardInterrupt); the old handlers."""
    previous = {}
    for name in ("SIGTERM", "SIGHUP"):
        number = getattr(signal, name, None)
        if number is not None:
            try:
                previous[number] = signal.signal(number, _raise_interrupted)
            except (ValueError, OSError):  # not the main thread (a test runner): leave it
                pass
    return previous


def _fail(message, code: int) -> int:
    text = " ".join(str(message).splitlines()).strip()
    try:
        sys.stderr.write(f"error: {text}\n")
        sys.stderr.flush()
    except (AttributeError, OSError, ValueError):  # stderr closed (None) or unwritable: the exit code still says it
        pass
    return code


def _window(argv: list[str], window) -> int:
    """Start the window through ``window`` (main.py's: the command line never imports the app)."""
    if missing_display():
        return _fail("no display: the window needs a graphical session (X11 or Wayland; DISPLAY and WAYLAND_DISPLAY "
                     "are unset). Run it on a desktop, over ssh -X, or under xvfb-run; `./run export …` needs none", 2)
    if window is None:
        return _fail("this entry point runs commands only (export, patch): start the window with ./run or "
                     "python main.py", 2)
    try:
        return window(argv[1:])
    except ModuleNotFoundError as error:
        return _fail(f"the window needs the {error.name} package, which this Python lacks: use `./run` "
                     f"(it installs requirements.txt into .venv) or `pip install -r requirements.txt`", 2)


PATH_OPTIONS = ("--out", "--model", "--weights", "--embeddings", "--session")  # a file name may hold any bytes


def _check_text_arguments(args: list[str]) -> None:
    """UsageError for an argument (other than a path) whose bytes were not UTF-8: Python hands them
    over as lone surrogates, which no tokenizer reads."""
    for index, arg in enumerate(args):
        try:
            arg.encode("utf-8")
            continue
        except UnicodeEncodeError as error:
            at = error.start + 1
        option, equals, _ = arg.partition("=")
        if not (arg.startswith("--") and equals):
            before = args[index - 1] if index else ""
            option = before if before.startswith("--") and before != "--" else "an argument"
        if option not in PATH_OPTIONS:
            raise UsageError(f"{option} holds bytes that are not UTF-8 (at character {at}): pass the text in "
                             f"UTF-8 (check the terminal's or the script's encoding)")


def main(argv: list[str] | None = None, window=None) -> int:
    """Entry point: ``argv`` like ``sys.argv`` (program name first). Returns the exit code. ``window``:
    called with the window's arguments when they start the window (main.py passes the app's start)."""
    argv = list(sys.argv if argv is None else argv)
    args = argv[1:]
    if starts_window(args):
        return _window(argv, window)
    if args[0] in ("-h", "--help"):
        print(top_parser().format_help(), end="")
        return 0
    if args[0] == "corpus": return __import__("cli.corpus", fromlist=["main"]).main(args[1:])  # noqa: E701 (its own file)
    if args[0] not in ("export", "patch"):
        return _fail(f"unknown command {args[0]!r}: use `export`, `patch` or `corpus` (see --help), or no arguments "
                     f"for the window", 2)
    try:
        from engine.core.errors import EngineError
    except ImportError as error:
        return _fail(f"the engine cannot load: {error}", 2)
    previous = _catch_termination()
    try:
        _check_text_arguments(args[1:])
        (patch if args[0] == "patch" else export)(args[1:])
    except (UsageError, EngineError, SetupError) as error:
        return _fail(error, 2)
    except OSError as error:  # a path the system refuses before anything is written (a name over 255 bytes)
        if error.errno != errno.ENAMETOOLONG:
            return _fail(f"unexpected {type(error).__name__}: {error}", 2)
        return _fail(f"cannot use {os.fsdecode(error.filename or '')!r}: the file name is too long (at most 255 "
                     f"bytes a name and 4,096 a path here): choose a shorter one", 2)
    except FloatingPointError as error:
        return _fail(f"the numbers overflowed ({error}): use smaller embeddings or a larger temperature", 2)
    except MemoryError:
        return _fail("not enough memory for this computation or export: shorten the text, use a smaller "
                     "d_model or fewer heads, or export .npz (the most compact format)", 2)
    except KeyboardInterrupt as interruption:
        signum = getattr(interruption, "signum", signal.SIGINT)
        return _fail(f"interrupted by {signal.Signals(signum).name}", 128 + signum)
    except Exception as error:  # one line, never a traceback
        return _fail(f"unexpected {type(error).__name__}: {error}", 2)
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)
    return 0
