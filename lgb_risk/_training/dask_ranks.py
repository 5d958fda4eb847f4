"""Each rank's side of :func:`lgb_risk.distributed.train`, run on a Dask worker: the rendezvous
actor that all-gathers among the ranks, a rank's all-gathers as the objective and the fevals
use them, the network port a rank holds until LightGBM binds it, and the rank's task (its
``lightgbm.train`` within LightGBM's network). :mod:`lgb_risk.distributed` is the caller's
side, which submits these to the workers."""

from __future__ import annotations

import asyncio
import math
import socket
import time
from typing import Any, NamedTuple

import numpy as np

from lgb_risk._runtime.dask_client import scheduler_workers


class RankFailed(RuntimeError):
    """A rank stopped because another rank failed (the other rank's error is the cause)."""


class Shard(NamedTuple):
    """One rank's part of a query-grouped set: whole queries, contiguous in the set."""

    X: object
    y: np.ndarray
    group: np.ndarray
    queries: np.ndarray  # positions of its queries in the whole set



class Rendezvous:
    """All-gathers among ``n_ranks`` ranks (a Dask actor; its coroutines run on the event loop
    of the worker holding it)."""

    def __init__(self, n_ranks: int):
        self.n_ranks = n_ranks
        self.rounds: dict = {}
        self.error: str | None = None
        self.heard: dict = {}  # rank -> monotonic time of its last all-gather or finished iteration
        self.done: dict = {}  # rank -> iterations finished
        self.started = time.monotonic()

    def _round(self, number):
        if number not in self.rounds:
            self.rounds[number] = {"parts": {}, "event": asyncio.Event(), "taken": 0}
        return self.rounds[number]

    async def allgather(self, number: int, rank: int, what: str, payload, flag: bool):
        """Every rank's ``(payload, flag)`` of round ``number``, in rank order; ``what`` names
        the round's purpose, which must be the same on every rank."""
        if self.error is not None:
            raise RankFailed(self.error)
        entry = self._round(number)
        entry.setdefault("what", what)
        if entry["what"] != what:
            await self.abort(f"the ranks are out of step at all-gather {number}: rank {rank} "
                             f"gathers {what}, another rank {entry['what']}")
            raise RankFailed(self.error)
        entry["parts"][rank] = (payload, flag)
        self.heard[rank] = time.monotonic()
        if len(entry["parts"]) == self.n_ranks:
            entry["event"].set()
        await entry["event"].wait()
        if self.error is not None:
            raise RankFailed(self.error)
        parts = [entry["parts"][r] for r in range(self.n_ranks)]
        entry["taken"] += 1
        if entry["taken"] == self.n_ranks:
            del self.rounds[number]
        return parts

    async def iteration_done(self, rank: int, iterations: int) -> str | None:
        """Note a rank's finished iteration; the error that stopped the call, if any (the
        rank then stops)."""
        self.heard[rank] = time.monotonic()
        self.done[rank] = iterations
        return self.error

    async def iterations(self) -> dict:
        """Each rank's iterations finished, as last reported."""
        return dict(self.done)

    async def abort(self, message: str) -> None:
        """Fail every waiting and later all-gather with ``message``."""
        if self.error is None:
            self.error = message
        for entry in self.rounds.values():
            entry["event"].set()

    async def quiet_ranks(self, seconds: float, ranks) -> list:
        """The given ranks not heard from (all-gather or finished iteration) for ``seconds``."""
        now = time.monotonic()
        return [r for r in ranks if now - self.heard.get(r, self.started) > seconds]


class _Collective:
    """A rank's all-gathers, numbered in the order every rank makes them."""

    def __init__(self, rendezvous, rank: int, workers: list, timeout: float):
        self.rendezvous = rendezvous
        self.rank = rank
        self.workers = workers
        self.timeout = timeout
        self.rounds = 0
        self.seconds = 0.0

    def __deepcopy__(self, memo):
        return self  # a connection, shared by the copies LightGBM makes of the objective

    def allgather(self, what: str, payload: np.ndarray,
                  flag: bool = True) -> tuple[np.ndarray, bool]:
        """The ranks' payloads concatenated in rank order, and whether every flag is true."""
        self.rounds += 1
        start = time.perf_counter()
        try:
            parts = self.rendezvous.allgather(self.rounds, self.rank, what, payload,
                                              bool(flag)).result(timeout=self.timeout)
        except TimeoutError:
            raise TimeoutError(
                f"rank {self.rank} waited {self.timeout:g} s at all-gather {self.rounds} for the "
                f"other ranks (workers {', '.join(self.workers)}); one of them is dead or hung"
            ) from None
        self.seconds += time.perf_counter() - start
        return np.concatenate([p for p, _ in parts]), all(f for _, f in parts)


class _ObjectiveShard:
    """What an objective needs on one rank (``LambdaMART.shard``): its training queries'
    positions in the whole training set, their count, and the all-gather."""

    def __init__(self, collective: _Collective, queries: np.ndarray, n_queries: int):
        self.collective = collective
        self.queries = queries
        self.n_queries = n_queries

    def gather(self, model_values, initial):
        return self.collective.allgather("the training NDCG", model_values, initial)


class _FevalShard:
    def __init__(self, collective: _Collective, name: str):
        self.collective = collective
        self.name = name

    def gather(self, values):
        return self.collective.allgather(self.name, np.asarray(values, dtype=np.float64))[0]


#: Listening sockets that hold each rank's network port from the moment the caller learns it
#: until the rank's LightGBM binds it (keyed by the call's reservation key), in each worker.
_HELD_PORTS: dict[str, socket.socket] = {}


def reserve_port(key: str) -> int:
    """Bind a free port on this worker and keep it bound until :func:`release_port`: a port
    found free and let go at once can be taken by another process before LightGBM binds it
    (the race LightGBM's own Dask module closed, its issue #5865)."""
    held = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    held.bind(("", 0))
    _HELD_PORTS[key] = held
    return held.getsockname()[1]


def release_port(key: str) -> None:
    """Let go of a port held by :func:`reserve_port` (nothing if it is not held)."""
    held = _HELD_PORTS.pop(key, None)
    if held is not None:
        held.close()


def release_ports(client, workers, key: str, timeout: float = 5.0) -> None:
    """Best effort, on the workers still alive and for at most ``timeout`` seconds: let go of
    the ports held for a call whose ranks did not all start (a rank that ran let go of its
    own)."""
    from distributed import wait

    try:
        alive = set(scheduler_workers(client))
        wait([client.submit(release_port, key, workers=[w], pure=False,
                            allow_other_workers=False) for w in workers if w in alive],
             timeout=timeout)
    except Exception:  # a lost worker or scheduler holds nothing of ours any more
        pass


class RankJob(NamedTuple):
    """What every rank of one ``train`` call is given, besides its data."""

    workers: list  # worker addresses, by rank
    machines: str  # LightGBM's ``machines``: host:port of every rank
    port_key: str  # the key under which each worker holds its rank's port
    params: dict
    n_queries: int  # training queries in all
    objective: Any
    fevals: list
    rendezvous: Any  # the Rendezvous actor
    num_boost_round: int
    early_stopping_rounds: int | None
    timeout: float


def rank_task(job: RankJob, rank: int, shard: Shard, valid: Shard | None):
    """One rank: ``lightgbm.train`` on its shard within LightGBM's network. Returns the model
    (rank 0) and this rank's timings."""
    import lightgbm as lgb
    import numba
    from distributed import get_worker

    collective = _Collective(job.rendezvous, rank, job.workers, job.timeout)
    started = time.perf_counter()
    progress: dict[str, Any] = {"booster": None, "iterations": 0, "first_done": None}

    def report_iteration(env):
        if progress["booster"] is None:
            progress.update(booster=env.model, first_done=time.perf_counter())
        progress["iterations"] = env.iteration + 1
        beat = progress.get("beat")  # the last heartbeat's answer, read without waiting
        if beat is not None and beat.done() and beat.result() is not None:
            raise RankFailed(beat.result())  # the call was stopped: stop training here too
        progress["beat"] = job.rendezvous.iteration_done(rank, env.iteration + 1)

    try:
        threads = int(job.params.get("num_threads", 0)) or get_worker().state.nthreads
        numba.set_num_threads(min(numba.config.NUMBA_NUM_THREADS,  # type: ignore[attr-defined]
                                  threads))
        rank_params = {**job.params, "num_threads": threads, "metric": "None"}
        if not {"verbose", "verbosity"} & set(job.params):
            rank_params["verbosity"] = -1  # each rank's network set-up is not the user's news
        # LightGBM's log level is global and set by parsing parameters, which its network
        # set-up (and its messages) precedes: a one-row Dataset sets it first.
        verbosity = rank_params.get("verbosity", rank_params.get("verbose"))
        lgb.Dataset(np.zeros((1, 1)), params={"verbosity": verbosity}).construct()
        if len(job.workers) > 1:
            port = int(job.machines.split(",")[rank].rsplit(":")[1])
            rank_params.update(tree_learner="data", num_machines=len(job.workers),
                               machines=job.machines, local_listen_port=port,
                               time_out=max(1, math.ceil(job.timeout / 60)))
        objective = job.objective
        if not isinstance(objective, str):
            objective.shard = _ObjectiveShard(collective, shard.queries, job.n_queries)
        rank_params["objective"] = objective
        train_set = lgb.Dataset(shard.X, shard.y, group=shard.group)
        valid_sets = []
        if valid is not None:
            valid_sets = [lgb.Dataset(valid.X, valid.y, group=valid.group, reference=train_set)]
        for feval in job.fevals:
            feval.shard = _FevalShard(collective, f"validation {feval.name}")
        callbacks = [report_iteration]
        if job.early_stopping_rounds:
            callbacks.append(lgb.early_stopping(job.early_stopping_rounds, verbose=False))
        release_port(job.port_key)  # LightGBM binds it as training starts
        booster = lgb.train(rank_params, train_set, job.num_boost_round, valid_sets=valid_sets,
                            valid_names=["valid"][:len(valid_sets)], feval=job.fevals or None,
                            callbacks=callbacks)
        ended = time.perf_counter()
        iterations, first_done = progress["iterations"], progress["first_done"]
        return {"model": booster.model_to_string() if rank == 0 else None,
                "best_iteration": booster.best_iteration,
                "best_score": {name: dict(scores) for name, scores in
                               booster.best_score.items()},
                "iterations": iterations, "seconds": ended - started,
                "seconds_per_iteration": ((ended - first_done) / (iterations - 1)
                                          if iterations > 1 else float("nan")),
                "gather_seconds": collective.seconds, "gathers": collective.rounds}
    except BaseException as error:
        if not isinstance(error, RankFailed):
            job.rendezvous.abort(f"rank {rank} on {job.workers[rank]} failed: "
                                 f"{type(error).__name__}: {error}")
        raise
    finally:
        release_port(job.port_key)
        if progress["booster"] is not None and len(job.workers) > 1:
            progress["booster"].free_network()
