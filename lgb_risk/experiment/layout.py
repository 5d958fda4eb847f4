"""The run folder: every path of an experiment's output and every reader and writer of it.

::

    OUT/config.json                      the configuration the run was started with
    OUT/measures.json                    the data's highest label (ERR's l_max where unset)
    OUT/split.json                       the query split (held-out part, fold parts)
    OUT/baselines/feature__MEASURE.csv   per-query values of each reported measure (and the
                                         target) of the feature baseline (+ .meta.json)
    OUT/baselines/learned__MEASURE.csv   the same of the learned baselines (+ .meta.json)
    OUT/baselines/learned_scores.npy     the learned baselines' scores of the main queries'
                                         documents (a measure added later is computed from them)
    OUT/units/foldF__LEARNER__aALPHA.csv one unit's per-query test values of each measure and
                                         its number of trees
    OUT/units/foldF__LEARNER__aALPHA.scores.npy
                                         its model's scores of the test documents (written
                                         first: a measure added later is computed from them)
    OUT/repeatR/split.json, baselines/, units/   the same for repeat R >= 1 (``[split] repeats``)
    OUT/report.md, report.csv, report.tex, *.png (or .pdf, .svg: ``[report] figure_format``)
                                         the report (:mod:`lgb_risk.experiment.report`)
    OUT/environment.json                 the versions and machine facts it was made with

Every file is written whole or not at all (atomic rename); :meth:`RunFolder.prepare` removes the
temporary files a killed run left, so that what exists is complete and resuming redoes only what
is missing.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from lgb_risk._files.atomic import TEMPORARY, atomic_write, atomic_write_text, read_exact_csv
from lgb_risk.baselines import BaselineStore
from lgb_risk.experiment.measuring import RunMeasures

if TYPE_CHECKING:
    from lgb_risk.experiment.config import ExperimentConfig
    from lgb_risk.measures import MeasureSpec

__all__ = ["RunFolder", "Unit", "all_units"]


@dataclass(frozen=True)
class Unit:
    """One (fold, learner, α) training run of one repeat of the protocol."""

    fold: int
    learner: str
    alpha: float
    repeat: int = 0

    @property
    def filename(self) -> str:
        return f"{self.stem}.csv"

    @property
    def stem(self) -> str:
        return f"fold{self.fold}__{self.learner}__a{self.alpha:g}"

    def __str__(self):
        where = f"repeat {self.repeat} " if self.repeat else ""
        return f"{where}fold {self.fold} {self.learner} α={self.alpha:g}"


def all_units(config: ExperimentConfig) -> list[Unit]:
    """Every unit of a configuration: repeats × learners × their α × folds."""
    return [Unit(fold, learner, alpha, repeat) for repeat in range(config.split.repeats)
            for learner, alphas in config.learners.items()
            for alpha in alphas for fold in range(config.split.folds)]


#: The configuration's keys that change what the report shows, not what was trained.
REPORT_ONLY = ("name", "report")


def _reported(evaluation: dict) -> list:
    return list(evaluation["measures"] or [f"ndcg@{evaluation['k'] or 10}"])


def _extends(config: dict, recorded: dict) -> bool:
    """Whether ``config`` is ``recorded`` with, at most, learners or α or reported measures
    added (the first measure, the default target, kept) and the report's settings
    (:data:`REPORT_ONLY`) changed (both as plain values,
    :meth:`~lgb_risk.experiment.config.ExperimentConfig.to_dict`)."""
    kept = ("learners", "evaluation", *REPORT_ONLY)
    if {k: v for k, v in config.items() if k not in kept} != {
            k: v for k, v in recorded.items() if k not in kept}:
        return False
    now, before = _reported(config["evaluation"]), _reported(recorded["evaluation"])
    if now[0] != before[0] or not set(before) <= set(now):
        return False
    return all(set(alphas) <= set(config["learners"].get(learner, []))
               for learner, alphas in recorded["learners"].items())


class RunFolder:
    """An experiment's output folder (see the module docstring for its files)."""

    def __init__(self, out, repeat: int = 0):
        self.out = Path(out)
        self.repeat = repeat
        self.config_path = self.out / "config.json"
        self.measures_path = self.out / "measures.json"
        here = self.out if repeat == 0 else self.out / f"repeat{repeat}"
        self.split_path = here / "split.json"
        self.baselines_dir = here / "baselines"
        self.learned_scores_path = self.baselines_dir / "learned_scores.npy"
        self.units_dir = here / "units"
        self.report_path = self.out / "report.md"
        self.report_csv_path = self.out / "report.csv"
        self.report_tex_path = self.out / "report.tex"
        self.environment_path = self.out / "environment.json"

    def repeats(self, config: ExperimentConfig) -> list[RunFolder]:
        """The folder of every repeat of the configuration (repeat 0 is this folder's top)."""
        return [RunFolder(self.out, r) for r in range(config.split.repeats)]

    def prepare(self) -> None:
        """Create the folders; remove the temporary files this library's writes left when a run
        was killed (only those: ``.NAME.XXXXXXXX.lgb_risk.tmp``).

        Refuses a path that is a file, and a folder that holds other things but no run.
        """
        if self.out.exists() and not self.out.is_dir():
            raise ValueError(f"--out {self.out} is a file; an experiment writes a folder")
        if self.out.is_symlink() and not self.out.exists():
            raise ValueError(f"--out {self.out} is a symbolic link to {os.readlink(self.out)}, "
                             "which does not exist: create that folder or choose another --out")
        if (self.repeat == 0 and self.out.is_dir() and any(self.out.iterdir())
                and not self.config_path.exists()):
            raise ValueError(f"--out {self.out} is a folder with other files and no run in it "
                             "(no config.json); choose an empty or new folder")
        self.units_dir.mkdir(parents=True, exist_ok=True)
        self.baselines_dir.mkdir(exist_ok=True)
        for folder in {self.out, self.split_path.parent, self.units_dir, self.baselines_dir}:
            for stale in folder.glob(f".*{TEMPORARY}"):
                stale.unlink()  # its unit or stage is redone

    def keep_config(self, config: ExperimentConfig) -> None:
        """Record the configuration; refuse a folder that holds a run of another one
        (:meth:`check_config`)."""
        self.check_config(config)
        atomic_write_text(self.config_path, json.dumps(config.to_dict(), indent=1,
                                                       sort_keys=True))

    def check_config(self, config: ExperimentConfig) -> None:
        """Refuse, writing nothing, a folder that holds a run of another configuration.

        A configuration that only adds learners or α to the recorded one, or changes what the
        report shows (``name``, ``[report]``), continues its run: the units done are kept, only
        the new ones are trained, and the report is written anew.
        """
        if self.config_path.exists():
            from lgb_risk.experiment.config import validate

            recorded = json.loads(self.config_path.read_text())
            baselines = recorded.get("baselines", {})
            if isinstance(baselines.get("feature"), int):  # recorded before 0.2: LETOR's
                baselines["column"] = baselines.pop("feature") - 1  # 1-based number
            try:
                recorded = validate(recorded).to_dict()  # keys added since get their defaults
            except ValueError:
                pass
            current = config.to_dict()
            if not _extends(current, recorded):
                changed = sorted(k for k in set(current) | set(recorded)
                                 if current.get(k) != recorded.get(k))
                raise ValueError(f"{self.out} holds a run with another configuration (it differs "
                                 f"in {', '.join(changed)}, beyond adding learners, α or "
                                 "reported measures or changing [report]); choose another "
                                 "--out or remove that folder")

    def keep_max_label(self, max_label: int) -> None:
        """Record the data's highest label (the measures' ERR l_max where unset)."""
        atomic_write_text(self.measures_path, json.dumps({"max_label": int(max_label)}))

    def measures(self, config: ExperimentConfig) -> RunMeasures:
        """The run's measures, as the run recorded its data's highest label."""
        return RunMeasures(config, json.loads(self.measures_path.read_text())["max_label"])

    def read_split(self) -> dict:
        return json.loads(self.split_path.read_text())

    def write_split(self, split: dict) -> None:
        atomic_write_text(self.split_path, json.dumps(split, indent=1))

    def main_queries(self) -> list[str]:
        """The main queries (the folds' parts together), in split order."""
        return [q for part in self.read_split()["parts"] for q in part]

    def feature_path(self, measure: MeasureSpec) -> Path:
        return self.baselines_dir / f"feature__{RunMeasures.slug(measure)}.csv"

    def learned_path(self, measure: MeasureSpec) -> Path:
        return self.baselines_dir / f"learned__{RunMeasures.slug(measure)}.csv"

    def write_learned_scores(self, scores: np.ndarray) -> None:
        """The learned baselines' scores of the main queries' documents (one column each)."""
        _save_array(self.learned_scores_path, scores)

    def read_learned_scores(self) -> np.ndarray:
        return np.load(self.learned_scores_path)

    def read_feature_baseline(self, measure: MeasureSpec) -> BaselineStore:
        return BaselineStore.load(self.feature_path(measure))

    def read_learned_baselines(self, measure: MeasureSpec) -> BaselineStore | None:
        """The learned baselines, or None where the run has none."""
        path = self.learned_path(measure)
        return BaselineStore.load(path) if path.exists() else None

    def read_baselines(self, measure: MeasureSpec) -> tuple[BaselineStore, BaselineStore | None]:
        """The feature baseline, and the learned baselines where the run has them."""
        return self.read_feature_baseline(measure), self.read_learned_baselines(measure)

    def unit_path(self, unit: Unit) -> Path:
        return self.units_dir / unit.filename

    def unit_scores_path(self, unit: Unit) -> Path:
        return self.units_dir / f"{unit.stem}.scores.npy"

    def unit_done(self, unit: Unit) -> bool:
        """Whether the unit's table and its model's test scores are both kept (a unit whose
        scores were deleted is trained again: a measure added later is computed from them)."""
        return self.unit_path(unit).exists() and self.unit_scores_path(unit).exists()

    def unit_lost_its_scores(self, unit: Unit) -> bool:
        """Whether the unit's table is kept but its test scores are not (deleted since)."""
        return self.unit_path(unit).exists() and not self.unit_scores_path(unit).exists()

    def write_unit(self, unit: Unit, frame, scores: np.ndarray | None = None) -> None:
        """A unit's table, after its model's test scores (when given): the table marks the
        unit done."""
        if scores is not None:
            _save_array(self.unit_scores_path(unit), scores)
        atomic_write_text(self.unit_path(unit), frame.to_csv(index=False, float_format="%.17g"))

    def read_unit(self, unit: Unit):
        """A unit's per-query test values: columns ``query_id``, one per measure (its label,
        ``NDCG@10``), ``best_iteration``."""
        return read_exact_csv(self.unit_path(unit), "query_id")

    def read_unit_scores(self, unit: Unit) -> np.ndarray:
        path = self.unit_scores_path(unit)
        if not path.exists():
            raise FileNotFoundError(f"unit {unit} has no test scores ({path}, deleted?): run "
                                    "the same command again to train it again")
        return np.load(path)


def _save_array(path: Path, values: np.ndarray) -> None:
    def write(tmp):
        with open(tmp, "wb") as handle:
            np.save(handle, values)
    atomic_write(path, write)
