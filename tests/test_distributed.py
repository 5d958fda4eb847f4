"""Distributed training on a real local Dask cluster of 2 workers (lgb_risk.distributed)."""

import logging
import os
import re
import signal
import time

import numpy as np
import pytest

#: Every test here starts processes, clusters or tools: outside the quick loop.
pytestmark = pytest.mark.slow

pytest.importorskip("distributed")
lgb = pytest.importorskip("lightgbm")

from distributed import Client, LocalCluster  # noqa: E402

from lgb_risk import TSARO, GeoRisk, LambdaMART, TStarFARO, distributed  # noqa: E402
from lgb_risk._training import dask_ranks  # noqa: E402
from lgb_risk.feval import ndcg_feval, risk_feval  # noqa: E402
from tests import distributed_objectives as helpers  # noqa: E402

PARAMS = {"learning_rate": 0.1, "num_leaves": 7, "min_data_in_leaf": 5, "verbose": -1,
          "deterministic": True}


def ranking_set(n_queries, seed):
    """Queries whose difficulty follows their position: the first half easy (labels follow
    feature 0), the second half hard (labels mostly noise), so that each worker's shard has
    statistics far from the whole set's."""
    rng = np.random.default_rng(seed)
    group = rng.integers(8, 30, n_queries)
    hard = np.repeat(np.arange(n_queries) >= n_queries // 2, group)
    X = rng.normal(size=(group.sum(), 6))
    signal = np.where(hard, 0.2, 2.0) * X[:, 0] + rng.normal(size=group.sum())
    y = np.clip(np.round(signal) + 1, 0, 4).astype(int)
    return X, y, group


@pytest.fixture(scope="module")
def client():
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                      dashboard_address=":0", silence_logs=logging.ERROR) as cluster:
        # Not the process's default client: the tests that pass no client= train on a local
        # cluster started for the call, as a script without a client does.
        with Client(cluster, set_as_default=False) as c:
            yield c


@pytest.fixture(scope="module")
def data():
    X, y, group = ranking_set(80, 0)
    rng = np.random.default_rng(1)
    half = group.size // 2
    baselines = np.concatenate([rng.uniform(0.6, 1.0, (half, 3)),
                                rng.uniform(0.0, 0.3, (group.size - half, 3))])
    return X, y, group, baselines


def test_shards_hold_whole_queries_balanced_by_documents():
    group = np.array([5, 5, 5, 5, 100, 5, 5, 5, 5, 5])
    bounds = distributed.shard_bounds(group, 2)
    assert bounds.tolist() == [0, 5, 10]  # 120 documents against 25
    docs = [group[a:b].sum() for a, b in zip(bounds[:-1], bounds[1:])]
    assert abs(docs[0] - docs[1]) == 95
    rng = np.random.default_rng(0)
    group = rng.integers(1, 50, 500)
    for n in (2, 3, 4):
        bounds = distributed.shard_bounds(group, n)
        docs = np.array([group[a:b].sum() for a, b in zip(bounds[:-1], bounds[1:])])
        assert bounds[0] == 0 and bounds[-1] == 500 and np.all(np.diff(bounds) > 0)
        assert np.all(np.abs(docs - group.sum() / n) <= 49)  # within one query of the target
    with pytest.raises(ValueError, match="3 workers need at least 3 training queries"):
        distributed.shard_bounds([4, 4], 3)


@pytest.mark.parametrize("make", [
    lambda b: (helpers.RecordingTSARO(alpha=5, baseline=b[:, 0]),
               TSARO(alpha=5, baseline=b[:, 0])),
    lambda b: (helpers.RecordingTStarFARO(alpha=5, baselines=b),
               TStarFARO(alpha=5, baselines=b)),
    lambda b: (helpers.RecordingGeoRisk(alpha=5, baselines=b), GeoRisk(alpha=5, baselines=b)),
    lambda b: (helpers.RecordingTSARO(alpha=5, baseline=b[:, 0], measure="err@5"),
               TSARO(alpha=5, baseline=b[:, 0], measure="err@5")),
], ids=["T-SARO", "T*-FARO", "GeoRisk", "T-SARO toward ERR@5"])
def test_gradients_across_ranks_equal_one_machine(client, data, tmp_path, make):
    """Each iteration's gradients, reassembled from the two ranks in query order, equal the
    single-machine objective's for the same predictions, bit for bit; the ranks' local
    statistics alone would not give them."""
    X, y, group, baselines = data
    recording, reference = make(baselines)
    recording.record_dir = str(tmp_path)
    distributed.train(PARAMS, X, y, group, objective=recording, num_boost_round=6,
                      client=client)
    bounds = distributed.shard_bounds(group, 2)
    offsets = np.concatenate([[0], np.cumsum(group)])
    local_differs = False
    for call in range(1, 7):
        parts = [np.load(tmp_path / f"rank{r}_call{call}.npz") for r in (0, 1)]
        preds = np.concatenate([p["preds"] for p in parts])
        grad, hess = reference.gradients(preds, y, group)
        assert np.array_equal(np.concatenate([p["grad"] for p in parts]), grad)
        assert np.array_equal(np.concatenate([p["hess"] for p in parts]), hess)
        # The same objective on rank 1's shard alone, with that shard's statistics only:
        a, b = bounds[1], bounds[2]
        alone = type(reference)(**_parameters(reference),
                                **_baselines_of(reference, slice(a, b)))
        docs = slice(offsets[a], offsets[b])
        local, _ = alone.gradients(preds[docs], y[docs], group[a:b])
        local_differs |= not np.array_equal(local, parts[1]["grad"])
    assert local_differs


def _parameters(objective):
    names = ("alpha", "k", "se_update", "delta", "measure")
    return {n: getattr(objective, n) for n in names if hasattr(objective, n)}


def _baselines_of(objective, queries):
    if objective.baseline_parameter == "baseline":
        return {"baseline": objective.baseline[queries]}
    return {"baselines": objective.baselines[queries]}


def test_gradients_with_four_ranks_equal_one_machine(data, tmp_path):
    X, y, group, baselines = data
    recording = helpers.RecordingGeoRisk(alpha=5, baselines=baselines)
    recording.record_dir = str(tmp_path)
    reference = GeoRisk(alpha=5, baselines=baselines)
    distributed.train(PARAMS, X, y, group, objective=recording, num_boost_round=3, n_workers=4)
    for call in range(1, 4):
        parts = [np.load(tmp_path / f"rank{r}_call{call}.npz") for r in range(4)]
        grad, hess = reference.gradients(np.concatenate([p["preds"] for p in parts]), y, group)
        assert np.array_equal(np.concatenate([p["grad"] for p in parts]), grad)
        assert np.array_equal(np.concatenate([p["hess"] for p in parts]), hess)


def test_concurrent_trainings_on_the_same_workers_take_turns(client, data):
    """LightGBM's network is one per process: two calls at once on the same workers run one
    after the other (the workers are locked), and each gives the model it gives alone."""
    from concurrent.futures import ThreadPoolExecutor

    X, y, group, baselines = data
    objectives = [TSARO(alpha=5, baseline=baselines[:, 0]), TStarFARO(alpha=1, baselines=baselines)]
    alone = [distributed.train(PARAMS, X, y, group, objective=o, num_boost_round=8,
                               client=client).predict(X) for o in objectives]
    with ThreadPoolExecutor(2) as pool:
        together = list(pool.map(lambda o: distributed.train(
            PARAMS, X, y, group, objective=o, num_boost_round=8, client=client).predict(X),
            objectives))
    for a, b in zip(alone, together):
        assert np.array_equal(a, b)


def test_lambdamart_equals_lightgbms_own_distributed_lambdarank(client, data):
    X, y, group, _ = data
    ours = distributed.train(PARAMS, X, y, group, objective=LambdaMART(), num_boost_round=15,
                             client=client)
    native = distributed.train(PARAMS, X, y, group, objective="lambdarank", num_boost_round=15,
                               client=client)
    assert ours.num_trees() == native.num_trees() == 15
    assert np.array_equal(ours.predict(X), native.predict(X))


def test_early_stopping_stops_every_rank_at_the_same_iteration(client, data):
    """The validation NDCG@10 and URisk are computed over the whole validation set on every
    rank: the ranks stop together, and the reported best score is the returned model's score
    on the whole validation set."""
    X, y, group, baselines = data
    Xv, yv, gv = ranking_set(40, 2)
    valid_baseline = np.random.default_rng(3).uniform(0, 1, gv.size)
    timings = []
    booster = distributed.train(
        {**PARAMS, "learning_rate": 0.3}, X, y, group,
        objective=TSARO(alpha=5, baseline=baselines[:, 0]), num_boost_round=200,
        valid=(Xv, yv, gv), feval=[ndcg_feval(10), risk_feval(valid_baseline, alpha=5)],
        early_stopping_rounds=3, client=client, timings=timings)
    assert len(timings) == 2
    assert timings[0]["iterations"] == timings[1]["iterations"] < 200
    assert timings[0]["best_iteration"] == timings[1]["best_iteration"] == booster.best_iteration
    assert timings[0]["iterations"] == booster.best_iteration + 3
    preds = booster.predict(Xv, num_iteration=booster.best_iteration)
    whole = ndcg_feval(10)(yv, preds, None, gv)[1]
    assert booster.best_score["valid"]["ndcg@10[default]"] == pytest.approx(whole, abs=1e-12)
    urisk = risk_feval(valid_baseline, alpha=5)(yv, preds, None, gv)[1]
    assert booster.best_score["valid"]["urisk@10[a=5, default]"] == pytest.approx(urisk, abs=1e-12)


def test_a_rank_that_raises_fails_the_call_quickly(client, data):
    X, y, group, baselines = data
    start = time.monotonic()
    with pytest.raises(RuntimeError, match="failing on purpose") as raised:
        distributed.train(PARAMS, X, y, group,
                          objective=helpers.FailingTSARO(alpha=5, baseline=baselines[:, 0]),
                          num_boost_round=50, client=client, timeout=60)
    assert time.monotonic() - start < 20
    assert "raised on rank 1 of 2" in "".join(getattr(raised.value, "__notes__", []))
    # The workers are free again: the next training runs.
    booster = distributed.train(PARAMS, X, y, group, num_boost_round=2, client=client)
    assert booster.num_trees() == 2


def test_bad_arguments_are_refused_before_any_training(client, data):
    X, y, group, baselines = data
    with pytest.raises(ValueError, match="delta='exact'"):
        distributed.train(PARAMS, X, y, group, client=client,
                          objective=GeoRisk(baselines=baselines, delta="exact"))
    with pytest.raises(ValueError, match="params set tree_learner: distributed.train sets the "
                                         "network"):
        distributed.train({**PARAMS, "tree_learner": "feature"}, X, y, group, client=client)
    with pytest.raises(ValueError, match="params set metric: .* evaluation, which is by feval="):
        distributed.train({**PARAMS, "metric": "ndcg"}, X, y, group, client=client)
    with pytest.raises(ValueError, match="lgb_risk's fevals"):
        distributed.train(PARAMS, X, y, group, client=client, valid=(X, y, group),
                          feval=lambda preds, data: ("x", 0.0, True))
    with pytest.raises(ValueError, match="needs a validation set"):
        distributed.train(PARAMS, X, y, group, client=client, early_stopping_rounds=3)
    with pytest.raises(ValueError, match=r"valid must be a tuple \(X_valid, y_valid"):
        distributed.train(PARAMS, X, y, group, client=client, valid=(X, y))
    with pytest.raises(ValueError, match=r"training set: X must be .* got shapes \(\d+, 6\) "
                                         r"and \(10,\)"):
        distributed.train(PARAMS, X, y[:10], group, client=client)
    with pytest.raises(ValueError, match="n_workers=3 but the cluster has 2"):
        distributed.train(PARAMS, X, y, group, client=client, n_workers=3)
    for bad in (0, -1, 1.5):
        with pytest.raises(ValueError, match=f"n_workers must be a whole number >= 1, got "
                                             f"{bad}"):
            distributed.train(PARAMS, X, y, group, client=client, n_workers=bad)
    with pytest.raises(ValueError, match="the validation set has 4 features and the training "
                                         "set 6"):
        distributed.train(PARAMS, X, y, group, client=client, valid=(X[:, :4], y, group),
                          feval=ndcg_feval(10), early_stopping_rounds=3)


def test_a_killed_worker_fails_the_call_within_the_timeout(data):
    """Rank 1's process is killed (SIGKILL) mid-training; the call fails naming the worker, well
    within the timeout (here on a local cluster started for the call, the default)."""
    X, y, group, baselines = data
    dying = helpers.FailingTSARO(alpha=5, baseline=baselines[:, 0])
    dying.die = True
    start = time.monotonic()
    with pytest.raises(RuntimeError, match=r"worker tcp://\S+ \(rank 1\) died during "
                                           "distributed training"):
        distributed.train(PARAMS, X, y, group, objective=dying, num_boost_round=50,
                          n_workers=2, timeout=15)
    assert time.monotonic() - start < 15 + 45  # the timeout, plus the cluster's start and end


def test_a_hung_rank_fails_the_call_after_the_timeout(data):
    X, y, group, baselines = data
    hanging = helpers.FailingTSARO(alpha=5, baseline=baselines[:, 0])
    hanging.hang = True
    start = time.monotonic()
    with pytest.raises(TimeoutError, match=r"waited 5 s|made no progress for 5 s"):
        distributed.train(PARAMS, X, y, group, objective=hanging, num_boost_round=50,
                          n_workers=2, timeout=5)
    assert 5 <= time.monotonic() - start < 5 + 45  # plus the cluster's start and end


def test_without_client_the_callers_default_client_is_used(client, data, monkeypatch):
    """A script that made a Client trains on it: no local cluster is started."""
    import lgb_risk._runtime.dask_client

    def no_local_cluster(*args, **kwargs):
        raise AssertionError("a local cluster was started although a default client exists")

    monkeypatch.setattr(lgb_risk._runtime.dask_client, "dask_client", no_local_cluster)
    X, y, group, _ = data
    timings = []
    with Client(client.scheduler.address):  # the default client, as a script's would be
        booster = distributed.train(PARAMS, X, y, group, num_boost_round=3, timings=timings)
    assert booster.current_iteration() == 3 and len(timings) == 2


def test_each_ranks_port_stays_bound_until_its_rank_takes_it():
    """A port found free and let go at once can be taken before LightGBM binds it; a reserved
    one cannot, until it is released."""
    import errno
    import socket

    port = dask_ranks.reserve_port("test-key")
    try:
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as other:
            with pytest.raises(OSError) as taken:
                other.bind(("", port))
            assert taken.value.errno == errno.EADDRINUSE
    finally:
        dask_ranks.release_port("test-key")
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as other:
        other.bind(("", port))  # free once released
    dask_ranks.release_port("test-key")  # releasing twice is harmless


def test_two_ranks_given_the_same_address_are_refused():
    class Port:
        def result(self, timeout):
            return 40123

    class SameHostSamePort:  # a client whose workers share a host and report the same port
        def submit(self, function, key, **kwargs):
            return Port()

    with pytest.raises(RuntimeError, match=r"same network address 10\.0\.0\.5:40123 \(workers "
                                           r"tcp://10\.0\.0\.5:1, tcp://10\.0\.0\.5:2\)"):
        distributed._held_machines(SameHostSamePort(), ["tcp://10.0.0.5:1", "tcp://10.0.0.5:2"],
                                   "key", timeout=5)


def test_a_cluster_without_workers_is_named_within_the_timeout(data):
    """A scheduler with no worker: the call waits for one up to the timeout, then says so."""
    X, y, group, _ = data
    with LocalCluster(n_workers=0, processes=False, dashboard_address=":0",
                      silence_logs=logging.ERROR) as cluster:
        with Client(cluster, set_as_default=False) as empty:
            start = time.monotonic()
            with pytest.raises(TimeoutError, match=r"the Dask cluster at .* has no workers "
                                                   r"\(waited 2 s\)"):
                distributed.train(PARAMS, X, y, group, num_boost_round=2, client=empty,
                                  timeout=2)
            assert time.monotonic() - start < 10


def test_a_client_view_listing_no_worker_is_not_a_lost_rank(client, data, monkeypatch):
    """Dask's client refreshes its cached view of the scheduler (every 2 s) with one that lists
    no worker. Training read that view to see whether a rank's worker had left, and a read at
    that moment stopped it, saying rank 0 had died. Here the view never lists a worker: the
    training, which asks the scheduler itself, goes on to its last tree."""
    X, y, group, baselines = data
    monkeypatch.setattr(type(client), "scheduler_info",
                        lambda self, n_workers=-1, **kwargs: {"workers": {}})
    lasting = helpers.SlowTSARO(alpha=5, baseline=baselines[:, 0])  # 60 calls of 0.05 s or more
    booster = distributed.train(PARAMS, X, y, group, objective=lasting, client=client,
                                num_boost_round=60)
    assert booster.num_trees() == 60


def test_a_progress_bar_shows_the_iterations_and_the_slowest_rank(client, data, capsys):
    X, y, group, _ = data
    distributed.train(PARAMS, X, y, group, num_boost_round=150, client=client, progress=True)
    err = capsys.readouterr().err
    assert "iterations:" in err and "150/150" in err and "every rank done (2 ranks)" in err
    assert re.search(r"iterations: .* [0-9]+/150 \[.*slowest: rank [01] \(tcp://", err)
    distributed.train(PARAMS, X, y, group, num_boost_round=2, client=client, progress=False)
    assert "iterations:" not in capsys.readouterr().err


SCRIPT = """
import numpy as np
from lgb_risk import distributed
{guard}
    rng = np.random.default_rng(0)
    X = rng.normal(size=(400, 5))
    y = rng.integers(0, 3, 400)
    booster = distributed.train({{"num_leaves": 7{verbose}}}, X, y, np.full(40, 10),
                                num_boost_round=3, n_workers=2)
    print("trees", booster.num_trees())
"""


def _script(tmp_path, guard, verbose=""):
    import subprocess
    import sys

    path = tmp_path / "train.py"
    path.write_text(SCRIPT.format(guard=guard, verbose=verbose))
    return subprocess.run([sys.executable, str(path)], capture_output=True, text=True,
                          timeout=300, cwd=tmp_path)


def test_a_script_without_a_main_guard_gets_one_error_naming_its_line(tmp_path):
    done = _script(tmp_path, "if True:")
    assert done.returncode == 1
    assert done.stderr.count("Traceback") == 1  # the script's own; no worker started
    assert (f"{tmp_path / 'train.py'}, line 8: lgb_risk.distributed starts worker processes, "
            "which import this script again") in done.stderr.splitlines()[-1]


def test_lightgbm_is_quiet_on_the_ranks_unless_verbose_is_given(tmp_path):
    quiet = _script(tmp_path, 'if __name__ == "__main__":')
    assert quiet.returncode == 0, quiet.stderr
    assert "trees 3" in quiet.stdout
    assert "[Warning]" not in quiet.stdout and "Connected to rank" not in quiet.stdout
    talkative = _script(tmp_path, 'if __name__ == "__main__":', verbose=', "verbose": 1')
    assert talkative.returncode == 0 and "Connected to rank" in talkative.stdout


def _processes_with(marker: str) -> list:
    """Processes whose environment holds ``marker`` (children inherit it)."""
    import os

    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/environ", "rb") as environ:
                if marker.encode() in environ.read():
                    found.append(int(pid))
        except OSError:
            continue
    return found


@pytest.mark.skipif(not os.path.isdir("/proc"), reason="reads /proc")
def test_a_call_with_its_own_cluster_leaves_no_process_behind(tmp_path):
    import subprocess
    import sys
    import uuid

    marker = f"LGB_RISK_TEST_{uuid.uuid4().hex}"
    path = tmp_path / "train.py"
    path.write_text(SCRIPT.format(guard='if __name__ == "__main__":', verbose=""))
    done = subprocess.run([sys.executable, str(path)], capture_output=True, text=True,
                          timeout=300, cwd=tmp_path, env={**os.environ, marker: "1"})
    assert done.returncode == 0, done.stderr
    deadline = time.time() + 10
    while _processes_with(marker) and time.time() < deadline:
        time.sleep(0.2)
    assert _processes_with(marker) == []


@pytest.mark.skipif(not os.path.isdir("/proc"), reason="signals worker processes")
def test_a_stopped_worker_is_named_and_the_next_call_trains(data):
    """Rank 1's process stops itself (SIGSTOP) at its third gradient call: the call names rank
    1 and its worker, not rank 0, which waits for it inside LightGBM; once the worker goes on,
    the next call on the same cluster trains."""
    X, y, group, baselines = data
    stopping = helpers.FailingTSARO(alpha=5, baseline=baselines[:, 0])
    stopping.stop = True
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0",
                      silence_logs=logging.CRITICAL) as cluster:
        with Client(cluster, set_as_default=False) as own:
            # The workers' first call loads the objective's kernels, seconds on a loaded
            # machine: done here, with a time-out that waits for it, so that the 4 s below
            # time the stopped rank only, not the start-up.
            distributed.train(PARAMS, X, y, group, client=own, num_boost_round=2, timeout=120,
                              objective=TSARO(alpha=5, baseline=baselines[:, 0]))
            pids = own.run(os.getpid)
            try:
                with pytest.raises(TimeoutError, match=r"rank 1 \(worker tcp://\S+\) stopped "
                                                       r"answering: its worker has sent the "
                                                       r"scheduler no heartbeat"):
                    distributed.train(PARAMS, X, y, group, objective=stopping,
                                      num_boost_round=50, client=own, timeout=4)
            finally:
                for pid in pids.values():
                    os.kill(pid, signal.SIGCONT)
            start = time.monotonic()
            booster = distributed.train(PARAMS, X, y, group, client=own, num_boost_round=3,
                                        timeout=30)
            assert booster.num_trees() == 3 and time.monotonic() - start < 20
