"""The papers' experimental protocol, resumable and parallel ([GEO] §6.1, [TR] §6): the run's
orchestration (stages, units on this process or a Dask cluster, progress).

References: [GEO], [TR] (:mod:`lgb_risk.references`).

Stages, each written to the output folder as it completes:

1. ``split.json`` — queries split once, seeded: a held-out fraction (two thirds train, one third
   validation) for the learned baselines, the rest in ``folds`` parts; fold f tests on part f,
   validates on part f+1 and trains on the others, so the test parts cover every main query once.
2. ``baselines/feature__MEASURE.csv`` and ``baselines/learned__MEASURE.csv`` (with
   ``.meta.json``) — per-query values of each reported measure and of the target on the main
   queries of the feature baseline (BM25) and of the learned baselines (LambdaMART, GBRT, a
   coordinate-ascent linear ranker, ridge regression), trained on the held-out part, whose
   scores are kept in ``baselines/learned_scores.npy``.
3. ``units/FOLD__LEARNER__aALPHA.csv`` — one unit of work per (fold, learner, α): trained toward
   the target measure as ``[training]`` says (early stopping on the fold's validation value of
   the target by default; a fixed number of trees, the model selected on another measure or on
   the learner's own risk measure, as Jforests does), per-query test values of every reported
   measure written atomically after the model's test scores (``.scores.npy``). On a Dask
   cluster (started in a thread while the data is loaded and the first stages written), the
   units whose learner does not take the learned baselines start once the feature baseline is
   written, while this process trains the learned baselines; the others then go ahead of those
   still queued.

Running the same command again skips every stage and unit whose file exists, so a run killed at any
moment resumes with nothing lost or doubled. A measure added to ``[evaluation] measures`` of a
finished run is computed from the kept scores of the units and of the learned baselines:
nothing is trained again. Training is deterministic (``deterministic=True``, a
fixed number of threads per unit, seeded splits), so results do not depend on ``--jobs``.

The stages live in :mod:`~lgb_risk.experiment.protocol` (data and split),
:mod:`~lgb_risk.experiment.protocol_baselines` (the baselines) and
:mod:`~lgb_risk.experiment.training` (one booster, one unit).
"""

from __future__ import annotations

import json
import sys
import time
from contextlib import ExitStack
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from lgb_risk._runtime.dask_client import (
    check_scheduler,
    dask_client_in_background,
    require_dask,
    scheduler_workers,
    silence_dask_logs,
)
from lgb_risk._runtime.progress import Bar, on_terminal
from lgb_risk.experiment.config import ExperimentConfig
from lgb_risk.experiment.layout import RunFolder, Unit, all_units
from lgb_risk.experiment.measuring import RunMeasures
from lgb_risk.experiment.protocol import Subsets, fold_queries, load_dataset, make_split
from lgb_risk.experiment.protocol_baselines import (
    baseline_store,
    feature_baseline,
    learned_baseline_scores,
)
from lgb_risk.experiment.report import write_report
from lgb_risk.experiment.training import (
    check_before_training,
    compute_unit,
    evaluate_unit,
    needs_learned_baselines,
    unit_threads,
)

if TYPE_CHECKING:
    import os
    from typing import TextIO

__all__ = ["run_experiment", "unit_task"]

# ----------------------------------------------------------------------------------------------
# Units of work on a worker

_WORKER_STATE: dict = {}


def unit_task(unit: Unit, config: ExperimentConfig,
              out: str) -> tuple[pd.DataFrame, np.ndarray, float]:
    """What a worker runs: one unit, with the data loaded once per process (kept in this
    module, so that spawned and Dask workers alike find it) and the unit's thread budget set
    here, in the task's own thread (numba's thread count is per thread). Returns the unit's
    table, its model's test scores and the seconds taken; the driver writes the files."""
    start = time.perf_counter()
    state = _worker_state(config, out)
    split, stores = _unit_inputs(state, unit)
    with unit_threads(config):
        frame, scores = compute_unit(unit, config, state["data"], split, stores,
                                     state["measures"])
    return frame, scores, time.perf_counter() - start


def _worker_state(config: ExperimentConfig, out: str) -> dict:
    """This process's data for the run (loaded at its first task of the run)."""
    key = (str(out), json.dumps(config.to_dict(), sort_keys=True))
    if _WORKER_STATE.get("key") != key:
        _WORKER_STATE.clear()
        data = load_dataset(config)
        _WORKER_STATE.update(key=key, out=Path(out), data=data, repeats={},
                             measures=RunMeasures(config, int(data.y.max(initial=0))))
    return _WORKER_STATE


def _unit_inputs(state: dict, unit: Unit):
    """A unit's split and baseline stores in the target measure, each file read once per
    process; the learned baselines when a unit first needs them (a parallel run writes them
    while the units that do not need them train)."""
    folder = RunFolder(state["out"], unit.repeat)
    target = state["measures"].target
    read = state["repeats"].setdefault(unit.repeat, {})
    if "split" not in read:
        read.update(split=folder.read_split(), feature=folder.read_feature_baseline(target))
    if needs_learned_baselines(unit) and "learned" not in read:
        read["learned"] = folder.read_learned_baselines(target)
    return read["split"], (read["feature"], read.get("learned"))


# ----------------------------------------------------------------------------------------------
# The whole run

def _clock(seconds: float) -> str:
    seconds = int(seconds)
    return f"{seconds // 60:02d}:{seconds % 60:02d}"


class _Progress:
    """Units done, running and left, elapsed time and, once two units have finished in this
    run, an estimate of the time left: a bar redrawn in place where ``stream`` is a terminal
    (``bar=None``), one line per event otherwise.

    The estimate is the rate at which units finished since the first one did, times the units
    not yet finished: the time before the first unit (loading, the baselines, numba compiling
    the kernels) is left out, as it does not recur. On the bar, notes (a unit that failed, what
    the run is about to do) are printed above it; a unit started or finished only redraws it.
    """

    def __init__(self, total: int, done: int, stream=sys.stderr, bar: bool | None = None):
        self.total, self.done, self.start, self.stream = total, done, time.perf_counter(), stream
        self.first_done = done
        self.first_finished_at: float | None = None
        self._bar = (Bar(total, stream, description="units", done=done)
                     if (on_terminal(stream) if bar is None else bar) else None)

    def __enter__(self) -> _Progress:
        return self

    def __exit__(self, *exc) -> None:
        if self._bar is not None:
            self._bar.close()

    def line(self, running: int, message: str, *, note: bool = False) -> None:
        now = time.perf_counter()
        elapsed = now - self.start
        left = self.total - self.done - running
        finished = self.done - self.first_done
        if finished and self.first_finished_at is None:
            self.first_finished_at = now
        estimate = ""
        if finished >= 2 and left + running and self.first_finished_at is not None:
            rate = (now - self.first_finished_at) / (finished - 1)
            estimate = f", about {_clock(rate * (left + running))} to go"
        if self._bar is None:
            print(f"[{self.done}/{self.total} done, {running} running, {left} left, "
                  f"{_clock(elapsed)}{estimate}] {message}", file=self.stream, flush=True)
            return
        if note:
            self._bar.write(message)
        self._bar.show(self.done, f"{running} running, {left} left{estimate}"
                       + ("" if note else f" | {message}"))


def _submit_units(client, units, config: ExperimentConfig, out: Path, priority: int = 0) -> dict:
    """Submit the units to the cluster (Dask runs higher ``priority`` first); returns
    {future: unit}. The workers get ``out`` as an absolute path: theirs is another working
    folder."""
    return {client.submit(unit_task, unit, config, str(Path(out).absolute()), pure=False,
                          priority=priority,
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
            progress.line(min(slots, pending), f"{unit} FAILED: {failed[unit]}", note=True)
            continue
        frame, scores, seconds = future.result()
        repeats[unit.repeat].write_unit(unit, frame, scores)
        progress.done += 1
        progress.line(min(slots, pending), f"{unit} finished ({seconds:.1f} s)")
    if failed:
        raise ValueError(f"{len(failed)} unit(s) failed, the others are kept (run the same "
                         "command again to retry them): " + "; ".join(
                             f"{unit}: {message}" for unit, message in failed.items()))


def _reevaluate_units(repeats: list[RunFolder], units: list[Unit], subsets: Subsets,
                     measures: RunMeasures, stream) -> None:
    """Give every finished unit that lacks a reported measure its values, computed from the
    unit's kept test scores (a measure added to ``[evaluation] measures`` of a finished run):
    the models are not trained again."""
    missing = [unit for unit in units if repeats[unit.repeat].unit_done(unit)
               and any(spec.label not in repeats[unit.repeat].read_unit(unit)
                       for spec in measures.reported)]
    if missing:
        print(f"computing the added measure(s) for {len(missing)} finished unit(s) from their "
              "kept test scores ...", file=stream, flush=True)
    for unit in missing:
        folder = repeats[unit.repeat]
        test_ids = fold_queries(folder.read_split(), unit.fold)[2]
        _, labels, group = subsets.take(test_ids)
        trees = int(folder.read_unit(unit)["best_iteration"].iloc[0])
        folder.write_unit(unit, evaluate_unit(test_ids, labels, folder.read_unit_scores(unit),
                                              group, trees, measures))


def _quiet_when_interrupted(kind, error, trace) -> bool:
    """On Ctrl-C, silence the logs of Dask's event loop (tornado, asyncio, distributed) before
    the cluster closes: its callbacks cancelled mid-flight log tracebacks that say nothing to the
    user, whom the command tells in one line that the run can resume. Never swallows the
    interrupt."""
    if kind is not None and issubclass(kind, KeyboardInterrupt):
        silence_dask_logs()
    return False


def run_experiment(config: ExperimentConfig, out: str | os.PathLike, *, jobs: int = 1,
                   scheduler: str | None = None, stop_after: str | None = None,
                   stream: TextIO = sys.stderr, wait_for_workers: float = 0.0) -> Path:
    """Run (or resume) the configured experiment into ``out``; returns the report's path.

    Units run in this process (``jobs=1``), on a local Dask cluster of ``jobs`` worker
    processes (no more than there are units to run), or on the Dask cluster at ``scheduler``,
    which must answer and have a worker (waited for up to ``wait_for_workers`` seconds) before
    anything is written.
    ``stop_after="split"`` or ``"baselines"`` stops after that stage.
    """
    if not isinstance(jobs, int) or jobs < 1:
        raise ValueError(f"jobs must be a whole number >= 1, got {jobs!r}")
    folder = RunFolder(out)
    repeats = folder.repeats(config)
    units = all_units(config)
    todo = [u for u in units if not repeats[u.repeat].unit_done(u)]
    lost = [u for u in todo if repeats[u.repeat].unit_lost_its_scores(u)]
    if lost:
        print(f"note: {len(lost)} finished unit(s) lost their kept test scores "
              f"({repeats[lost[0].repeat].unit_scores_path(lost[0])}"
              f"{', ...' if len(lost) > 1 else ''}): training them again (the same bits)",
              file=stream, flush=True)
    jobs = min(jobs, max(1, len(todo)))  # a local worker per unit at most
    on_dask = bool(todo) and stop_after is None and (jobs > 1 or scheduler is not None)
    if on_dask:
        try:
            require_dask(needed_for="--jobs > 1 or --scheduler")
        except ImportError as error:
            raise ValueError(str(error)) from None
        if scheduler is not None:
            check_scheduler(scheduler, wait_for_workers=wait_for_workers)
    with ExitStack() as stack:
        # The cluster starts in a thread while this process loads the data and writes the split
        # and the feature baseline, which the workers read (a local cluster's workers are
        # forked from a server that the CLI started, importing their modules meanwhile:
        # lgb_risk._runtime.dask_client.start_worker_server).
        cluster = stack.enter_context(dask_client_in_background(
            jobs, scheduler, needed_for="--jobs > 1 or --scheduler",
            preload=(__name__,))) if on_dask else None
        stack.push(_quiet_when_interrupted)  # unwinds first: before the cluster closes
        data = load_dataset(config)
        check_before_training(config, data)
        if folder.out.is_dir():
            folder.check_config(config)  # before any repeat's folder is made
        for repeat in repeats:
            repeat.prepare()
        folder.keep_config(config)
        folder.keep_max_label(int(data.y.max(initial=0)))
        measures = folder.measures(config)
        needed = list({spec.label: spec for spec in (*measures.reported, measures.target)}
                      .values())
        stack.enter_context(unit_threads(config))
        for repeat in repeats:
            if not repeat.split_path.exists():
                repeat.write_split(make_split(data.query_ids, config, repeat.repeat))
        if stop_after == "split":
            return folder.split_path

        subsets = Subsets(data)
        for repeat in repeats:
            for spec in needed:
                if not repeat.feature_path(spec).exists():
                    feature_baseline(subsets, repeat.read_split(), config, measures,
                                     spec).save(repeat.feature_path(spec))
        untrained = [repeat.repeat for repeat in repeats
                     if config.baselines.learned and not repeat.learned_scores_path.exists()]

        def write_learned_stores(repeat):
            """Each measure's store of the learned baselines, from their kept scores."""
            names = config.baselines.learned
            for spec in needed:
                if not repeat.learned_path(spec).exists():
                    baseline_store(repeat.read_learned_scores(), names, subsets,
                                   repeat.read_split(), measures, spec,
                                   {name: {"source": "learned", "trained_on": "heldout"}
                                    for name in names}).save(repeat.learned_path(spec))

        def train_learned_baselines():
            for r in untrained:
                where = f" (repeat {r})" if r else ""
                print(f"training the learned baselines on the held-out queries{where} ...",
                      file=stream, flush=True)
                repeats[r].write_learned_scores(learned_baseline_scores(
                    subsets, repeats[r].read_split(), config, measures, stream))
                write_learned_stores(repeats[r])

        for repeat in repeats:  # a measure added to a run whose baselines are trained
            if config.baselines.learned and repeat.repeat not in untrained:
                write_learned_stores(repeat)
        _reevaluate_units(repeats, units, subsets, measures, stream)

        if stop_after == "baselines":
            train_learned_baselines()
            return folder.baselines_dir

        progress = stack.enter_context(_Progress(len(units), len(units) - len(todo), stream))
        where = f"the Dask cluster at {scheduler}" if scheduler else f"{jobs} job(s)"
        progress.line(0, f"{len(todo)} unit(s) to run with {where}", note=True)
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
            _collect_units(futures, max(1, len(scheduler_workers(client))), repeats,
                           progress)
        else:
            train_learned_baselines()
            state = {"out": folder.out, "repeats": {}, "measures": measures}
            for unit in todo:
                progress.line(1, f"{unit} started")
                start = time.perf_counter()
                split, stores = _unit_inputs(state, unit)
                repeats[unit.repeat].write_unit(unit, *compute_unit(unit, config, data, split,
                                                                    stores, measures))
                progress.done += 1
                progress.line(0, f"{unit} finished ({time.perf_counter() - start:.1f} s)")
    return write_report(config, folder.out)
