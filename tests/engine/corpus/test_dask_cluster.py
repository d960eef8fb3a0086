"""Corpus jobs on a real local Dask cluster (a scheduler and two worker processes): the same numbers
as in this process, a worker killed mid-job, the job's own process killed and the job resumed."""
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from tests import ROOT
from engine.corpus.runner import InProcess, JobSpec, run_job
from engine.corpus.shards import complete_batches, read_shard

from tests.engine.corpus.test_corpus import folder_arrays, sentences

pytest.importorskip("distributed")
pytestmark = pytest.mark.slow
TEXTS, BATCH = 40, 4
# waits for what must happen (a batch saved, a job finished) end as soon as it does: generous limits cost
# time only when it never happens (at load average 13 a resumed job with its t-SNE took over 120 s)
SETTLE_SECONDS = 600


def job_spec(model: str, corpus_path: Path, out: Path, batch_size: int = BATCH) -> JobSpec:
    """A job without the t-SNE view of the query-key maps (--no-tsne): the job's own process computes
    it at the end from the saved shards, whatever ran the batches (test_corpus.py checks it), at about
    22 s of CPU a MiniLM job (72 heads), five jobs here; the PCA view still compares the shards'
    queries and keys."""
    return JobSpec(model, str(corpus_path), str(out), batch_size=batch_size, tsne=False)


@pytest.fixture(scope="module")
def corpus_path(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("corpus") / "texts.txt"
    path.write_text("\n".join(sentences(TEXTS)) + "\n", encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def minilm_reference(corpus_path, tmp_path_factory) -> dict:
    """The MiniLM job computed in this process without interruption: what every other run must equal."""
    out = tmp_path_factory.mktemp("reference") / "job"
    run_job(job_spec("minilm", corpus_path, out), InProcess())
    return folder_arrays(out)


@pytest.fixture(scope="module")
def cluster():
    from engine.corpus.dask_executor import DaskExecutor

    executor = DaskExecutor("local", workers=2)
    yield executor
    executor.close()


def assert_same(got: dict, expected: dict) -> None:
    assert got.keys() == expected.keys()
    for key in expected:
        np.testing.assert_array_equal(got[key], expected[key], err_msg=key)


def every_text_once(folder: Path, batches: int) -> list[int]:
    return sorted(int(i) for b in range(batches) for i in read_shard(folder, b)["text_index"])


def test_a_local_cluster_gives_the_numbers_of_this_process(cluster, corpus_path, tmp_path):
    assert len(cluster.client.nthreads()) == 2  # two worker processes behind a real scheduler
    pids = set(cluster.client.run(os.getpid).values())
    assert len(pids) == 2 and os.getpid() not in pids
    here = run_job(job_spec("toy", corpus_path, tmp_path / "here", 3), InProcess())
    there = run_job(job_spec("toy", corpus_path, tmp_path / "there", 3), cluster)
    assert there.computed == here.computed == 14
    assert_same(folder_arrays(tmp_path / "there"), folder_arrays(tmp_path / "here"))


def test_a_worker_killed_mid_job_is_retried_and_counted_once(cluster, corpus_path, minilm_reference, tmp_path):
    client, killed = cluster.client, []

    def kill_a_busy_worker(done, total, elapsed, done_here):
        if killed or not done_here:
            return
        busy = [address for address, keys in client.processing().items() if keys]
        assert busy, "no batch in flight to lose"
        pid = client.run(os.getpid, workers=[busy[0]])[busy[0]]
        os.kill(pid, signal.SIGKILL)
        killed.append((pid, len(client.processing()[busy[0]])))

    out = tmp_path / "job"
    result = run_job(job_spec("minilm", corpus_path, out), cluster, kill_a_busy_worker)
    assert killed and killed[0][1] >= 1  # the worker died holding at least one batch
    assert result.summary.texts == TEXTS
    assert every_text_once(out, TEXTS // BATCH) == list(range(TEXTS))
    assert_same(folder_arrays(out), minilm_reference)


def corpus_command(corpus_path: Path, out: Path, *extra: str) -> list[str]:
    return [sys.executable, str(ROOT / "main.py"), "corpus", "--model", "minilm", "--texts", str(corpus_path),
            "--out", str(out), "--batch-size", str(BATCH), "--no-tsne", *extra]


def test_the_job_killed_mid_run_resumes_and_equals_an_uninterrupted_run(corpus_path, minilm_reference, tmp_path):
    out = tmp_path / "job"
    job = subprocess.Popen(corpus_command(corpus_path, out), cwd=ROOT, start_new_session=True,
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + SETTLE_SECONDS
        while time.monotonic() < deadline and (not out.is_dir() or len(complete_batches(out)) < 2):
            assert job.poll() is None, job.stderr.read().decode()
            time.sleep(0.01)
    finally:
        os.killpg(job.pid, signal.SIGKILL)  # the job's process and its cluster's workers (its session)
        job.wait(10)
        job.stderr.close()
    saved = complete_batches(out)
    assert 2 <= len(saved) < TEXTS // BATCH and not (out / "head_stats.npz").exists()
    done = subprocess.run(corpus_command(corpus_path, out, "--in-process"), cwd=ROOT, capture_output=True,
                          text=True, timeout=SETTLE_SECONDS)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(f"wrote {out}: {TEXTS} texts, 6 layers × 12 heads")
    assert f"corpus: {len(saved) * BATCH} / {TEXTS} texts" in done.stderr  # it started from the saved batches
    assert_same(folder_arrays(out), minilm_reference)


def test_ctrl_c_leaves_a_folder_the_same_command_resumes(corpus_path, minilm_reference, tmp_path):
    out = tmp_path / "job"
    # Ctrl+C at a terminal: SIGINT at its default in the job, whatever this test process inherited (a
    # process started in the background by a shell, as test runners may be, has SIGINT ignored, and an
    # ignored signal stays ignored across exec: the job then finished and exited 0 under the suite)
    job = subprocess.Popen(corpus_command(corpus_path, out, "--in-process"), cwd=ROOT, start_new_session=True,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                           preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    deadline = time.monotonic() + SETTLE_SECONDS
    while time.monotonic() < deadline and (not out.is_dir() or not complete_batches(out)):
        time.sleep(0.01)
    os.killpg(job.pid, signal.SIGINT)
    stdout, stderr = job.communicate(timeout=SETTLE_SECONDS)
    assert job.returncode == 130 and stdout == ""
    assert stderr.splitlines()[-1] == ("error: interrupted by SIGINT: the finished batches are saved; the same "
                                       "command resumes the job") and "Traceback" not in stderr
    done = subprocess.run(corpus_command(corpus_path, out, "--in-process"), cwd=ROOT, capture_output=True,
                          text=True, timeout=SETTLE_SECONDS)
    assert done.returncode == 0, done.stderr
    assert_same(folder_arrays(out), minilm_reference)


def test_an_unreachable_scheduler_is_one_line_at_once(corpus_path, tmp_path, capsys, monkeypatch):
    from cli.corpus import main

    # timed in this process, where Python, NumPy and Dask are imported already: a refused port is said at
    # once, Dask's client would retry it for its whole 5 s (a fresh interpreter's start took 9 s of the
    # old 10 s bound at load average 13); the job's own process below says it in one line, untimed
    monkeypatch.setenv("DASK_LOGGING__DISTRIBUTED", "critical")  # as the job sets it, undone after
    started = time.monotonic()
    assert main(["--model", "minilm", "--texts", str(corpus_path), "--out", str(tmp_path / "here"),
                 "--scheduler", "tcp://127.0.0.1:9"]) == 2
    assert time.monotonic() - started < 4
    assert capsys.readouterr().err.startswith("error: cannot reach the Dask scheduler at tcp://127.0.0.1:9 within 5 s")
    done = subprocess.run(corpus_command(corpus_path, tmp_path / "job", "--scheduler", "tcp://127.0.0.1:9"), cwd=ROOT,
                          capture_output=True, text=True, timeout=SETTLE_SECONDS)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.splitlines() == [done.stderr.strip()]
    assert done.stderr.startswith("error: cannot reach the Dask scheduler at tcp://127.0.0.1:9 within 5 s")
    assert not (tmp_path / "job").exists() and not (tmp_path / "here").exists()  # the job not started


def free_port() -> int:
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def test_a_scheduler_that_dies_mid_job_stops_it_resumable(corpus_path, minilm_reference, tmp_path):
    """A user's cluster (`dask scheduler`, `dask worker` started elsewhere: their folder is not this
    project's, so the worker imports the engine the job uploads), its scheduler killed mid-job."""
    from engine.core.errors import EngineError
    from engine.corpus.dask_executor import DaskExecutor

    address = f"tcp://127.0.0.1:{free_port()}"
    dask = str(Path(sys.executable).parent / "dask")
    scheduler = subprocess.Popen([dask, "scheduler", "--host", "127.0.0.1", "--port", address.rsplit(":", 1)[1],
                                  "--no-dashboard"], cwd=tmp_path, start_new_session=True, stderr=subprocess.DEVNULL)
    worker = subprocess.Popen([dask, "worker", address, "--nthreads", "1", "--no-dashboard", "--no-nanny"],
                              cwd=tmp_path, start_new_session=True, stderr=subprocess.DEVNULL,
                              env={**os.environ, "PYTHONPATH": ""})
    lost = []

    def kill_the_scheduler(done, total, elapsed, done_here):
        if done_here and not lost:
            os.killpg(scheduler.pid, signal.SIGKILL)
            lost.append(done)

    try:
        executor = None
        deadline = time.monotonic() + 30
        while executor is None:
            try:
                executor = DaskExecutor(address)
            except EngineError:
                assert time.monotonic() < deadline, "the scheduler did not start"
                time.sleep(0.2)
        with executor, pytest.raises(EngineError, match=r"the Dask cluster \(the Dask scheduler at .*\) stopped "
                                                        r"answering .* run the same command again to resume"):
            run_job(job_spec("minilm", corpus_path, tmp_path / "job"), executor, kill_the_scheduler)
    finally:
        for process in (scheduler, worker):
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGKILL)
            process.wait(10)
    saved = complete_batches(tmp_path / "job")
    assert lost and 1 <= len(saved) < TEXTS // BATCH
    run_job(job_spec("minilm", corpus_path, tmp_path / "job"), InProcess())
    assert_same(folder_arrays(tmp_path / "job"), minilm_reference)


@pytest.mark.filterwarnings("ignore:Port .* is already in use")
def test_a_scheduler_without_workers_is_one_line(monkeypatch):
    import distributed

    from engine.core.errors import EngineError
    from engine.corpus import dask_executor

    monkeypatch.setattr(dask_executor, "WORKER_SECONDS", 1)
    with distributed.LocalCluster(n_workers=0, processes=True, dashboard_address=None) as empty:  # a tcp:// scheduler
        with dask_executor.DaskExecutor(empty.scheduler_address) as executor:
            with pytest.raises(EngineError, match=r"the Dask scheduler at tcp://.* has no workers \(waited 1 s\): "
                                                  r"start some with `dask worker tcp://"):
                executor.facts("toy")
