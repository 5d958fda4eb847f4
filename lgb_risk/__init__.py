"""lgb_risk: risk-sensitive LambdaMART for LightGBM, and risk-sensitive IR evaluation.

Modules: :mod:`lgb_risk.metrics` (per-query effectiveness), :mod:`lgb_risk.risk` (risk measures),
:mod:`lgb_risk.data` (TREC and LETOR readers), :mod:`lgb_risk.trec` (gdeval.pl-style evaluation),
:mod:`lgb_risk.cli` (the ``lgb-risk`` command).
"""

from lgb_risk import data, metrics, risk, trec

__all__ = ["data", "metrics", "risk", "trec", "__version__"]
__version__ = "0.1.0"
