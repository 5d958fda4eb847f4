"""The experiment application: the papers' protocol, resumable and parallel.

Modules, imports pointing one way (runner → protocol_baselines → training → protocol →
config; runner → report → layout; the library never imports this package):

:mod:`~lgb_risk.experiment.config`
    the TOML configuration, validated into one frozen record per table;
:mod:`~lgb_risk.experiment.layout`
    the run folder: every path of a run's output, and every reader and writer of it;
:mod:`~lgb_risk.experiment.protocol`
    the dataset, the seeded split and each fold's queries;
:mod:`~lgb_risk.experiment.training`
    one booster and one unit of work (fold, learner, α) as ``[training]`` says;
:mod:`~lgb_risk.experiment.protocol_baselines`
    the feature baseline and the learned baselines;
:mod:`~lgb_risk.experiment.runner`
    the run's orchestration (stages, units here or on Dask, progress) and
    :func:`run_experiment`;
:mod:`~lgb_risk.experiment.report`
    the report's tables and figures;
:mod:`~lgb_risk.experiment.synthetic`
    the built-in synthetic data (the demo experiment, the demo TREC collection).

``from lgb_risk.experiment import run_experiment, load_config`` loads what it names on first use.
"""

import importlib

__all__ = ["run_experiment", "load_config", "RunFolder", "config", "layout", "report", "runner",
           "synthetic"]

_OBJECTS = {"run_experiment": "runner", "load_config": "config", "RunFolder": "layout"}


def __getattr__(name):
    if name in _OBJECTS:
        return getattr(importlib.import_module(f"lgb_risk.experiment.{_OBJECTS[name]}"), name)
    if name in ("config", "layout", "report", "runner", "synthetic"):
        return importlib.import_module(f"lgb_risk.experiment.{name}")
    raise AttributeError(f"module 'lgb_risk.experiment' has no attribute {name!r}")
