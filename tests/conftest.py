"""Shared test setup: make the repository root importable (engine, app, main)."""
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

# ---------------------------------------------------------------------- Qt (window tests)
import os  # noqa: E402
import threading  # noqa: E402

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")  # before any QApplication exists
# numpy's OpenBLAS on one thread (before numpy loads): with two test processes on two cores, each
# process's idle BLAS thread spins after every small matmul on the core the other process needs
# (docs/TESTING.md, "Speed, third pass"). Tests of the thread count set their own.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import pytest  # noqa: E402

# the slow mark, checked: a window or a bundled model in a test not marked slow fails it
pytest_plugins = ["tests.slow_marks"]


@pytest.fixture(autouse=True)
def _isolated_settings(tmp_path_factory, request):
    """QSettings of every test live in a temp dir: never the real user's settings."""
    if "qapp" not in request.fixturenames and "qtbot" not in request.fixturenames:
        yield
        return
    from app.shell.identity import use_settings_folder

    folder = str(tmp_path_factory.mktemp("settings"))
    use_settings_folder(folder)
    yield folder


@pytest.fixture(autouse=True)
def _registry_as_it_was():
    """Folders and files a test registers (--model FILE.gguf, Open model folder) leave the registry
    after it: every test, so that the registry a test reads (``patch --help``'s list of models) does
    not depend on which tests ran before it in the same process."""
    from engine.models import MODELS

    before = set(MODELS)
    yield
    for name in set(MODELS) - before:
        MODELS.pop(name, None)


@pytest.fixture
def window(qtbot):
    """A MainWindow with no restored state, shown offscreen; closed and its worker joined after."""
    from PySide6.QtWidgets import QApplication

    from figures.fonts import install_cjk_font
    from app.window import MainWindow

    install_cjk_font(QApplication.instance())
    win = MainWindow(restore=False)
    qtbot.addWidget(win)
    win.show()
    assert win.wait_until_idle(30), "the first computation did not arrive"
    yield win
    from tests.shared_helpers import close_window  # here: imported at the top, its autouse fixture would be suite-wide

    close_window(win)


@pytest.fixture(autouse=True)
def _no_leftover_threads():
    """Fail a test that leaves a worker thread running."""
    before = {t.ident for t in threading.enumerate()}
    yield
    import time

    deadline = time.monotonic() + 2
    while time.monotonic() < deadline:
        extra = [t for t in threading.enumerate() if t.ident not in before and t.name == "attention-worker"]
        if not extra:
            return
        time.sleep(0.02)
    raise AssertionError(f"threads left behind: {[t.name for t in extra]}")


@pytest.fixture
def standalone_panel(qtbot):
    """make(PanelClass, width, height) → (controller, panel): one panel on its own Controller,
    shown offscreen with the CJK font; every controller made is shut down after the test."""
    from PySide6.QtWidgets import QApplication

    from app.controller import Controller
    from figures.fonts import install_cjk_font

    controllers = []

    def make(panel_class, width: int, height: int):
        install_cjk_font(QApplication.instance())
        controller = Controller()
        controllers.append(controller)
        panel = panel_class(controller)
        qtbot.addWidget(panel)
        panel.resize(width, height)
        panel.show()
        return controller, panel

    yield make
    for controller in controllers:
        controller.shutdown()


# ---------------------------------------------------------------------- the real models, once
def _model_once(name: str):
    """Registry model ``name`` loaded once per test process, through the window's own cache
    (app.jobs.trained): the engine tests and every window test share one copy. Skips where the
    model's package is not installed."""
    from app.jobs import trained as minilm_mode
    from engine.core.errors import EngineError

    try:
        return minilm_mode.model(name)
    except EngineError as error:
        pytest.skip(f"{name} not installed: {error}")


@pytest.fixture(scope="session", autouse=True)
def app_models_kept():
    """The app keeps two models (MODELS_KEPT: the one in use and the previous); window tests that go
    through MiniLM, e5 and SmolLM2 then loaded the evicted one again from disk, although this
    process holds it (five loads of SmolLM2 in four window files, 8 s of CPU). Four here: the three
    real models and a GGUF file. Yields the app's own value: test_concurrency's eviction test sets
    it back for itself (so a changed MODELS_KEPT in the app still fails that test)."""
    from engine.models import cache as minilm_mode

    kept = minilm_mode.MODELS_KEPT
    minilm_mode.MODELS_KEPT = 4
    yield kept
    minilm_mode.MODELS_KEPT = kept


@pytest.fixture(scope="session")
def minilm_model():
    return _model_once("minilm")


@pytest.fixture(scope="session")
def e5_model():
    return _model_once("e5")


@pytest.fixture(scope="session")
def smollm2_model():
    return _model_once("smollm2")


@pytest.fixture(scope="session")
def minilm(minilm_model):
    """The real MiniLM (the older name of ``minilm_model``)."""
    return minilm_model


@pytest.fixture
def require_model():
    """require(name): skip the test, naming the install command, where registry model ``name`` is
    not installed (nothing is loaded to find out)."""
    from engine.models import model_info

    def require(name: str) -> None:
        entry = model_info(name)
        if not entry.is_installed():
            pytest.skip(f"{name} is not installed: {entry.install_command}")

    return require


# ---------------------------------------------------------------------- small random decoders
# Hugging Face style names, as a family's table would give them (engine.models.llama.WeightNames)
RANDOM_DECODER_NAMES = dict(
    token_embeddings="embed", output_norm="norm", output_head="lm_head", attention_norm="l{i}.ln1",
    q="l{i}.q", k="l{i}.k", v="l{i}.v", output="l{i}.o", ffn_norm="l{i}.ln2", gate="l{i}.gate", up="l{i}.up",
    down="l{i}.down", q_bias="l{i}.q.b", k_bias="l{i}.k.b", v_bias="l{i}.v.b", output_bias="l{i}.o.b",
    attention_norm_bias="l{i}.ln1.b", ffn_norm_bias="l{i}.ln2.b", gate_bias="l{i}.gate.b", up_bias="l{i}.up.b",
    down_bias="l{i}.down.b", q_norm="l{i}.qn", k_norm="l{i}.kn", position_embeddings="wpe", output_norm_bias="norm.b",
)


@pytest.fixture(scope="session")
def random_decoder():
    """make(norm, mlp, positions, kv, *, layers, vocab, biases, qk_norm, untied, seed, spread) →
    (config, tensors, weights): a small decoder of any block shape (d 16, 4 heads of 4, FF 24, 12
    positions) with random weights of a visible spread (near-uniform attention hides layout bugs), read
    through a weight-name table as a family would. ``positions``: "adjacent" | "half" (rotary, the two
    row layouts) or "learned"."""
    import numpy as np

    from engine.models.llama import DecoderConfig, WeightNames, prepare_weights

    d, heads, d_ff, context = 16, 4, 24, 12
    names = WeightNames(**RANDOM_DECODER_NAMES)

    def make(norm, mlp, positions, kv, *, layers, vocab, biases, qk_norm, untied, seed, spread):
        config = DecoderConfig(
            architecture="test", num_layers=layers, hidden_size=d, intermediate_size=d_ff, num_heads=heads,
            num_kv_heads=kv, head_dim=d // heads, vocab_size=vocab, rope_theta=100.0, rms_norm_eps=1e-5,
            context_length=context, rope_style="half" if positions == "learned" else positions, norm=norm,
            mlp=mlp, positions="learned" if positions == "learned" else "rotary", qk_norm=qk_norm)
        rng = np.random.default_rng(seed)
        f = lambda *shape, s=spread: (rng.standard_normal(shape) * s).astype(np.float32)  # noqa: E731
        d_k = d // heads
        t = {"embed": f(vocab, d, s=1.0), "norm": 1 + f(d, s=0.1), "norm.b": f(d, s=0.1), "wpe": f(context, d)}
        if untied:
            t["lm_head"] = f(vocab, d)
        for i in range(layers):
            p = f"l{i}."
            t.update({p + "ln1": 1 + f(d, s=0.1), p + "ln2": 1 + f(d, s=0.1), p + "q": f(heads * d_k, d),
                      p + "k": f(kv * d_k, d), p + "v": f(kv * d_k, d), p + "o": f(d, heads * d_k),
                      p + "up": f(d_ff, d), p + "gate": f(d_ff, d), p + "down": f(d, d_ff), p + "qn": 1 + f(d_k, s=0.1),
                      p + "kn": 1 + f(d_k, s=0.1), p + "ln1.b": f(d, s=0.1), p + "ln2.b": f(d, s=0.1)})
            if biases:
                t.update({p + "q.b": f(heads * d_k, s=0.1), p + "k.b": f(kv * d_k, s=0.1),
                          p + "v.b": f(kv * d_k, s=0.1), p + "o.b": f(d, s=0.1), p + "up.b": f(d_ff, s=0.1),
                          p + "gate.b": f(d_ff, s=0.1), p + "down.b": f(d, s=0.1)})
        return config, t, prepare_weights(t, config, names)

    return make
