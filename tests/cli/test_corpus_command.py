"""``./run corpus``: the files it writes (exact keys and values), one line for each bad input."""
import csv

import numpy as np
import pytest

from cli.commands import main
from engine.corpus.measures import CORPUS_MEASURES

from tests.engine.corpus.test_corpus import sentences


def corpus(tmp_path, *extra):
    return main(["main.py", "corpus", "--model", "toy", "--texts", str(tmp_path / "texts.txt"),
                 "--out", str(tmp_path / "job"), "--in-process", *extra])


@pytest.fixture
def texts(tmp_path):
    path = tmp_path / "texts.txt"
    path.write_bytes(("\n".join(sentences(30)) + "\n").encode() + "caf\u00e9\n".encode("latin-1"))
    return path


def test_a_job_writes_the_head_table_the_distances_and_the_map(tmp_path, texts, capsys):
    assert corpus(tmp_path, "--limit", "25", "--batch-size", "10") == 0
    out, err = capsys.readouterr()
    assert out == (f"wrote {tmp_path / 'job'}: 25 texts, 1 layers × 4 heads: head_stats.npz, head_stats.csv, "
                   f"head_clusters.npz, head_distances.csv, head_map.csv, qk_map.npz\n")
    assert err.splitlines()[-1] == f"note: skipped 1 line: 1 not UTF-8 of {texts}"
    assert "corpus: 0 / 25 texts" in err and "corpus: 25 / 25 texts" in err
    job = tmp_path / "job"
    assert sorted(p.name for p in job.iterdir()) == [
        "batch-000000.npz", "batch-000001.npz", "batch-000002.npz", "head_clusters.npz", "head_distances.csv",
        "head_map.csv", "head_stats.csv", "head_stats.npz", "manifest.json", "qk_map.npz"]
    stats = np.load(job / "head_stats.npz")
    columns = ["layer", "head", "count", *CORPUS_MEASURES, *(f"{m}_std" for m in CORPUS_MEASURES), "typical_text"]
    assert sorted(stats.files) == sorted(columns + ["texts", "skipped", "tokens", "model", "ablated_heads",
                                                 "typical_sentence"])
    with open(job / "head_stats.csv", newline="") as stream:
        rows = list(csv.reader(stream))
    assert rows[0] == columns and len(rows) == 5
    for row, head in zip(rows[1:], range(4)):
        assert row[:3] == ["0", str(head), "25"]
        assert [float(v) for v in row[3:-1]] == pytest.approx([float(stats[c][head]) for c in columns[3:-1]], abs=1e-6)
        assert int(row[-1]) == stats["typical_text"][head] and 0 <= int(row[-1]) < 25
        assert stats["typical_sentence"][head] == sentences(30)[int(row[-1])]
    clusters = np.load(job / "head_clusters.npz")
    with open(job / "head_map.csv", newline="") as stream:
        points = list(csv.reader(stream))
    assert points[0] == ["layer", "head", "x", "y"]
    np.testing.assert_allclose(np.array(points[1:], dtype=float)[:, 2:], clusters["embedding"], atol=1e-6)
    with open(job / "head_distances.csv", newline="") as stream:
        matrix = list(csv.reader(stream))
    assert matrix[0] == ["head", "0.0", "0.1", "0.2", "0.3"] and [r[0] for r in matrix[1:]] == matrix[0][1:]
    np.testing.assert_allclose(np.array([r[1:] for r in matrix[1:]], dtype=float), clusters["distance"], atol=1e-6)


@pytest.mark.parametrize("extra, message", [
    (("--ablate", "0.9"), "error: cannot switch off layer 0 head 9"),
    (("--ablate", "zero"), "error: --ablate takes layer.head pairs of whole numbers separated by commas (e.g. 0.1,3.5); got 'zero'"),
    (("--limit", "0"), "error: --limit must be at least 1, not 0"),
    (("--scheduler", "nonsense"), "error: --scheduler takes a Dask scheduler's address such as tcp://HOST:8786"),
    (("--field",), "error: argument --field: expected one argument"),
])
def test_bad_options_are_one_line(tmp_path, texts, capsys, extra, message):
    if extra[0] == "--scheduler":  # --in-process and --scheduler exclude each other: call without the former
        code = main(["main.py", "corpus", "--model", "toy", "--texts", str(texts), "--out", str(tmp_path / "job"),
                     *extra])
    else:
        code = corpus(tmp_path, *extra)
    out, err = capsys.readouterr()
    assert code == 2 and out == "" and len(err.splitlines()) == 1 and err.startswith(message)
    assert not (tmp_path / "job").exists()


def test_bad_corpus_files_and_folders_are_one_line(tmp_path, capsys):
    (tmp_path / "texts.txt").write_bytes(b"\x00\x01binary")
    assert corpus(tmp_path) == 2
    assert capsys.readouterr().err == (f"error: the corpus file '{tmp_path / 'texts.txt'}' is binary (it holds NUL "
                                       f"bytes), not text: write one text a line in UTF-8\n")
    assert not (tmp_path / "job").exists()
    (tmp_path / "texts.txt").write_text("One text.\nAnother.\n", encoding="utf-8")
    assert corpus(tmp_path) == 0
    capsys.readouterr()
    (tmp_path / "texts.txt").write_text("A third corpus.\n", encoding="utf-8")
    before = {p.name: p.read_bytes() for p in (tmp_path / "job").iterdir()}
    assert corpus(tmp_path) == 2
    err = capsys.readouterr().err
    assert err == (f"error: '{tmp_path / 'job'}' holds another job's results (its texts_sha256, texts differ from "
                   f"this job's): choose another --out folder, or empty this one\n")
    assert {p.name: p.read_bytes() for p in (tmp_path / "job").iterdir()} == before
    assert main(["main.py", "corpus", "--help"]) == 0
    assert "--scheduler ADDR" in capsys.readouterr().out


@pytest.mark.parametrize("data, says", [
    (b"", "is empty: write one text a line (UTF-8)"),
    (b"x" * 10_000_000 + b"\n", "holds no text of at most 100,000 characters: one text a line"),
    ("caf\u00e9\nna\u00efve\n".encode("latin-1"), "is not UTF-8 text (Latin-1, GBK …?): save it as UTF-8"),
    ("小明喜欢苹果\n".encode("gbk"), "is not UTF-8 text (Latin-1, GBK …?): save it as UTF-8"),
    ("One.\n".encode("utf-16"), "is UTF-16 text, not UTF-8: save it as UTF-8"),
])
def test_corpus_files_without_a_text_are_one_line_and_write_nothing(tmp_path, capsys, data, says):
    (tmp_path / "texts.txt").write_bytes(data)
    assert corpus(tmp_path) == 2
    out, err = capsys.readouterr()
    assert out == "" and err == f"error: the corpus file '{tmp_path / 'texts.txt'}' {says}\n"
    assert not (tmp_path / "job").exists()


def test_texts_over_the_token_limit_are_counted_on_the_command_line(tmp_path, capsys):
    from engine.models import load_model

    toy = load_model("toy")
    lines = sentences(30)
    long = sum(toy.tokenize(text).n > 8 for text in lines)
    assert 0 < long < 30
    (tmp_path / "texts.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
    assert corpus(tmp_path, "--max-tokens", "8") == 0
    out, _ = capsys.readouterr()
    assert f": {30 - long} texts ({long} over 8 tokens skipped), " in out.splitlines()[0]
    stats = np.load(tmp_path / "job" / "head_stats.npz")
    assert (int(stats["texts"]), int(stats["skipped"])) == (30 - long, long)


def test_the_top_help_and_an_unknown_command_name_corpus(capsys):
    assert main(["main.py", "--help"]) == 0
    out = " ".join(capsys.readouterr().out.split())  # argparse wraps the description
    assert "./run corpus --model MODEL --texts FILE --out FOLDER [options]" in out  # usage
    assert "`corpus` what each head does over a file of texts" in out  # description
    assert "./run corpus --model minilm --texts sentences.txt --out heads" in out  # examples
    assert "and `./run corpus --help` list every option" in out
    assert main(["main.py", "corpora"]) == 2
    assert capsys.readouterr().err == ("error: unknown command 'corpora': use `export`, `patch` or `corpus` (see --help), "
                                       "or no arguments for the window\n")


def test_no_tsne_writes_the_pca_map_alone_and_the_same_command_adds_the_view(tmp_path, texts, capsys):
    """--no-tsne: qk_map.npz without its t-SNE view and every other array as a full job's; the same
    command without the flag on that folder computes no batch again and adds the view a full job has."""
    def run(out, *extra):
        code = main(["main.py", "corpus", "--model", "toy", "--texts", str(texts), "--out", str(tmp_path / out),
                     "--in-process", "--limit", "6", "--batch-size", "2", *extra])
        return code, capsys.readouterr().err

    assert run("whole")[0] == 0
    assert run("job", "--no-tsne")[0] == 0
    whole, pca_only = np.load(tmp_path / "whole" / "qk_map.npz"), np.load(tmp_path / "job" / "qk_map.npz")
    assert "tsne" in whole.files and sorted(pca_only.files) == sorted(set(whole.files) - {"tsne"})
    for key in pca_only.files:
        np.testing.assert_array_equal(pca_only[key], whole[key], err_msg=key)
    shards = {p.name: p.stat().st_mtime_ns for p in (tmp_path / "job").glob("batch-*.npz")}
    code, err = run("job")
    assert code == 0 and err.splitlines()[0] == "corpus: 6 / 6 texts"  # every batch already saved
    assert {p.name: p.stat().st_mtime_ns for p in (tmp_path / "job").glob("batch-*.npz")} == shards
    added = np.load(tmp_path / "job" / "qk_map.npz")
    assert sorted(added.files) == sorted(whole.files)
    np.testing.assert_array_equal(added["tsne"], whole["tsne"])
