"""One risk-sensitive LightGBM model trained on several Dask workers, with exact gradients.

``train`` shards the training queries whole, balanced by document count, one shard per worker,
and runs ``lightgbm.train`` on every worker at once with LightGBM's data-parallel network
(``tree_learner="data"``): LightGBM sums the gradient histograms over the machines, so each
machine needs exact gradients for its own documents. A LambdaMART pair only involves documents of
one query, but the risk objectives also read statistics over all training queries (T-SARO's s_x,
GeoRisk's row and matrix sums and its scale), which no machine sees alone. So at every boosting
iteration the ranks all-gather the current model's NDCG@k of every training query (one float per
query) and whether the predictions are still the initial ones, compute the risk state over all
queries with the same code as on one machine, and keep their own queries' part: the gradients
equal the single-machine objective's for the same predictions, bit for bit. Evaluation for early
stopping works the same way: each rank evaluates its part of the validation set query by query,
the per-query values are gathered, and every rank computes the same mean or risk measure, so
every rank stops at the same iteration.

Transport: a Dask actor on one of the workers (``Rendezvous``; it and each rank's side of the
training are in :mod:`lgb_risk._training.dask_ranks`). Each rank makes one call per all-gather,
which returns when every rank has contributed (an ``asyncio.Event`` per round on the actor's event
loop, so waiting ranks hold no thread of it); a rank that fails aborts the actor, which wakes the
waiting ranks at once. Ranks also report each finished iteration to it, so the caller notices a rank
that stops making progress. ``distributed.Variable`` would need every rank to read every other
rank's value (n² round trips per iteration) and offers no wake-up on failure.

Requires the ``dask`` extra: ``pip install "lgb_risk[dask]"``.

Examples
--------
Against a running cluster (``dask scheduler``; ``dask worker ADDRESS`` on each machine)::

    from distributed import Client
    from lgb_risk import TSARO, distributed
    from lgb_risk.feval import ndcg_feval

    client = Client("tcp://scheduler:8786")
    booster = distributed.train(
        {"learning_rate": 0.05, "num_leaves": 63}, X, y, group,
        objective=TSARO(alpha=5, baseline=bm25_ndcg10_of_each_training_query),
        num_boost_round=500, valid=(X_valid, y_valid, group_valid), feval=ndcg_feval(10),
        early_stopping_rounds=20, client=client)
"""

from __future__ import annotations

import os
import sys
import threading
import time
from contextlib import ExitStack
from typing import TYPE_CHECKING, Any

import numpy as np

from lgb_risk._inputs.validation import check_group, check_whole_number
from lgb_risk._measuring.segments import offsets_from_group
from lgb_risk._runtime.dask_client import scheduler_workers
from lgb_risk._runtime.progress import Bar, on_terminal
from lgb_risk._training.dask_ranks import (
    RankFailed,
    RankJob,
    Rendezvous,
    Shard,
    rank_task,
    release_ports,
    reserve_port,
)

if TYPE_CHECKING:
    from lgb_risk._inputs.type_aliases import ArrayLike

__all__ = ["train", "shard_bounds"]

#: Parameters (and their LightGBM aliases) that ``train`` sets on every rank, and why.
_SET_BY_TRAIN = {
    ("tree_learner", "tree", "tree_type", "tree_learner_type", "num_machines", "num_machine",
     "machines", "workers", "nodes", "local_listen_port", "local_port", "port", "time_out"):
        "the network, which train sets up (timeout= sets its time-out)",
    ("metric", "metrics", "metric_types"):
        "evaluation, which is by feval= (LightGBM's metrics would see one worker's part only)",
    ("objective", "objective_type", "app", "application", "loss"):
        "the objective, which is given as objective=",
}


def shard_bounds(group: ArrayLike, n_shards: int) -> np.ndarray:
    """Query boundaries of ``n_shards`` contiguous shards of whole queries, balanced by document
    count: shard r holds queries ``bounds[r]`` to ``bounds[r + 1] - 1``.

    >>> shard_bounds([10, 10, 10, 10, 40], 2).tolist()
    [0, 4, 5]
    """
    sizes = np.asarray(group)
    sizes = check_group(sizes, int(sizes.sum()) if sizes.ndim == 1 else 0, "query sizes")
    if n_shards > sizes.size:
        raise ValueError(f"{n_shards} workers need at least {n_shards} training queries, got "
                         f"{sizes.size}")
    ends = np.cumsum(sizes)
    bounds = [0]
    for r in range(1, n_shards):
        target = ends[-1] * r / n_shards
        q = int(np.searchsorted(ends, target))  # first query ending at or past the target
        if q > 0 and target - ends[q - 1] < ends[q] - target:
            q -= 1  # ending the shard one query earlier is closer to the target
        bounds.append(min(max(q + 1, bounds[-1] + 1), sizes.size - (n_shards - r)))
    bounds.append(sizes.size)
    return np.array(bounds)


def _split(X, y, group, bounds) -> list[Shard]:
    offsets = offsets_from_group(group)
    return [Shard(X[offsets[a]:offsets[b]], y[offsets[a]:offsets[b]], group[a:b],
                   np.arange(a, b)) for a, b in zip(bounds[:-1], bounds[1:])]


# ----------------------------------------------------------------------------------------------
# The caller's side (each rank's is in lgb_risk._training.dask_ranks)

def _check_fevals(feval) -> list:
    from lgb_risk.feval import _Feval

    fevals = [] if feval is None else list(feval) if isinstance(feval, (list, tuple)) else [feval]
    for f in fevals:
        if not isinstance(f, _Feval):
            raise ValueError(f"distributed training evaluates with lgb_risk's fevals (metric_feval,"
                             f" ndcg_feval, risk_feval), whose per-query values can be gathered "
                             f"from every worker; got {f!r}")
        if f.by_dataset:
            raise ValueError(f"{f.name}: baselines given by lightgbm.Dataset cannot be used in "
                             "distributed training (every worker builds its own part of the set)"
                             "; give the validation set's baselines as an array")
    return fevals


def _check_objective(objective):
    from lgb_risk.objectives import GeoRisk, LambdaMART

    if isinstance(objective, str):
        if objective not in ("lambdarank", "rank_xendcg"):
            raise ValueError(f"objective {objective!r}: distributed.train trains rankers: an "
                             "lgb_risk objective, or LightGBM's 'lambdarank' or 'rank_xendcg'")
        return objective
    if not isinstance(objective, LambdaMART):
        raise ValueError(f"objective must be an lgb_risk objective (LambdaMART, UCRO, ...) or "
                         f"'lambdarank', got {objective!r}")
    if isinstance(objective, GeoRisk) and objective.delta == "exact":
        raise ValueError("GeoRisk(delta='exact') recomputes every training query's z-score for "
                         "each pair, which needs the whole training set on one machine; "
                         "distributed training supports delta='local' (the paper's update)")
    objective.validate_params()
    return objective


def _as_arrays(X, y, group, what):
    if not hasattr(X, "shape"):
        X = np.asarray(X)
    y = np.asarray(y)
    if len(X.shape) != 2 or y.ndim != 1 or X.shape[0] != y.size:
        raise ValueError(f"{what}: X must be (n_documents, n_features) and y (n_documents,), "
                         f"got shapes {X.shape} and {y.shape}")
    return X, y, check_group(group, y.size, f"{what} labels")


def _workers_of(client: Any, timeout: float) -> list:
    """The cluster's workers, sorted by address. Where the scheduler has none (a cluster still
    starting, workers restarting), wait up to ``timeout`` seconds for one."""
    workers = sorted(scheduler_workers(client))
    if workers:
        return workers
    try:
        client.wait_for_workers(1, timeout=timeout)
    except TimeoutError:
        raise TimeoutError(f"the Dask cluster at {client.scheduler.address} has no workers "
                           f"(waited {timeout:g} s)") from None
    return sorted(scheduler_workers(client))


def train(params: dict, X: ArrayLike, y: ArrayLike, group: ArrayLike, *, objective: Any = None,
          num_boost_round: int = 100, valid: tuple[Any, ArrayLike, ArrayLike] | None = None,
          feval: Any = None, early_stopping_rounds: int | None = None, client: Any = None,
          n_workers: int | None = None, timeout: float = 120.0, timings: list | None = None,
          progress: bool | None = None) -> Any:
    """Train one LightGBM ranker on several Dask workers with exact risk-sensitive gradients.

    Parameters
    ----------
    params : dict
        LightGBM parameters. ``train`` sets the network (``tree_learner="data"``,
        ``num_machines``, ``machines``, ``local_listen_port``, ``time_out``) and ``metric="None"``
        (evaluation is by ``feval``); ``num_threads`` defaults to each worker's thread count and
        also bounds the objective's numba threads. LightGBM's messages from the ranks (binding
        ports, connecting, dataset statistics) are off unless ``verbose`` is given.
    X : array or scipy.sparse matrix, shape (n_documents, n_features)
    y : array, shape (n_documents,)
    group : array of int
        Query sizes, as ``lightgbm.Dataset(group=...)``; queries are never split across workers.
    objective : lgb_risk objective or str
        An objective of :mod:`lgb_risk.objectives` (its baselines aligned to the whole training
        set's queries, as on one machine), or LightGBM's ``"lambdarank"``; default
        ``LambdaMART()``. ``GeoRisk(delta="exact")`` is refused.
    num_boost_round : int
    valid : tuple (X, y, group), optional
        The validation set, sharded like the training set.
    feval : lgb_risk feval or list of them, optional
        :func:`lgb_risk.feval.metric_feval`, ``ndcg_feval`` or ``risk_feval`` (baselines as an
        array aligned to ``valid``'s queries); evaluated over the whole validation set on every
        rank. The first one drives ``early_stopping_rounds``.
    early_stopping_rounds : int, optional
        Stop when the first feval has not improved for this many rounds (every rank stops at
        the same iteration).
    client : distributed.Client, optional
        The cluster to train on; default a ``LocalCluster`` of ``n_workers`` single-threaded
        processes started for the call.
    n_workers : int, optional
        How many workers (ranks) to use; default every worker of ``client`` (or, without one, one
        per usable CPU core).
    timeout : float
        Seconds a rank waits for the others at an all-gather, and the caller for a rank to
        report progress, before the call fails naming the rank and its worker; LightGBM's own
        network ``time_out`` is set to it (rounded up to whole minutes).
    timings : list, optional
        Filled with one dict per rank: ``seconds`` (the whole task), ``iterations``,
        ``seconds_per_iteration`` (after the first), ``gathers``, ``gather_seconds`` (time spent
        in all-gathers), ``best_iteration``, ``best_score``.
    progress : bool, optional
        A progress bar of the iterations on standard error, with the slowest rank (the one with
        the fewest iterations done) and its worker; default: where standard error is a terminal.

    Returns
    -------
    lightgbm.Booster
        The model (every rank holds the same trees); ``best_iteration`` and ``best_score`` as
        ``lightgbm.train`` sets them.

    Raises
    ------
    Exception
        The error of the first rank that failed (its type, with a note naming the rank and the
        worker); TimeoutError when a rank stops making progress for ``timeout`` seconds;
        RuntimeError when a worker dies.
    """
    from lgb_risk._runtime.dask_client import dask_client
    from lgb_risk._runtime.machine import usable_cores
    from lgb_risk.objectives import LambdaMART

    objective = _check_objective(LambdaMART() if objective is None else objective)
    fevals = _check_fevals(feval)
    if early_stopping_rounds and not (valid is not None and fevals):
        raise ValueError("early_stopping_rounds needs a validation set (valid=) and a feval")
    for names, what in _SET_BY_TRAIN.items():
        clash = sorted(set(params) & set(names))
        if clash:
            raise ValueError(f"params set {', '.join(clash)}: distributed.train sets {what}")
    if not (isinstance(timeout, (int, float)) and timeout > 0):
        raise ValueError(f"timeout must be a number of seconds > 0, got {timeout!r}")
    if n_workers is not None:
        check_whole_number(n_workers, "n_workers")
    X, y, group = _as_arrays(X, y, group, "training set")
    if not isinstance(objective, str):
        objective.check_labels(y)  # a bad label named at the caller's row, not at a rank's
    # every rank measures ERR with the whole set's highest label, not its own part's
    objective = (objective.with_max_label(int(np.max(y, initial=0)))
                 if not isinstance(objective, str) else objective)
    if valid is not None:
        if not (isinstance(valid, tuple) and len(valid) == 3):
            raise ValueError("valid must be a tuple (X_valid, y_valid, group_valid)")
        valid = _as_arrays(*valid, "validation set")
        n_valid, n_train = np.shape(valid[0])[1], np.shape(X)[1]
        if n_valid != n_train:
            raise ValueError(f"the validation set has {n_valid} features and the training set "
                             f"{n_train}: early stopping would judge the model on other "
                             "features")

    _check_client(client)
    with ExitStack() as stack:
        if client is None:
            client = _default_client()
        if client is None:
            client = stack.enter_context(dask_client(n_workers or usable_cores(),
                                                     needed_for="lgb_risk.distributed",
                                                     preload=(__name__,)))
        from distributed import MultiLock

        workers = _workers_of(client, timeout)
        if n_workers is not None:
            if n_workers > len(workers):
                raise ValueError(f"n_workers={n_workers} but the cluster has {len(workers)} "
                                 "workers")
            workers = workers[:n_workers]
        shards = _split(X, y, group, shard_bounds(group, len(workers)))
        valid_shards = ([None] * len(workers) if valid is None
                        else _split(valid[0], valid[1], valid[2],
                                    shard_bounds(valid[2], len(workers))))
        lock = MultiLock(names=[f"lgb_risk-network-{w}" for w in workers], client=client)
        if not lock.acquire(timeout=timeout):
            raise TimeoutError(f"the workers stayed busy with another distributed training for "
                               f"{timeout:g} s (LightGBM's network is one per process)")
        try:
            bar = (Bar(num_boost_round, sys.stderr, description="iterations")
                   if (on_terminal(sys.stderr) if progress is None else progress) else None)
            try:
                return _train_on(client, workers, params, shards, np.size(group), valid_shards,
                                 objective, fevals, num_boost_round, early_stopping_rounds,
                                 timeout, timings, bar)
            finally:
                if bar is not None:
                    bar.close()
        finally:
            lock.release()


def _lost_peer(error: BaseException) -> bool:
    """Whether a rank's error is LightGBM's network losing a peer."""
    text = str(error)
    return type(error).__name__ == "LightGBMError" and ("Socket" in text or "onnect" in text)


def _lost_rank(client, workers: list, candidates, timeout: float, *, why: str = "",
               wait: float = 0.0, silent_too: bool = True) -> Exception | None:
    """The error naming the first of the ranks ``candidates`` whose worker left the cluster
    (RuntimeError) or, with ``silent_too``, stopped sending the scheduler heartbeats
    (TimeoutError: a stopped or frozen process; a rank busy in LightGBM still answers), ``why``
    appended; None if there is none, after waiting up to ``wait`` seconds for one."""
    deadline = time.monotonic() + wait
    while True:
        present = scheduler_workers(client)
        gone = [r for r in candidates if workers[r] not in present]
        if gone:
            return RuntimeError(f"worker {workers[gone[0]]} (rank {gone[0]}) died during "
                                f"distributed training{why}")
        silent = (_silent_workers(client, [workers[r] for r in candidates],
                                  lag=min(5.0, timeout / 2)) if silent_too else {})
        stopped = [r for r in candidates if workers[r] in silent]
        if stopped:
            r = stopped[0]
            return TimeoutError(f"rank {r} (worker {workers[r]}) stopped answering: its worker "
                                f"has sent the scheduler no heartbeat for "
                                f"{silent[workers[r]]:.0f} s (stopped or hung){why}")
        if time.monotonic() >= deadline:
            return None
        time.sleep(0.2)


def _silent_workers(client, candidates: list, lag: float = 5.0) -> dict:
    """Of ``candidates``, the workers whose last heartbeat to the scheduler is more than
    ``lag`` seconds older than the freshest worker's (a stopped or frozen process: a rank busy
    in LightGBM still answers), with that lag; clock-independent (scheduler times only)."""
    seen = {w: info["last_seen"] for w, info in scheduler_workers(client).items()}
    if not seen:
        return {}
    freshest = max(seen.values())
    return {w: freshest - seen[w] for w in candidates
            if w in seen and freshest - seen[w] > lag}


def _cancel_quietly(client, future) -> None:
    try:
        client.cancel([future])
    except Exception:  # the client or the cluster is gone: nothing to release
        pass


def _check_client(client: Any) -> None:
    """``client`` is None or an open ``distributed.Client`` (an address is not a client)."""
    if client is None:
        return
    if isinstance(client, (str, os.PathLike)):
        raise TypeError(f"client must be a distributed.Client, got the address {client!r}: "
                        f"connect first, client=distributed.Client({str(client)!r})")
    if not hasattr(client, "scheduler_info"):
        raise TypeError(f"client must be a distributed.Client, got {type(client).__name__}")
    if getattr(client, "status", "running") in ("closed", "closing", "closed-at-exit"):
        raise ValueError("client is closed: give an open distributed.Client (or none, to "
                         "start a local cluster)")


def _default_client():
    """The caller's current Dask client, or None where there is none."""
    try:
        from distributed import default_client
    except ImportError:
        return None
    try:
        return default_client()
    except ValueError:  # no client in this process
        return None


def _within(timeout: float, doing: str, workers: list, futures: list) -> list:
    """The futures' results (one per worker), each waited for up to ``timeout`` seconds; a
    worker that does not answer in time is named."""
    results = []
    for worker, future in zip(workers, futures):
        try:
            results.append(future.result(timeout=timeout))
        except TimeoutError:
            raise _no_answer(worker, timeout, doing) from None
    return results


def _no_answer(worker: str, timeout: float, doing: str) -> TimeoutError:
    return TimeoutError(f"worker {worker} did not answer within {timeout:g} s ({doing}); it is "
                        "stopped, hung or overloaded")


def _held_machines(client, workers, key: str, timeout: float) -> str:
    """LightGBM's ``machines`` for these workers: a port bound and held on each (released by
    its rank just before LightGBM binds it); refused if two ranks got the same host:port."""
    hosts = [w.split("://")[-1].rsplit(":", 1)[0] for w in workers]
    ports = _within(timeout, "reserving its network port", workers, [
        client.submit(reserve_port, key, workers=[w], pure=False, allow_other_workers=False)
        for w in workers])
    machines = [f"{h}:{p}" for h, p in zip(hosts, ports)]
    repeated = sorted({m for m in machines if machines.count(m) > 1})
    if repeated:
        sharing = ", ".join(w for w, m in zip(workers, machines) if m == repeated[0])
        raise RuntimeError(f"two ranks were given the same network address {repeated[0]} "
                           f"(workers {sharing}); LightGBM's network needs one port per rank")
    return ",".join(machines)


def _train_on(client, workers, params, shards, n_queries, valid_shards, objective, fevals,
              num_boost_round, early_stopping_rounds, timeout, timings, bar):
    import lightgbm as lgb

    port_key = f"lgb_risk-port-{time.time_ns()}"
    try:
        machines = _held_machines(client, workers, port_key, timeout)
    except BaseException:
        release_ports(client, workers, port_key)
        raise
    # The actor lives as long as its future; its handle must belong to this client, not to
    # whichever client the process made last (Dask binds a handle to the current client).
    actor = client.submit(Rendezvous, len(workers), actor=True, workers=[workers[0]],
                          allow_other_workers=False, pure=False)
    with client.as_current():
        rendezvous = _within(timeout, "starting the ranks' rendezvous", workers[:1], [actor])[0]

    def placed(value, worker):  # one object on one worker (a list: NamedTuples stay whole)
        if value is None:
            return None
        try:
            return client.scatter([value], workers=[worker], timeout=timeout)[0]
        except TimeoutError:
            raise _no_answer(worker, timeout, "receiving its shard") from None

    job = RankJob(workers=workers, machines=machines, port_key=port_key, params=params,
                   n_queries=n_queries, objective=objective, fevals=fevals,
                   rendezvous=rendezvous, num_boost_round=num_boost_round,
                   early_stopping_rounds=early_stopping_rounds, timeout=timeout)
    futures = [client.submit(rank_task, job, rank, placed(shards[rank], w),
                             placed(valid_shards[rank], w), workers=[w],
                             allow_other_workers=False, pure=False,
                             key=f"lgb_risk-rank-{rank}-{time.time_ns()}")
               for rank, w in enumerate(workers)]
    checked = time.monotonic()
    echoes_since = None  # when a rank first failed only because another rank had
    try:
        while True:
            time.sleep(0.1)
            errors = [(rank, f.exception()) for rank, f in enumerate(futures)
                      if f.status == "error"]
            own = [(r, e) for r, e in errors if not isinstance(e, RankFailed)]
            if errors and not own and echoes_since is None:
                echoes_since = time.monotonic()
            # A rank's RankFailed echoes another rank's error: wait a little for that one, so
            # that the call raises the error where it happened.
            pending = any(f.status == "pending" for f in futures)
            if own or (errors and (not pending or time.monotonic() - echoes_since > 5.0)):
                rank, error = (own or errors)[0]
                others = [r for r in range(len(workers)) if r != rank]
                lost = None
                if _lost_peer(error):  # the scheduler may take a moment to see a worker go
                    lost = _lost_rank(client, workers, others, timeout, wait=5.0,
                                      why=f" (rank {rank} lost its connection to it: {error})")
                elif isinstance(error, TimeoutError):  # a rank tired of waiting for another
                    lost = _lost_rank(client, workers, others, timeout,
                                      why=f"; rank {rank} waited {timeout:g} s for it")
                if lost is not None:
                    raise lost from None
                error.add_note(f"raised on rank {rank} of {len(workers)} (worker {workers[rank]})")
                raise error
            running = [r for r, f in enumerate(futures) if f.status != "finished"]
            if not running:
                break
            if bar is not None:
                done = rendezvous.iterations().result(timeout=timeout)
                slowest = min(range(len(workers)), key=lambda r: done.get(r, 0))
                bar.show(done.get(slowest, 0),
                         f"slowest: rank {slowest} ({workers[slowest]})")
            if time.monotonic() - checked < 1.0:
                continue
            checked = time.monotonic()
            lost = _lost_rank(client, workers, range(len(workers)), timeout, silent_too=False)
            if lost is not None:
                raise lost
            quiet = rendezvous.quiet_ranks(timeout, running).result(timeout=timeout)
            if quiet:
                # A stopped process sends no heartbeat, a rank waiting for it inside LightGBM
                # does: wait for that evidence (its lag grows by the second) before naming the
                # first quiet rank, which may only be the one that waits.
                lost = _lost_rank(client, workers, quiet, timeout, wait=timeout + 5.0,
                                  why=f"; the other ranks waited {timeout:g} s for it")
                if lost is not None:
                    raise lost
                raise TimeoutError(f"rank {quiet[0]} (worker {workers[quiet[0]]}) made no "
                                   f"progress for {timeout:g} s; it is hung or its peers are")
    except BaseException:
        try:
            rendezvous.abort("the training was stopped by the caller").result(timeout=5)
        except Exception:  # the actor's worker may be the one that died
            pass
        client.cancel(futures)
        # A rank still inside LightGBM (a stopped worker resumed, a peer waiting out the
        # network's time-out) reports to the rendezvous once more, learns that the call was
        # stopped and ends: the rendezvous outlives the call by the network's time-out.
        release = threading.Timer(timeout + 60.0, _cancel_quietly, (client, actor))
        release.daemon = True
        release.start()
        release_ports(client, workers, port_key)
        raise
    results = client.gather(futures)
    client.cancel([actor])
    if bar is not None:
        bar.show(results[0]["iterations"], f"every rank done ({len(workers)} ranks)")
    if timings is not None:
        timings[:] = [{k: v for k, v in r.items() if k != "model"} for r in results]
    booster = lgb.Booster(model_str=results[0]["model"])
    booster.best_iteration = results[0]["best_iteration"]
    booster.best_score = results[0]["best_score"]
    return booster
