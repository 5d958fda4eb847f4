"""Tables of several evaluated runs (:mod:`lgb_risk.trec`'s results, ``{run name:
TopicValues}``): the per-topic table and frame, the summary of means and risk measures, and
:class:`RunSummary`, which holds them with the paper's LaTeX table and figures. Imported from
:mod:`lgb_risk.trec`, which evaluates the runs."""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import numpy as np

from lgb_risk import measures as registry
from lgb_risk._validation import check_choice
from lgb_risk.risk import DEFAULT_ALPHAS, risk_rows

if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence

    import pandas as pd

__all__ = ["RunSummary", "summary_table", "per_topic_table", "per_topic_frame",
           "risk_measures_of", "natural_topic_order"]


def natural_topic_order(topics: Iterable[str]) -> list[str]:
    """Topics sorted numerically where they are numbers (``"9" < "10"``), as strings otherwise.

    >>> natural_topic_order(["10", "9", "b", "a"])
    ['9', '10', 'a', 'b']
    """
    return sorted(set(topics), key=lambda t: (0, int(t), "") if t.isdigit() else (1, 0, t))


class RunSummary:
    """Runs evaluated and summarised (:func:`summarise`, ``lgb-risk evaluate``): the summary
    table, the per-topic values behind it, and the paper's LaTeX table and figures made from
    them with the command line's defaults.

    Attributes: ``results`` (``{run name: TopicValues}``), ``table`` (column name -> values,
    :func:`summary_table`), ``measures``, ``baseline``, ``alphas``, ``correction``, ``test``,
    ``loss_fraction``. In a notebook the summary shows as an HTML table.
    """

    def __init__(self, results: dict, measures: Sequence[str], *, baseline: str | None = None,
                 alphas: Sequence[float] = DEFAULT_ALPHAS, correction: str | None = None,
                 loss_fraction: float = 0.2, test: str = "t", layout: str = "wide"):
        self.results = results
        self.measures = tuple(measures)
        self.baseline = baseline
        self.alphas = tuple(float(a) for a in alphas)
        self.correction = correction
        self.loss_fraction = loss_fraction
        self.test = test
        self.table = summary_table(results, self.measures, alphas=self.alphas,
                                   baseline=baseline, layout=layout, correction=correction,
                                   loss_fraction=loss_fraction, test=test)

    def __repr__(self) -> str:
        return (f"RunSummary(runs={list(self.results)}, measures={list(self.measures)}, "
                f"baseline={self.baseline!r}, alphas={list(self.alphas)})")

    def frame(self) -> pd.DataFrame:
        """The summary table as a DataFrame."""
        import pandas as pd

        return pd.DataFrame(self.table)

    def _repr_html_(self) -> str:
        """A notebook's view: the means and, against the baseline, URisk and TRisk at the last
        α, a row per run (:meth:`frame` has every column)."""
        frame = self.frame()
        alpha = f"a{self.alphas[-1]:g}" if self.alphas else ""
        shown = [c for c in frame.columns if c in ("run", "topics", *self.measures)
                 or (self.baseline is not None and c.endswith(
                     (f"_urisk_{alpha}", f"_trisk_{alpha}")))]
        return frame[shown].to_html(index=False, float_format=lambda v: f"{v:.4f}",
                                    na_rep="–")

    def per_topic(self, measure: str) -> pd.DataFrame:
        """One measure's values, a row per run and a column per topic."""
        return per_topic_frame(self.results, measure)

    def latex(self, *, span: str = "column", alpha: float | None = None,
              labels: Mapping[str, str] | None = None, decimals: int = 3,
              caption: str | None = None, label: str | None = None,
              level: float = 0.05) -> str:
        """The paper's table, as ``lgb-risk evaluate --format latex`` prints it for the same
        options (:func:`lgb_risk.latex.summary_latex`): a row per run, per measure its mean
        and, against the baseline, TRisk (``span="column"``) or URisk and TRisk
        (``span="page"``) at ``alpha`` (default the last of ``alphas``, as the figures'),
        significant differences marked ▲/▼ after the correction. ``caption`` is LaTeX."""
        from lgb_risk.latex import summary_latex

        alpha = self.alphas[-1] if alpha is None else float(alpha)
        # The means' marks come from the paired test of the differences: TRisk's at α = 0.
        summary = summary_table(self.results, self.measures,
                                alphas=list(dict.fromkeys([0.0, alpha])),
                                baseline=self.baseline, layout="wide",
                                correction=self.correction, loss_fraction=self.loss_fraction,
                                test=self.test)
        return summary_latex(summary, self.measures, alpha=alpha, baseline=self.baseline,
                             correction=self.correction, labels=labels, decimals=decimals,
                             caption=caption, label=label, level=level, test=self.test,
                             span=span)

    def power(self, measure: str | None = None, *, difference: float | None = None,
              power: float = 0.8, level: float = 0.05, confidence: float = 0.95,
              pilot_resamples: int = 2000, simulate: bool = False, draws: int = 200,
              seed: int = 0) -> pd.DataFrame:
        """How many topics each run's comparison with the baseline needs, each answer with
        its ``confidence`` interval (:func:`lgb_risk.power.power_table`, whose parameters
        these are), for ``measure`` (default the first) at this summary's α, corrected for
        the runs compared where the summary is (Bonferroni or Holm, bounded by
        Bonferroni)."""
        from lgb_risk.power import power_table

        scores, baseline = self._against_baseline()
        chosen = self.measures[0] if measure is None else measure
        if chosen not in scores:
            raise ValueError(f"measure {chosen!r} is not among the summary's measures with "
                             f"risk measures: {', '.join(scores)}")
        return power_table(scores[chosen], baseline, self.alphas, difference=difference,
                           power=power, level=level, correction=self.correction,
                           confidence=confidence, pilot_resamples=pilot_resamples,
                           simulate=simulate, draws=draws, seed=seed)

    def _against_baseline(self) -> tuple[dict, str]:
        """The per-topic tables the figures draw, and the baseline they are drawn against."""
        if self.baseline is None:
            raise ValueError("the figures draw the runs against a baseline: summarise with "
                             "baseline=")
        return {m: self.per_topic(m) for m in self.measures if risk_measures_of(m)}, self.baseline

    def figures(self, *, figure_size: str = "page", titles: bool = False) -> dict:
        """The figures of the runs against the baseline as matplotlib Figures,
        ``{file name: Figure}`` (:func:`lgb_risk.plots.run_figures`: per measure the win/loss
        histogram, TRisk and GeoRisk by α, each run's TR/TJ at the last α)."""
        from lgb_risk.plots import run_figures

        return run_figures(*self._against_baseline(), alphas=self.alphas,
                           figure_size=figure_size, correction=self.correction, titles=titles)

    def write_figures(self, directory: str | os.PathLike, *, figure_format: str = "png",
                      figure_size: str = "page", titles: bool = False) -> list:
        """:meth:`figures` written into ``directory`` as ``NAME.FORMAT``
        (:func:`lgb_risk.plots.write_run_figures`); returns the paths."""
        from lgb_risk.plots import write_run_figures

        return write_run_figures(*self._against_baseline(), directory, alphas=self.alphas,
                                 figure_format=figure_format, figure_size=figure_size,
                                 correction=self.correction, titles=titles)


def per_topic_table(results: dict, measures: Sequence[str]) -> dict:
    """One row per run and topic: columns ``run``, ``topic`` and one per measure."""
    columns: dict[str, Any] = {"run": [n for n, r in results.items() for _ in r.topics],
               "topic": [t for r in results.values() for t in r.topics]}
    for m in measures:
        columns[m] = np.concatenate([r.values[m] for r in results.values()])
    return columns


def per_topic_frame(results: dict, measure: str) -> pd.DataFrame:
    """One measure's values of every run (rows) on every topic (columns, natural order), from
    :func:`evaluate_files`' results; every run must cover the same topics."""
    import pandas as pd

    topics = natural_topic_order(set().union(*(r.topics for r in results.values())))
    return pd.DataFrame(_per_topic_matrix(results, measure), index=list(results),
                        columns=topics)


def _per_topic_matrix(results: dict, measure: str) -> np.ndarray:
    """The runs-by-topics values of one measure (topics in natural order); every run must cover the
    same topics."""
    topic_sets = {name: set(r.topics) for name, r in results.items()}
    union = set().union(*topic_sets.values())
    for name, topics in topic_sets.items():
        missing = union - topics
        if missing:
            shown = ", ".join(natural_topic_order(missing)[:10])
            raise ValueError(
                f"run {name!r} has no ranking for topic(s) {shown} that other runs have; risk "
                "measures compare runs topic by topic, so every run must cover the same topics "
                "(missing_topics='zero' scores a missing topic 0)"
            )
    order = natural_topic_order(union)
    rows = []
    for r in results.values():
        position = {t: i for i, t in enumerate(r.topics)}
        rows.append(r.values[measure][[position[t] for t in order]])
    return np.vstack(rows)


def risk_measures_of(measure: str) -> bool:
    """Whether the risk measures apply: ZRisk and GeoRisk need values >= 0."""
    low = registry.parse(measure).measure.bounds[0]
    return low is not None and low >= 0


def summary_table(results: dict, measures: Sequence[str], *,
                  alphas: Sequence[float] = DEFAULT_ALPHAS, baseline: str | None = None,
                  layout: str = "wide", correction: str | None = None,
                  loss_fraction: float = 0.2, test: str = "t") -> dict:
    """Means and, with two runs or more, every risk measure of every run for every measure
    that has them (:func:`risk_measures_of`) and α, against the population of runs and, with a
    ``baseline`` run, against it (:func:`lgb_risk.risk.risk_rows`).

    ``layout="wide"``: one row per run, columns ``MEASURE_RISK_aALPHA``; ``"long"``: one row
    per run, measure and α. Returns a mapping of column name to values. ``correction``
    corrects the TRisk p-values of the runs compared to the baseline, per measure and α, as one
    family (:func:`lgb_risk.significance.corrected_p_values`; column ``trisk_p_METHOD``).
    With a baseline, each run's wins, losses, ties and losses of more than ``loss_fraction``
    against it are counted per measure (:func:`lgb_risk.risk.risk_rows`). ``test`` is the test
    whose p-values ``trisk_p`` holds (:data:`lgb_risk.risk.TESTS`: ``"t"``, TRisk's t-test, or
    ``"randomisation"``).
    """
    check_choice(layout, "layout", ("wide", "long"))
    names = list(results)
    counts = {"topics": [len(results[n].topics) for n in names],
              "missing": [len(results[n].missing) for n in names]}
    means = {m: [results[n].values[m].mean() for n in names] for m in measures}
    risks = {m: risk_rows(_per_topic_matrix(results, m), names, alphas, baseline, correction,
                          loss_fraction, test)
             for m in measures if len(names) > 1 and risk_measures_of(m)}
    if layout == "long":
        rows = []
        for m, values in means.items():
            for i, name in enumerate(names):
                base = {"run": name, "measure": m, "topics": counts["topics"][i],
                        "missing": counts["missing"][i], "mean": values[i]}
                rows += [{**base, **{k: v for k, v in row.items() if k not in ("system", "mean")},
                          "alpha": f"{row['alpha']:g}"}
                         for row in risks.get(m, []) if row["system"] == name] or [base]
        fields = list(dict.fromkeys(field for row in rows for field in row))
        return {f: [row.get(f, np.nan) for row in rows] for f in fields}
    columns = {"run": names, **counts, **means}
    for m, rows in risks.items():
        for alpha in dict.fromkeys(row["alpha"] for row in rows):
            block = {row["system"]: row for row in rows if row["alpha"] == alpha}
            for field in rows[0]:
                if field not in ("system", "alpha", "mean"):
                    columns[f"{m}_{field}_a{alpha:g}"] = [block[n][field] for n in names]
    return columns
