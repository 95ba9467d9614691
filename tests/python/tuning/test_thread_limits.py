"""The worker count cooperates with the host: settable at any time, read from the environment
that joblib's loky backend and Dask's nanny set in their workers, visible to and limited by
threadpoolctl, and never a cause of different results.

Busy threads are counted by ``_native.parallel._peak_workers``: a parallel loop started the
way every native call starts, whose items wait (bounded) until ``target`` of them run at once,
so the peak reaches the available workers by an event, not a sleep, and can never exceed the
workers the call really has."""

import os
import subprocess
import sys

import numpy as np
import pytest

import rustyml
from rustyml import _native, parallel, tuning
from rustyml import machine_learning as ml
from rustyml.math import matmul, reduction

WAIT_S = 5.0  # upper bound for the peak probe's rendezvous; reached only when it fails


def peak(target):
    return _native.parallel._peak_workers(8 * target, target, WAIT_S)


@pytest.fixture
def restore_count():
    before = parallel.get_num_threads()
    yield
    parallel.set_num_threads(before)


def test_the_count_changes_after_first_use_and_caps_busy_threads(restore_count):
    matmul.dot(np.ones((300, 300)), np.ones((300, 300)))  # the pools are in use now
    parallel.set_num_threads(1)
    assert parallel.get_num_threads() == 1
    assert _native.parallel._peak_workers(4, 2, 0.05) == 1
    parallel.set_num_threads(2)
    assert parallel.get_num_threads() == 2
    assert peak(2) == 2
    # a width the global pool does not have runs in a pool of exactly that width
    odd = _native.parallel.cores() + 1
    parallel.set_num_threads(odd)
    assert peak(odd) == odd
    assert _native.parallel._peak_workers(8 * odd, odd + 1, 0.05) == odd


def test_context_manager_restores_the_count_also_on_error(restore_count):
    parallel.set_num_threads(2)
    with parallel.num_threads(1):
        assert parallel.get_num_threads() == 1
        assert _native.parallel._peak_workers(4, 2, 0.05) == 1
    assert parallel.get_num_threads() == 2
    with pytest.raises(KeyError), parallel.num_threads(3):
        assert parallel.get_num_threads() == 3
        raise KeyError("inside")
    assert parallel.get_num_threads() == 2


@pytest.mark.parametrize("bad", [0, -1, 10**6, 2**70])
def test_counts_out_of_range_are_refused_and_change_nothing(restore_count, bad):
    parallel.set_num_threads(2)
    with pytest.raises(ValueError, match="num_threads must be between 1 and"):
        parallel.set_num_threads(bad)
    assert parallel.get_num_threads() == 2


@pytest.mark.parametrize("bad", [2.5, True, "2"])
def test_non_integer_counts_are_a_type_error(restore_count, bad):
    with pytest.raises(TypeError, match="num_threads must be an integer"):
        parallel.set_num_threads(bad)


def test_former_names_work_at_any_time(restore_count):
    parallel.build_global(1)  # used to fail once anything had touched the pool
    assert parallel.current_num_threads() == 1
    parallel.set_num_threads(None)
    assert parallel.get_num_threads() >= 1


def _import_count(**env):
    code = (
        "import rustyml.parallel as p; "
        "print(p.get_num_threads(), p.startup_source(), p._native.parallel.cores())"
    )
    full = {
        k: v for k, v in os.environ.items() if k not in ("RAYON_NUM_THREADS", "OMP_NUM_THREADS")
    }
    full.update(env)
    out = subprocess.run(
        [sys.executable, "-c", code],
        env=full,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert out.returncode == 0, out.stderr
    count, source, cores = out.stdout.split()
    return int(count), source, int(cores)


def test_environment_sets_the_count_at_import():
    assert _import_count(RAYON_NUM_THREADS="3", OMP_NUM_THREADS="1")[:2] == (
        3,
        "RAYON_NUM_THREADS",
    )
    assert _import_count(OMP_NUM_THREADS="1")[:2] == (1, "OMP_NUM_THREADS")
    # OpenMP's nested form: the outermost level counts
    assert _import_count(OMP_NUM_THREADS="2,1")[:2] == (2, "OMP_NUM_THREADS")
    # rayon's "automatic" and a missing variable both mean the machine's width
    count, source, cores = _import_count(RAYON_NUM_THREADS="0", OMP_NUM_THREADS="1")
    assert (count, source) == (cores, "None")
    count, source, cores = _import_count()
    assert (count, source) == (cores, "None")


def test_threadpoolctl_lists_and_limits_rustyml(restore_count):
    threadpoolctl = pytest.importorskip("threadpoolctl")
    if not hasattr(threadpoolctl, "register"):
        pytest.skip("this threadpoolctl has no registration API")
    parallel.set_num_threads(2)
    ours = [i for i in threadpoolctl.threadpool_info() if i["internal_api"] == "rustyml"]
    assert len(ours) == 1
    assert ours[0]["user_api"] == "rayon"
    assert ours[0]["num_threads"] == 2
    assert ours[0]["version"] == rustyml.__version__
    with threadpoolctl.threadpool_limits(limits=1):
        assert parallel.get_num_threads() == 1
        assert _native.parallel._peak_workers(4, 2, 0.05) == 1
    assert parallel.get_num_threads() == 2
    with threadpoolctl.threadpool_limits(limits=1, user_api="rayon"):
        assert parallel.get_num_threads() == 1
    with threadpoolctl.threadpool_limits(limits=1, user_api="blas"):
        assert parallel.get_num_threads() == 2  # a BLAS limit is not ours


def _worker_view():
    """What a worker process sees: its count, where it came from, its busy-thread peak."""
    import rustyml.parallel as p

    return (
        p.get_num_threads(),
        p.startup_source(),
        p._native.parallel._peak_workers(16, 2, 0.2),
    )


def test_loky_workers_with_one_inner_thread_do_not_oversubscribe(monkeypatch):
    # a RAYON_NUM_THREADS of the calling process would outrank what joblib sets
    monkeypatch.delenv("RAYON_NUM_THREADS", raising=False)
    joblib = pytest.importorskip("joblib")
    cloudpickle = pytest.importorskip("cloudpickle")  # joblib's pickler for functions

    cloudpickle.register_pickle_by_value(sys.modules[__name__])
    try:
        with joblib.parallel_config(backend="loky", inner_max_num_threads=1):
            views = joblib.Parallel(n_jobs=2, timeout=120)(
                joblib.delayed(_worker_view)() for _ in range(2)
            )
    finally:
        cloudpickle.unregister_pickle_by_value(sys.modules[__name__])
    assert views == [(1, "OMP_NUM_THREADS", 1)] * 2


def test_dask_workers_do_not_oversubscribe(monkeypatch):
    monkeypatch.delenv("RAYON_NUM_THREADS", raising=False)
    distributed = pytest.importorskip("distributed")
    cluster = distributed.LocalCluster(
        n_workers=2,
        threads_per_worker=1,
        processes=True,
        host="127.0.0.1",
        dashboard_address=None,
        worker_dashboard_address=None,
    )
    try:
        with distributed.Client(cluster, timeout=120) as client:
            futures = [client.submit(_worker_view, pure=False) for _ in range(2)]
            views = client.gather(futures, errors="raise")
    finally:
        cluster.close(timeout=60)
    # the nanny sets OMP_NUM_THREADS=1 in its workers (distributed.nanny.pre-spawn-environ)
    assert views == [(1, "OMP_NUM_THREADS", 1)] * 2


def _results():
    rng = np.random.default_rng(7)
    a = rng.standard_normal((300, 200))
    b = rng.standard_normal((200, 250))
    big = rng.standard_normal(1_000_000)
    X = np.vstack([rng.normal(c, 1.0, size=(600, 6)) for c in (-3.0, 0.0, 3.0, 6.0)])
    km = ml.KMeans(n_clusters=4, n_init=3, random_state=0).fit(X)
    return {
        "product": matmul.dot(a, b),
        "reduction": np.array([reduction.sum(big), reduction.sq_sum(big)]),
        "kmeans centers": km.cluster_centers_,
        "kmeans labels": km.labels_,
        "kmeans inertia": np.array([km.inertia_]),
    }


def test_results_are_bit_identical_at_every_count(restore_count, gate):
    # every gate forced parallel, so more than one worker really runs whenever allowed
    for family, name, *_ in tuning.gates():
        gate(getattr(tuning, family), name, tuning.PARALLEL)
    runs = {}
    for count in (1, 2, _native.parallel.cores() + 1):
        parallel.set_num_threads(count)
        runs[count] = _results()
    first, *others = runs.values()
    for other in others:
        for key in first:
            assert first[key].tobytes() == other[key].tobytes(), key
