"""lgb_risk: risk-sensitive LambdaMART for LightGBM, and risk-sensitive IR evaluation.

Modules: :mod:`lgb_risk.metrics` (per-query effectiveness), :mod:`lgb_risk.risk` (risk measures),
:mod:`lgb_risk.data` (TREC and LETOR readers), :mod:`lgb_risk.trec` (gdeval.pl-style evaluation),
:mod:`lgb_risk.cli` (the ``lgb-risk`` command).
"""

from lgb_risk import baselines, data, feval, metrics, risk, trec
from lgb_risk.baselines import BaselineStore
from lgb_risk.objectives import TFARO, TSARO, UCRO, GeoRisk, LambdaMART, TStarFARO

__all__ = [
    "LambdaMART", "UCRO", "TSARO", "TFARO", "TStarFARO", "GeoRisk", "BaselineStore",
    "baselines", "data", "feval", "metrics", "risk", "trec", "__version__",
]
__version__ = "0.1.0"
