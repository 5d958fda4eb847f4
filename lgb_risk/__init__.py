"""lgb_risk: risk-sensitive LambdaMART for LightGBM, and risk-sensitive IR evaluation.

Modules: :mod:`lgb_risk.metrics` (per-query effectiveness), :mod:`lgb_risk.measures` (the measure
registry), :mod:`lgb_risk.conventions` (evaluation tools' conventions by name),
:mod:`lgb_risk.risk` (risk measures), :mod:`lgb_risk.significance` (paired tests with their
detectable differences), :mod:`lgb_risk.objectives` (the objectives),
:mod:`lgb_risk.data` (TREC and LETOR readers), :mod:`lgb_risk.trec` (TREC run evaluation),
:mod:`lgb_risk.feval` (training-time evaluation), :mod:`lgb_risk.sklearn` (:class:`RiskRanker`,
the scikit-learn estimator), :mod:`lgb_risk.distributed` (training on several Dask workers),
:mod:`lgb_risk.cli` (the ``lgb-risk`` command).

Submodules and the objective classes load on first use, so that ``lgb-risk evaluate`` starts
without LightGBM, numba or scikit-learn.
"""

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the names a type checker sees; at run time they load on first use
    from lgb_risk import (
        baselines,
        conventions,
        data,
        distributed,
        feval,
        measures,
        metrics,
        risk,
        significance,
        trec,
    )
    from lgb_risk.baselines import BaselineStore
    from lgb_risk.objectives import TFARO, TSARO, UCRO, GeoRisk, LambdaMART, TStarFARO
    from lgb_risk.sklearn import RiskRanker

__all__ = [
    "LambdaMART", "UCRO", "TSARO", "TFARO", "TStarFARO", "GeoRisk", "BaselineStore", "RiskRanker",
    "baselines", "conventions", "data", "distributed", "feval", "measures", "metrics", "risk",
    "significance", "trec",
    "__version__",
]
__version__ = "0.2.0"

_OBJECTS = {"LambdaMART": "objectives", "UCRO": "objectives", "TSARO": "objectives",
            "TFARO": "objectives", "TStarFARO": "objectives", "GeoRisk": "objectives",
            "BaselineStore": "baselines", "RiskRanker": "sklearn"}
_MODULES = {"baselines", "conventions", "data", "distributed", "feval", "measures", "metrics",
            "risk", "significance", "trec"}


def __getattr__(name):
    if name in _OBJECTS:
        return getattr(importlib.import_module(f"lgb_risk.{_OBJECTS[name]}"), name)
    if name in _MODULES:
        return importlib.import_module(f"lgb_risk.{name}")
    raise AttributeError(f"module 'lgb_risk' has no attribute {name!r}")


def __dir__():
    return sorted(__all__)
