"""How the protocol trains one booster and one unit of work (fold, learner, α).

``[training]`` decides the number of trees and the model kept (early stopping on the validation
value of the target measure or of another, every tree, or the learner's own validation risk
measure, as Jforests selects); ``[objective]`` the objective's parameters and its target; the
unit's α and baselines come from the unit.
"""

from __future__ import annotations

from contextlib import contextmanager

import lightgbm as lgb
import numba
import numpy as np
import pandas as pd

from lgb_risk import feval, objectives
from lgb_risk._inputs.validation import check_lightgbm_parameter_names
from lgb_risk.data import LetorData
from lgb_risk.experiment.config import ExperimentConfig, objective_parameters
from lgb_risk.experiment.layout import Unit
from lgb_risk.experiment.measuring import RunMeasures
from lgb_risk.experiment.protocol import Subsets, fold_queries, make_split, minimum_queries
from lgb_risk.objectives import OBJECTIVES

__all__ = ["train_booster", "needs_learned_baselines", "make_objective", "selection_feval",
           "evaluate_unit", "compute_unit", "unit_threads", "check_before_training"]


def train_booster(objective, train, valid, config: ExperimentConfig,
                  selection) -> tuple[lgb.Booster, int]:
    """``lightgbm.train`` as the protocol runs it; returns the booster and its number of trees.

    ``train`` and ``valid`` are ``(X, y, group)``. ``[training]``: at most ``rounds`` trees,
    stopped after ``early_stopping`` rounds without gain on the validation set (0: all rounds),
    the model kept at the iteration of the best validation value of ``selection`` (a
    ``feval``); with ``selection = "last"`` every tree is kept, and neither ``valid`` nor
    ``selection`` is used. Deterministic for a given configuration.
    """
    training = config.training
    params = {**config.lightgbm, "objective": objective, "metric": "None", "verbose": -1,
              "num_threads": training.num_threads, "deterministic": True,
              "seed": config.split.seed}
    train_set = lgb.Dataset(train[0], train[1], group=train[2], params={"verbose": -1})
    if training.selection == "last":
        booster = lgb.train(params, train_set, training.rounds)
        return booster, booster.current_iteration()
    valid_set = lgb.Dataset(valid[0], valid[1], group=valid[2], reference=train_set,
                            params={"verbose": -1})
    # Patience of `rounds`: LightGBM trains every round and keeps the best iteration.
    patience = training.early_stopping or training.rounds
    booster = lgb.train(params, train_set, training.rounds, valid_sets=[valid_set],
                        feval=selection, callbacks=[lgb.early_stopping(patience, verbose=False)])
    return booster, booster.best_iteration


def needs_learned_baselines(unit: Unit) -> bool:
    """Whether the unit's learner takes the learned baselines (T*-FARO, GeoRisk)."""
    return OBJECTIVES[unit.learner].baseline_parameter == "baselines"


def make_objective(unit: Unit, config: ExperimentConfig, train_ids, stores,
                   measures: RunMeasures):
    """The unit's objective toward the run's target measure: [objective] parameters; one
    baseline (the feature baseline) or several (the learned baselines) as the learner takes
    them, in the target measure."""
    feature, learned = stores
    params = {key: value for key, value in objective_parameters(config, unit.learner).items()
              if key != "measure"}  # the target, written out for the data: measures.target
    return objectives.make_objective(
        unit.learner, alpha=unit.alpha, measure=measures.target.text,
        baseline=learned if needs_learned_baselines(unit) else feature, query_ids=train_ids,
        **params)


def selection_feval(unit: Unit, config: ExperimentConfig, valid_ids, stores,
                    measures: RunMeasures):
    """The validation measure that selects the unit's model: ``measures.selection`` (the
    target by default); with ``[training] selection = "risk"``, the learner's own risk measure
    (``risk_measure`` of its class) at the unit's α against the validation queries'
    baselines, in the target measure, the one it trains against; None for ``"last"``."""
    if measures.selection is None:
        return None
    measure = OBJECTIVES[unit.learner].risk_measure
    if config.training.selection != "risk" or measure is None:
        return feval.metric_feval(measures.selection.text)
    feature, learned = stores
    store = learned if needs_learned_baselines(unit) else feature
    return feval.risk_feval(store, query_ids=valid_ids, measure=measure, alpha=unit.alpha,
                            effectiveness=measures.target.text)


def evaluate_unit(test_ids, labels, scores, group, trees: int,
                  measures: RunMeasures) -> pd.DataFrame:
    """A unit's table from its model's test scores: ``query_id``, each reported measure by its
    label (``NDCG@10``, ``ERR(max_label=2)@20``), ``best_iteration``."""
    return pd.DataFrame({"query_id": test_ids,
                         **{spec.label: measures.compute(spec, labels, scores, group)
                            for spec in measures.reported},
                         "best_iteration": trees})


def compute_unit(unit: Unit, config: ExperimentConfig, data: LetorData, split: dict,
                 stores, measures: RunMeasures) -> tuple[pd.DataFrame, np.ndarray]:
    """Train one unit; its table (:func:`evaluate_unit`) and its model's test scores (the test
    queries' documents in split order). ``stores``: the baselines in the target measure."""
    subsets = Subsets(data)
    train_ids, valid_ids, test_ids = fold_queries(split, unit.fold)
    objective = make_objective(unit, config, train_ids, stores, measures)
    Xt, yt, gt = subsets.take(test_ids)
    booster, trees = train_booster(objective, subsets.take(train_ids), subsets.take(valid_ids),
                                   config, selection_feval(unit, config, valid_ids, stores,
                                                           measures))
    scores = np.asarray(booster.predict(Xt, num_iteration=trees))
    return evaluate_unit(test_ids, yt, scores, gt, trees, measures), scores


@contextmanager
def unit_threads(config: ExperimentConfig):
    """Give the objectives' numba kernels the units' thread budget, ``training.num_threads``.

    A unit uses that many threads in LightGBM and in the kernels alike, whatever ``--jobs`` is:
    parallelism across units comes from processes. (Left to numba's default, each worker's
    kernels start a pool over all cores, and the workers' pools contend for them.) The driver's
    own training, the baselines, keeps to the same budget: it runs beside the workers, and an
    idle OpenMP thread spinning between its many small kernel calls takes their CPU time
    (``scripts/bench_jobs.py`` measures the runner's parallel speed-up).
    """
    before = numba.get_num_threads()
    numba.set_num_threads(min(numba.config.NUMBA_NUM_THREADS,  # type: ignore[attr-defined]
                              config.training.num_threads))
    try:
        yield
    finally:
        numba.set_num_threads(before)


def check_before_training(config: ExperimentConfig, data: LetorData) -> None:
    """Refuse, before any training, what would fail later."""
    n_features = data.X.shape[1]
    column = config.baselines.column
    if column >= n_features:
        raise ValueError(f"configuration: baselines.column: column {column} is out of range; "
                         f"the data has columns 0..{n_features - 1}")
    if data.group.size and data.group.max() < 2:
        raise ValueError(f"every query of the dataset has a single document "
                         f"({data.query_ids.size} queries): there is nothing to rank")
    if data.query_ids.size < minimum_queries(config):
        raise ValueError(f"the dataset has {data.query_ids.size} queries; the split needs at "
                         f"least {minimum_queries(config)}")
    _check_lightgbm_parameters(config, data)


def _check_lightgbm_parameters(config: ExperimentConfig, data: LetorData) -> None:
    """Let LightGBM judge the ``[lightgbm]`` parameters on a few queries, before any training;
    refuse a ``min_data_in_leaf`` that leaves a fold's training part without a split."""
    check_lightgbm_parameter_names(config.lightgbm, "configuration [lightgbm]")
    few = Subsets(data).take([str(q) for q in data.query_ids[:3]])
    try:
        lgb.train({**config.lightgbm, "objective": "lambdarank", "verbose": -1,
                   "num_threads": 1}, lgb.Dataset(few[0], few[1], group=few[2]), 1)
    except (lgb.basic.LightGBMError, ValueError, TypeError) as exc:
        raise ValueError(f"configuration [lightgbm]: LightGBM refuses the parameters "
                         f"{config.lightgbm}: {str(exc).strip()}") from None
    min_leaf = config.lightgbm.get("min_data_in_leaf")
    if min_leaf is not None:
        split = make_split(data.query_ids, config)
        sizes = dict(zip(map(str, data.query_ids), data.group.tolist()))
        parts = [split["heldout_train"]] + [fold_queries(split, f)[0]
                                            for f in range(config.split.folds)]
        smallest = min(sum(sizes[q] for q in part) for part in parts)
        if min_leaf * 2 > smallest:
            raise ValueError(f"configuration [lightgbm] min_data_in_leaf = {min_leaf}: the "
                             f"smallest training part has {smallest} documents, too few for "
                             "even one split (each leaf needs min_data_in_leaf)")
