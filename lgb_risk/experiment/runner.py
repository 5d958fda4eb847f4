"""The papers' experimental protocol, resumable and parallel ([GEO] §6.1, [TR] §6).

[GEO] Dinçer, Macdonald, Ounis. Risk-sensitive evaluation and learning to rank using multiple
      baselines. SIGIR 2016. [TR] the same authors, Hypothesis testing for the risk-sensitive
      evaluation of retrieval systems. SIGIR 2014.

Stages, each written to the output folder as it completes:

1. ``split.json`` — queries split once, seeded: a held-out fraction (two thirds train, one third
   validation) for the learned baselines, the rest in ``folds`` parts; fold f tests on part f,
   validates on part f+1 and trains on the others, so the test parts cover every main query once.
2. ``baselines/feature.csv`` and ``baselines/learned.csv`` (with ``.meta.json``) — per-query NDCG@k
   on the main queries of the feature baseline (BM25) and of the learned baselines (LambdaMART,
   GBRT, a coordinate-ascent linear ranker, ridge regression), trained on the held-out part.
3. ``units/FOLD__LEARNER__aALPHA.csv`` — one unit of work per (fold, learner, α): trained as
   ``[training]`` says (early stopping on the fold's validation NDCG@k by default; a fixed
   number of trees, the model selected on validation NDCG@k or on the learner's own risk
   measure, as Jforests does), per-query test NDCG@k written atomically. On a Dask
   cluster (started in a thread while the data is loaded and the first stages written), the
   units whose learner does not take the learned baselines start once the feature baseline is
   written, while this process trains the learned baselines; the others then go ahead of those
   still queued.

Running the same command again skips every stage and unit whose file exists, so a run killed at any
moment resumes with nothing lost or doubled. Training is deterministic (``deterministic=True``, a
fixed number of threads per unit, seeded splits), so results do not depend on ``--jobs``.
"""

from __future__ import annotations

import json
import sys
import time
from contextlib import ExitStack, contextmanager
from pathlib import Path

import lightgbm as lgb
import numba
import numpy as np
import pandas as pd
import scipy.sparse as sp

from lgb_risk import feval, metrics
from lgb_risk._dask import dask_client_in_background, require_dask
from lgb_risk._segments import offsets_from_group
from lgb_risk.baselines import BaselineStore
from lgb_risk.data import LetorData, load_letor
from lgb_risk.experiment import synthetic
from lgb_risk.experiment.config import objective_parameters
from lgb_risk.experiment.layout import RunFolder, Unit, all_units
from lgb_risk.experiment.report import write_report
from lgb_risk.objectives import OBJECTIVES

__all__ = ["load_dataset", "make_split", "run_experiment", "Unit"]

# ----------------------------------------------------------------------------------------------
# Data and split

def load_dataset(config) -> LetorData:
    """The configured dataset: a folder of ``Fold*/`` (Fold1's files pooled), a file or
    synthetic data."""
    data = config["data"]
    if data["source"] == "synthetic":
        return synthetic.make_letor(data["queries"], data["mean_docs"], data["features"],
                                    bm25_feature=min(config["baselines"]["feature"],
                                                     data["features"]), seed=data["seed"])
    path = Path(data["path"])
    if path.is_dir():
        fold = path / "Fold1"
        files = [fold / f"{part}.txt" for part in ("train", "vali", "test")]
        missing = [str(f) for f in files if not f.is_file()]
        if missing:
            raise FileNotFoundError(f"data folder {path} lacks {', '.join(missing)} (expected "
                                    "Fold1/train.txt, vali.txt and test.txt)")
    elif path.is_file():
        files = [path]
    else:
        raise FileNotFoundError(f"data path {path} does not exist")
    parts = [load_letor(f, n_features=data["n_features"]) for f in files]
    query_ids = np.concatenate([p.query_ids for p in parts])
    first_file = {}
    for path, part in zip(files, parts):
        for q in part.query_ids.tolist():
            if q in first_file:
                raise ValueError(f"query id {q} appears in both {first_file[q]} and {path}; "
                                 "pooled files must hold different queries")
            first_file[q] = path
    return LetorData(
        X=sp.vstack([p.X for p in parts]).tocsr(), y=np.concatenate([p.y for p in parts]),
        qid=np.concatenate([p.qid for p in parts]), query_ids=query_ids,
        group=np.concatenate([p.group for p in parts]), docids=None)


def minimum_queries(config) -> int:
    """Fewest queries the split can work with: 3 held out, 2 per fold part."""
    return 3 + 2 * config["split"]["folds"]


def repeat_seed(config, repeat: int) -> int:
    """The split seed of a repeat: the configured seed for repeat 0 (one split as before),
    seeds derived from it and the repeat number for the others."""
    seed = config["split"]["seed"]
    if repeat == 0:
        return seed
    return int(np.random.SeedSequence([seed, repeat]).generate_state(1)[0])


def make_split(query_ids, config, repeat: int = 0) -> dict:
    """The protocol's split of the query ids (strings), seeded; see the module docstring."""
    split = {**config["split"], "seed": repeat_seed(config, repeat)}
    ids = np.array([str(q) for q in query_ids])
    need = minimum_queries(config)
    n_held = int(round(split["heldout"] * ids.size))
    if ids.size < need or n_held < 3 or ids.size - n_held < 2 * split["folds"]:
        raise ValueError(f"the dataset has {ids.size} queries; a split with heldout="
                         f"{split['heldout']} and {split['folds']} folds needs at least 3 held "
                         f"out and 2 per fold part (at least {need} queries)")
    perm = np.random.default_rng(split["seed"]).permutation(ids)
    held, main = perm[:n_held], perm[n_held:]
    n_train = int(round(2 * n_held / 3))
    return {"seed": split["seed"], "heldout_train": held[:n_train].tolist(),
            "heldout_valid": held[n_train:].tolist(),
            "parts": [p.tolist() for p in np.array_split(main, split["folds"])]}


def fold_queries(split: dict, fold: int) -> tuple[list, list, list]:
    """(train, valid, test) query ids of a fold."""
    parts = split["parts"]
    n = len(parts)
    test, valid = parts[fold], parts[(fold + 1) % n]
    train = [q for i, p in enumerate(parts) if i not in (fold, (fold + 1) % n) for q in p]
    return train, valid, test


class Subsets:
    """Rows of a dataset by query id, keeping each query's documents together."""

    def __init__(self, data: LetorData):
        self.data = data
        self.index = {str(q): i for i, q in enumerate(data.query_ids)}
        self.starts = offsets_from_group(data.group)

    def take(self, query_ids):
        """(X, y, group) of these queries, in this order."""
        positions = [self.index[q] for q in query_ids]
        rows = np.concatenate([np.arange(self.starts[i], self.starts[i + 1]) for i in positions])
        return self.data.X[rows], self.data.y[rows], self.data.group[positions]


# ----------------------------------------------------------------------------------------------
# Learned baselines

def fit_coordinate_ascent(X, y, group, k, *, rounds=3, steps=(0.05, 0.2, 0.5, 1.0, 2.0),
                          convention=None):
    """Linear ranker fitted by coordinate ascent on NDCG@k (Metzler & Croft 2007).

    Features are standardised; the weights start from the single best feature and each feature's
    weight is moved by ± each step while mean NDCG@k (under ``convention``, see
    :mod:`lgb_risk.conventions`) improves, for at most ``rounds`` sweeps.
    Returns a function scoring a feature matrix.
    """
    dense = np.asarray(X.toarray() if sp.issparse(X) else X, dtype=np.float64)
    mean, std = dense.mean(axis=0), dense.std(axis=0)
    std[std == 0] = 1.0
    Z = (dense - mean) / std

    def quality(scores):
        return metrics.ndcg(y, scores, group, k, convention=convention).mean()

    singles = [quality(Z[:, f]) for f in range(Z.shape[1])]
    w = np.zeros(Z.shape[1])
    w[int(np.argmax(singles))] = 1.0
    scores = Z @ w
    best = quality(scores)
    for _ in range(rounds):
        improved = False
        for f in range(Z.shape[1]):
            for step in (*steps, *(-s for s in steps)):
                trial = scores + step * Z[:, f]
                value = quality(trial)
                if value > best + 1e-12:
                    best, scores, improved = value, trial, True
                    w[f] += step
        if not improved:
            break

    def score(X_new):
        dense_new = np.asarray(X_new.toarray() if sp.issparse(X_new) else X_new, dtype=np.float64)
        return ((dense_new - mean) / std) @ w

    return score


def train_booster(objective, train, valid, config, selection=None) -> tuple[lgb.Booster, int]:
    """``lightgbm.train`` as the protocol runs it; returns the booster and its number of trees.

    ``train`` and ``valid`` are ``(X, y, group)``. ``[training]``: at most ``rounds`` trees,
    stopped after ``early_stopping`` rounds without gain on the validation set (0: all rounds),
    the model kept at the iteration of the best validation value of ``selection`` (a ``feval``;
    NDCG@k when None); with ``selection = "last"`` every tree is kept and ``valid`` is not used.
    Deterministic for a given configuration.
    """
    training = config["training"]
    params = {**config["lightgbm"], "objective": objective, "metric": "None", "verbose": -1,
              "num_threads": training["num_threads"], "deterministic": True,
              "seed": config["split"]["seed"]}
    train_set = lgb.Dataset(*train[:2], group=train[2], params={"verbose": -1})
    if training["selection"] == "last":
        booster = lgb.train(params, train_set, training["rounds"])
        return booster, booster.current_iteration()
    valid_set = lgb.Dataset(*valid[:2], group=valid[2], reference=train_set,
                            params={"verbose": -1})
    # Patience of `rounds`: LightGBM trains every round and keeps the best iteration.
    patience = training["early_stopping"] or training["rounds"]
    booster = lgb.train(
        params, train_set, training["rounds"], valid_sets=[valid_set],
        feval=selection if selection is not None else feval.ndcg_feval(config["evaluation"]["k"]),
        callbacks=[lgb.early_stopping(patience, verbose=False)])
    return booster, booster.best_iteration


def learned_baseline_scorer(name, subsets: Subsets, split: dict, config):
    """Train one learned baseline on the held-out queries; return its scoring function."""
    X, y, g = train = subsets.take(split["heldout_train"])
    valid = subsets.take(split["heldout_valid"])
    if name in ("lambdamart", "gbrt"):
        booster, trees = train_booster("lambdarank" if name == "lambdamart" else "regression",
                                       train, valid, config)
        return lambda X_new: booster.predict(X_new, num_iteration=trees)
    missing = np.flatnonzero(np.isnan(X.data)) if sp.issparse(X) else np.flatnonzero(
        np.isnan(np.asarray(X)).ravel())
    if missing.size:
        row = int(np.searchsorted(X.indptr, missing[0], side="right") - 1)
        query = split["heldout_train"][int(np.searchsorted(np.cumsum(g), row, side="right"))]
        raise ValueError(f"feature {int(X.indices[missing[0]]) + 1} of a document of query "
                         f"{query} is NaN (a missing value): the {name} baseline needs complete "
                         "features; fill them, or drop it from [baselines] learned")
    if name == "coordinate_ascent":
        return fit_coordinate_ascent(X, y, g, config["evaluation"]["k"])
    from sklearn.linear_model import Ridge
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    model = make_pipeline(StandardScaler(with_mean=not sp.issparse(X)), Ridge(alpha=1.0))
    model.fit(X, y)
    return model.predict


def feature_baseline(subsets: Subsets, split: dict, config) -> BaselineStore:
    """Per-query NDCG@k of the feature baseline (BM25) on the main queries."""
    main = [q for part in split["parts"] for q in part]
    base = config["baselines"]
    return BaselineStore.from_feature(*subsets.take(main), main, base["feature"],
                                      base["feature_name"], k=config["evaluation"]["k"])


def learned_baselines(subsets: Subsets, split: dict, config, stream=None) -> BaselineStore:
    """Per-query NDCG@k on the main queries of each learned baseline, trained on the held-out
    queries; a line per baseline trained on ``stream``."""
    main = [q for part in split["parts"] for q in part]
    X, y, g = subsets.take(main)
    names = config["baselines"]["learned"]
    columns = {}
    for i, name in enumerate(names, start=1):
        start = time.perf_counter()
        columns[name] = metrics.ndcg(y, learned_baseline_scorer(name, subsets, split, config)(X),
                                     g, config["evaluation"]["k"])
        if stream is not None:
            print(f"  learned baseline {i}/{len(names)} {name} trained "
                  f"({time.perf_counter() - start:.1f} s)", file=stream, flush=True)
    return BaselineStore(pd.DataFrame(columns, index=main), "ndcg", config["evaluation"]["k"],
                         {name: {"source": "learned", "trained_on": "heldout"}
                          for name in names})


# ----------------------------------------------------------------------------------------------
# Units of work

def needs_learned_baselines(unit: Unit) -> bool:
    """Whether the unit's learner takes the learned baselines (T*-FARO, GeoRisk)."""
    return OBJECTIVES[unit.learner].baseline_parameter == "baselines"


def make_objective(unit: Unit, config, train_ids, stores):
    """The unit's objective: [objective] parameters; one baseline (the feature baseline) or
    several (the learned baselines) as the learner takes them."""
    feature, learned = stores
    cls = OBJECTIVES[unit.learner]
    params = objective_parameters(config, unit.learner)
    if cls.baseline_parameter is None:
        return cls(**params)
    store = learned if needs_learned_baselines(unit) else feature
    return cls(alpha=unit.alpha, k=config["evaluation"]["k"], query_ids=train_ids,
               **{cls.baseline_parameter: store}, **params)


def selection_feval(unit: Unit, config, valid_ids, stores):
    """The validation measure that selects the unit's model: NDCG@k; with ``[training]
    selection = "risk"``, the learner's own risk measure (``risk_measure`` of its class) at the
    unit's α against the validation queries' baselines, the one it trains against."""
    k = config["evaluation"]["k"]
    measure = OBJECTIVES[unit.learner].risk_measure
    if config["training"]["selection"] != "risk" or measure is None:
        return feval.ndcg_feval(k)
    feature, learned = stores
    store = learned if needs_learned_baselines(unit) else feature
    return feval.risk_feval(store, query_ids=valid_ids, measure=measure, alpha=unit.alpha, k=k)


def compute_unit(unit: Unit, config, data: LetorData, split: dict, stores) -> pd.DataFrame:
    """Train one unit; its per-query test NDCG@k and the number of trees kept (``query_id``,
    ``ndcg``, ``best_iteration``)."""
    subsets = Subsets(data)
    train_ids, valid_ids, test_ids = fold_queries(split, unit.fold)
    objective = make_objective(unit, config, train_ids, stores)
    Xt, yt, gt = subsets.take(test_ids)
    booster, trees = train_booster(objective, subsets.take(train_ids), subsets.take(valid_ids),
                                   config, selection_feval(unit, config, valid_ids, stores))
    scores = booster.predict(Xt, num_iteration=trees)
    return pd.DataFrame({
        "query_id": test_ids, "ndcg": metrics.ndcg(yt, scores, gt, config["evaluation"]["k"]),
        "best_iteration": trees})


_WORKER_STATE = {}


@contextmanager
def unit_threads(config):
    """Give the objectives' numba kernels the units' thread budget, ``training.num_threads``.

    A unit uses that many threads in LightGBM and in the kernels alike, whatever ``--jobs`` is:
    parallelism across units comes from processes. (Left to numba's default, each worker's
    kernels start a pool over all cores, and on 2 cores two workers ran 5x slower.) The
    driver's own training, the baselines, keeps to the same budget: it runs beside the workers,
    and an idle OpenMP thread spinning between its many small kernel calls took 2 CPU seconds
    from them.
    """
    before = numba.get_num_threads()
    numba.set_num_threads(min(numba.config.NUMBA_NUM_THREADS, config["training"]["num_threads"]))
    try:
        yield
    finally:
        numba.set_num_threads(before)


def unit_task(unit: Unit, config, out: str) -> tuple[pd.DataFrame, float]:
    """What a worker runs: one unit, with the data loaded once per process (kept in this
    module, so that spawned and Dask workers alike find it) and the unit's thread budget set
    here, in the task's own thread (numba's thread count is per thread). Returns the unit's
    table and the seconds taken; the driver writes the file."""
    start = time.perf_counter()
    state = _worker_state(config, out)
    split, stores = _unit_inputs(state, unit)
    with unit_threads(config):
        frame = compute_unit(unit, config, state["data"], split, stores)
    return frame, time.perf_counter() - start


def _worker_state(config, out: str) -> dict:
    """This process's data for the run (loaded at its first task of the run)."""
    key = (str(out), json.dumps(config, sort_keys=True))
    if _WORKER_STATE.get("key") != key:
        _WORKER_STATE.clear()
        _WORKER_STATE.update(key=key, out=Path(out), data=load_dataset(config), repeats={})
    return _WORKER_STATE


def _unit_inputs(state: dict, unit: Unit):
    """A unit's split and baseline stores, each file read once per process; the learned
    baselines when a unit first needs them (a parallel run writes them while the units that
    do not need them train)."""
    folder = RunFolder(state["out"], unit.repeat)
    read = state["repeats"].setdefault(unit.repeat, {})
    if "split" not in read:
        read.update(split=folder.read_split(), feature=folder.read_feature_baseline())
    if needs_learned_baselines(unit) and "learned" not in read:
        read["learned"] = folder.read_learned_baselines()
    return read["split"], (read["feature"], read.get("learned"))


# ----------------------------------------------------------------------------------------------
# The whole run

def _clock(seconds: float) -> str:
    seconds = int(seconds)
    return f"{seconds // 60:02d}:{seconds % 60:02d}"


class Progress:
    """One line per event on standard error: units done, running and left, elapsed time and,
    once units have finished in this run, an estimate of the time left."""

    def __init__(self, total: int, done: int, stream=sys.stderr):
        self.total, self.done, self.start, self.stream = total, done, time.perf_counter(), stream
        self.first_done = done

    def line(self, running: int, message: str) -> None:
        elapsed = time.perf_counter() - self.start
        left = self.total - self.done - running
        finished = self.done - self.first_done
        estimate = (f", about {_clock(elapsed / finished * (left + running))} to go"
                    if finished and left + running else "")
        print(f"[{self.done}/{self.total} done, {running} running, {left} left, "
              f"{_clock(elapsed)}{estimate}] {message}", file=self.stream, flush=True)


def check_before_training(config, data: LetorData) -> None:
    """Refuse, before any training, what would fail later."""
    n_features = data.X.shape[1]
    feature = config["baselines"]["feature"]
    if feature > n_features:
        raise ValueError(f"configuration: baselines.feature: feature {feature} is out of range; "
                         f"the data has features 1..{n_features}")
    if data.query_ids.size < minimum_queries(config):
        raise ValueError(f"the dataset has {data.query_ids.size} queries; the split needs at "
                         f"least {minimum_queries(config)}")
    check_lightgbm_parameters(config, data)


def check_lightgbm_parameters(config, data: LetorData) -> None:
    """Let LightGBM judge the ``[lightgbm]`` parameters on a few queries, before any training;
    refuse a ``min_data_in_leaf`` that leaves a fold's training part without a split."""
    few = Subsets(data).take([str(q) for q in data.query_ids[:3]])
    try:
        lgb.train({**config["lightgbm"], "objective": "lambdarank", "verbose": -1,
                   "num_threads": 1}, lgb.Dataset(few[0], few[1], group=few[2]), 1)
    except (lgb.basic.LightGBMError, ValueError, TypeError) as exc:
        raise ValueError(f"configuration [lightgbm]: LightGBM refuses the parameters "
                         f"{config['lightgbm']}: {str(exc).strip()}") from None
    min_leaf = config["lightgbm"].get("min_data_in_leaf")
    if min_leaf is not None:
        split = make_split(data.query_ids, config)
        sizes = dict(zip(map(str, data.query_ids), data.group.tolist()))
        parts = [split["heldout_train"]] + [fold_queries(split, f)[0]
                                            for f in range(config["split"]["folds"])]
        smallest = min(sum(sizes[q] for q in part) for part in parts)
        if min_leaf * 2 > smallest:
            raise ValueError(f"configuration [lightgbm] min_data_in_leaf = {min_leaf}: the "
                             f"smallest training part has {smallest} documents, too few for "
                             "even one split (each leaf needs min_data_in_leaf)")


def _submit_units(client, units, config, out: Path, priority: int = 0) -> dict:
    """Submit the units to the cluster (Dask runs higher ``priority`` first); returns
    {future: unit}."""
    return {client.submit(unit_task, unit, config, str(out), pure=False, priority=priority,
                          key=f"unit-{unit.repeat}-{unit.filename}"): unit for unit in units}


def _collect_units(futures: dict, slots: int, repeats, progress) -> None:
    """Write each unit computed on the cluster as it arrives, so that a lost driver or worker
    loses only the units in flight. A unit that raises fails alone; the others finish, and the
    run then raises naming the failed ones."""
    from distributed import as_completed

    failed = {}
    pending = len(futures)
    for future in as_completed(futures):
        unit = futures[future]
        pending -= 1
        if future.status == "error":
            failed[unit] = f"{type(future.exception()).__name__}: {future.exception()}"
            progress.line(min(slots, pending), f"{unit} FAILED: {failed[unit]}")
            continue
        frame, seconds = future.result()
        repeats[unit.repeat].write_unit(unit, frame)
        progress.done += 1
        progress.line(min(slots, pending), f"{unit} finished ({seconds:.1f} s)")
    if failed:
        raise ValueError(f"{len(failed)} unit(s) failed, the others are kept (run the same "
                         "command again to retry them): " + "; ".join(
                             f"{unit}: {message}" for unit, message in failed.items()))


def run_experiment(config, out, *, jobs: int = 1, scheduler: str | None = None,
                   stop_after: str | None = None, stream=sys.stderr) -> Path:
    """Run (or resume) the configured experiment into ``out``; returns the report's path.

    Units run in this process (``jobs=1``), on a local Dask cluster of ``jobs`` worker
    processes, or on the Dask cluster at ``scheduler``. ``stop_after="split"`` or
    ``"baselines"`` stops after that stage.
    """
    if not isinstance(jobs, int) or jobs < 1:
        raise ValueError(f"jobs must be a whole number >= 1, got {jobs!r}")
    folder = RunFolder(out)
    repeats = folder.repeats(config)
    units = all_units(config)
    todo = [u for u in units if not repeats[u.repeat].unit_done(u)]
    on_dask = bool(todo) and stop_after is None and (jobs > 1 or scheduler is not None)
    if on_dask:
        try:
            require_dask(needed_for="--jobs > 1 or --scheduler")
        except ImportError as error:
            raise ValueError(str(error)) from None
    with ExitStack() as stack:
        # The cluster starts in a thread while this process loads the data and writes the split
        # and the feature baseline, which the workers read (a local cluster's workers are
        # forked from a server that the CLI started, importing their modules meanwhile:
        # lgb_risk._dask.start_worker_server).
        cluster = stack.enter_context(dask_client_in_background(
            jobs, scheduler, needed_for="--jobs > 1 or --scheduler",
            preload=(__name__,))) if on_dask else None
        data = load_dataset(config)
        check_before_training(config, data)
        for repeat in repeats:
            repeat.prepare()
        folder.keep_config(config)
        stack.enter_context(unit_threads(config))
        for repeat in repeats:
            if not repeat.split_path.exists():
                repeat.write_split(make_split(data.query_ids, config, repeat.repeat))
        if stop_after == "split":
            return folder.split_path

        subsets = Subsets(data)
        for repeat in repeats:
            if not repeat.feature_path.exists():
                repeat.write_feature_baseline(feature_baseline(subsets, repeat.read_split(),
                                                               config))
        untrained = [repeat.repeat for repeat in repeats
                     if config["baselines"]["learned"] and not repeat.learned_path.exists()]

        def train_learned_baselines():
            for r in untrained:
                where = f" (repeat {r})" if r else ""
                print(f"training the learned baselines on the held-out queries{where} ...",
                      file=stream, flush=True)
                repeats[r].write_learned_baselines(learned_baselines(
                    subsets, repeats[r].read_split(), config, stream))

        if stop_after == "baselines":
            train_learned_baselines()
            return folder.baselines_dir

        progress = Progress(len(units), len(units) - len(todo), stream)
        where = f"the Dask cluster at {scheduler}" if scheduler else f"{jobs} job(s)"
        progress.line(0, f"{len(todo)} unit(s) to run with {where}")
        if cluster is not None:
            # The units that do not take the learned baselines are submitted as soon as the
            # cluster is up, while this process trains those; then the others, ahead of those
            # still queued: GeoRisk's are the longest, and the short ones left fill the end of
            # the run, when a worker waits for the last.
            waiting = [u for u in todo if needs_learned_baselines(u) and u.repeat in untrained]
            ready = [u for u in todo if u not in waiting]
            submitted = cluster.then(lambda client: _submit_units(client, ready, config,
                                                                  folder.out))
            train_learned_baselines()
            client = cluster.result()
            futures = {**submitted.result(),
                       **_submit_units(client, waiting, config, folder.out, priority=1)}
            _collect_units(futures, max(1, len(client.scheduler_info()["workers"])), repeats,
                           progress)
        else:
            train_learned_baselines()
            state = {"out": folder.out, "repeats": {}}
            for unit in todo:
                progress.line(1, f"{unit} started")
                start = time.perf_counter()
                split, stores = _unit_inputs(state, unit)
                repeats[unit.repeat].write_unit(unit, compute_unit(unit, config, data, split,
                                                                   stores))
                progress.done += 1
                progress.line(0, f"{unit} finished ({time.perf_counter() - start:.1f} s)")
    return write_report(config, folder.out)
