"""Figures of active-evaluation simulations (``plot`` extra: matplotlib)."""

from __future__ import annotations

from typing import Any

import pandas as pd

__all__ = ["plot_errors"]

#: Each method's marker and line style, so that lines on top of each other stay apart.
_STYLES = {"passive": ("o", "-"), "active": ("s", "--"), "active uniD": ("^", "-."),
           "active uniC": ("v", ":")}


def plot_errors(ax: Any, frame: pd.DataFrame, *, title: str | None = None) -> Any:
    """Mean absolute error (± standard error) against budget, one line per method, log-log,
    each method with its own marker and line style, the budgets marked on the x axis.

    ``frame`` has the columns ``method``, ``budget``, ``mean_abs_error`` and ``se``, as
    :func:`lgb_risk.active.simulate`'s table with ``se`` added; ``title`` (the measure, the
    task) goes above. Returns ``ax``.
    """
    from matplotlib.ticker import LogLocator, NullFormatter, StrMethodFormatter

    for method, rows in frame.groupby("method", sort=False):
        marker, line = _STYLES.get(method, ("o", "-"))
        ax.errorbar(rows["budget"], rows["mean_abs_error"], yerr=rows["se"], marker=marker,
                    linestyle=line, markersize=4, markerfacecolor="none", label=method)
    budgets = sorted(frame["budget"].unique())
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xticks(budgets)
    ax.set_xticklabels([f"{b:g}" for b in budgets], fontsize=8)
    ax.xaxis.set_minor_formatter(NullFormatter())
    ax.xaxis.set_tick_params(which="minor", length=0)
    # Errors labelled at 1, 2 and 5 of each decade in plain numbers; no minor labels to collide.
    ax.yaxis.set_major_locator(LogLocator(subs=(1.0, 2.0, 5.0)))
    ax.yaxis.set_major_formatter(StrMethodFormatter("{x:g}"))
    ax.yaxis.set_minor_formatter(NullFormatter())
    ax.set_xlabel("budget (mean-query costs)")
    ax.set_ylabel("mean absolute error")
    if title:
        ax.set_title(title, fontsize=9)
    return ax
