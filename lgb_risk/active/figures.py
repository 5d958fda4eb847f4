"""Figures of active-evaluation simulations (``plot`` extra: matplotlib)."""

from __future__ import annotations

import pandas as pd

__all__ = ["plot_errors"]


def plot_errors(ax, frame: pd.DataFrame) -> None:
    """Mean absolute error (± standard error) against budget, one line per method, log-log.

    ``frame`` has the columns ``method``, ``budget``, ``mean_abs_error`` and ``se``, as
    :func:`lgb_risk.active.simulate`'s table with ``se`` added.
    """
    for method, rows in frame.groupby("method", sort=False):
        ax.errorbar(rows["budget"], rows["mean_abs_error"], yerr=rows["se"], marker="o",
                    markersize=3, label=method)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("budget (mean-query costs)")
    ax.set_ylabel("mean absolute error")
