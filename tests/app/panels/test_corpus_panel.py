"""The Corpus dock: a finished job's head table (sortable), its head clusters, a head opened from them."""
import numpy as np
import pytest
from PySide6.QtCore import Qt

from engine.corpus.runner import InProcess, JobSpec, run_job
from tests.shared_helpers import dock, settle

from tests.engine.corpus.test_corpus import sentences

pytestmark = pytest.mark.slow


@pytest.fixture
def toy_job(tmp_path):
    path = tmp_path / "texts.txt"
    path.write_text("\n".join(sentences(24)) + "\n", encoding="utf-8")
    run_job(JobSpec("toy", str(path), str(tmp_path / "job"), ablate=frozenset({(0, 1)})), InProcess())
    return tmp_path / "job"


def test_the_corpus_dock_shows_a_job_and_opens_a_head(window, qtbot, toy_job):
    panel = dock(window, "corpus")
    settle(window, qtbot)
    panel.open_folder(str(toy_job))
    qtbot.waitUntil(lambda: panel.arrays is not None, timeout=10000)
    stats = np.load(toy_job / "head_stats.npz")
    clusters = np.load(toy_job / "head_clusters.npz")
    assert panel.caption.text().startswith("Toy engine (your settings): 24 texts, 1 layers × 4 heads; heads switched "
                                           "off: 0.1.")
    model = panel.table_model
    assert model.rowCount() == 4
    for head in range(4):
        assert model.data(model.index(head, 0)) == f"0.{head}"
        assert model.data(model.index(head, 5)) == f"{stats['previous'][head]:.3f}"
        assert model.data(model.index(head, 7), Qt.ItemDataRole.ToolTipRole) == (
            f"mean {stats['punctuation'][head]:.4f}, standard deviation {stats['punctuation_std'][head]:.4f} over 24 texts")
    panel.view.sortByColumn(5, Qt.SortOrder.DescendingOrder)  # on previous token
    top = int(np.argmax(stats["previous"]))
    assert panel.proxy.data(panel.proxy.index(0, 0)) == f"0.{top}"
    np.testing.assert_allclose(panel.points(), clusters["embedding"])
    panel.colour_by.setCurrentIndex(panel.colour_by.findData("previous"))
    brushes = [spot.brush().color() for spot in panel.scatter.points()]
    assert brushes[top] == panel.colours()[top] and brushes[top] != brushes[int(np.argmin(stats["previous"]))]
    low, high = brushes[int(np.argmin(stats["previous"]))], brushes[top]  # the key names the ends' colours and values
    assert panel.colour_key.text() == (f'<span style="color:{low.name()}">●</span> {stats["previous"].min():.3f} → '
                                       f'<span style="color:{high.name()}">●</span> {stats["previous"].max():.3f}')
    panel.colour_by.setCurrentIndex(panel.colour_by.findData("layer"))
    assert panel.colour_key.text() == f'<span style="color:{low.name()}">●</span> layer 0'  # one layer, one colour
    panel.colour_by.setCurrentIndex(panel.colour_by.findData("previous"))
    panel.view.doubleClicked.emit(panel.proxy.index(0, 0))  # the top head opens on its typical sentence
    settle(window, qtbot)
    c = window.controller
    assert (c.head, c.config.text, c.ablate) == (top, str(stats["typical_sentence"][top]), frozenset({(0, 1)}))
    assert c.config.text == sentences(24)[int(stats["typical_text"][top])]
    x, y = panel.selected_point.getData()
    assert (float(x[0]), float(y[0])) == tuple(clusters["embedding"][top])
    assert window.docks["corpus"].isVisible() and window.dock_groups.current == "analysis"


def test_a_folder_without_a_job_is_one_line(window, qtbot, tmp_path):
    panel = dock(window, "corpus")
    settle(window, qtbot)
    panel.open_folder(str(tmp_path))
    qtbot.waitUntil(lambda: "holds no finished corpus job" in panel.caption.text(), timeout=10000)
    assert panel.table_model.rowCount() == 0 and len(panel.points()) == 0


def test_the_joint_query_key_map_follows_the_table(window, qtbot, toy_job):
    panel = dock(window, "corpus")
    settle(window, qtbot)
    panel.open_folder(str(toy_job))
    qtbot.waitUntil(lambda: panel.arrays is not None, timeout=10000)
    saved = np.load(toy_job / "qk_map.npz")
    n = len(saved["token"])
    panel.tabs.setCurrentIndex(1)
    panel.view.sortByColumn(0, Qt.SortOrder.DescendingOrder)  # 0.3 first
    panel.view.setCurrentIndex(panel.proxy.index(0, 0))
    assert panel.qk_head.currentText() == "0.3"
    queries, keys = panel.qk_points()
    np.testing.assert_array_equal(queries, saved["points"][3][:n])
    np.testing.assert_array_equal(keys, saved["points"][3][n:])
    assert panel.qk_caption.text().startswith(f"Head 0.3: the queries and keys of {n:,} tokens from the first 24 texts")
    last = n - 1
    assert panel.qk_queries.opts["tip"](0, 0, last) == f"{saved['token'][last]!r}\n{sentences(24)[-1]}"
    panel.qk_method.setCurrentIndex(panel.qk_method.findData("tsne"))  # the job's t-SNE coordinates, only drawn
    m = len(saved["tsne"][3]) // 2
    queries, keys = panel.qk_points()
    np.testing.assert_array_equal(queries, saved["tsne"][3][:m])
    np.testing.assert_array_equal(keys, saved["tsne"][3][m:])
    assert "then t-SNE (perplexity 30)" in panel.qk_caption.text()
    assert panel.qk_keys.opts["tip"](0, 0, m - 1) == f"{saved['token'][m - 1]!r}\n{saved['sentence'][m - 1]}"


def test_the_dock_says_how_many_long_texts_were_skipped(standalone_panel, qtbot, tmp_path):
    from app.panels.corpus_panel import CorpusPanel
    from engine.models import load_model

    lines = sentences(24)
    toy = load_model("toy")
    long = sum(toy.tokenize(text).n > 8 for text in lines)
    assert 0 < long < 24
    path = tmp_path / "texts.txt"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    run_job(JobSpec("toy", str(path), str(tmp_path / "job"), max_tokens=8), InProcess())
    _, panel = standalone_panel(CorpusPanel, 900, 600)
    panel.open_folder(str(tmp_path / "job"))
    qtbot.waitUntil(lambda: panel.arrays is not None, timeout=10000)
    assert panel.caption.text().startswith(f"Toy engine (your settings): {24 - long} texts, 1 layers × 4 heads "
                                           f"({long} long texts skipped). ")
