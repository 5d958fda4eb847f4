"""Tables of several evaluated runs (:mod:`lgb_risk.trec`'s results, ``{run name:
TopicValues}``): the per-topic table and frame, the summary of means and risk measures, and
:class:`RunSummary`, which holds them with the paper's LaTeX table and figures. Its names are
also :mod:`lgb_risk.trec`'s, which evaluates the runs."""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import numpy as np

from lgb_risk import measures as registry
from lgb_risk._inputs.validation import check_alpha, check_choice
from lgb_risk.risk import DEFAULT_ALPHAS, risk_deltas, risk_rows
from lgb_risk.significance import corrected_p_values

if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence

    import pandas as pd

__all__ = ["RunSummary", "summary_table", "per_topic_table", "per_topic_frame",
           "partial_run_notes", "risk_measures_of", "natural_topic_order"]


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
                 loss_fraction: float = 0.2, test: str = "t", layout: str = "wide",
                 partial_runs: str = "refuse"):
        self.results = results
        self.measures = tuple(measures)
        self.baseline = baseline
        self.alphas = tuple(float(a) for a in alphas)
        self.correction = correction
        self.loss_fraction = loss_fraction
        self.test = test
        self.partial_runs = partial_runs
        self.table = summary_table(results, self.measures, alphas=self.alphas,
                                   baseline=baseline, layout=layout, correction=correction,
                                   loss_fraction=loss_fraction, test=test,
                                   partial_runs=partial_runs)
        #: What the table did with runs that lack topics (gdeval.pl's rule), one line each.
        self.notes = partial_run_notes(results, baseline) if self._partial() else []

    def _partial(self) -> bool:
        return (self.partial_runs == "gdeval" and len(self.results) > 1
                and len({frozenset(r.topics) for r in self.results.values()}) > 1)

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

    def per_topic_risk(self, measure: str, alpha: float | None = None) -> pd.DataFrame:
        """Each topic's risk-weighted difference x_q to the baseline at ``alpha`` (default
        the last of ``alphas``), a row per run but the baseline and a column per topic: the
        rows gdeval.pl prints in its risk mode (``-baseline``, ``-riskAlpha``), whose mean
        over a run's topics is its URisk. A topic a run lacks is NaN; one the baseline lacks
        is scored against 0 (gdeval.pl's rule)."""
        import pandas as pd

        alpha = self.alphas[-1] if alpha is None else float(alpha)
        if self.baseline is None:
            raise ValueError("x_q is a run's difference to the baseline: summarise with "
                             "baseline=")
        columns = per_topic_table(self.results, [measure], baseline=self.baseline,
                                  alphas=[alpha])
        frame = pd.DataFrame(columns)
        frame = frame[frame["run"] != self.baseline]
        table = frame.pivot(index="run", columns="topic",
                            values=f"{measure}_urisk_a{alpha:g}")
        order = natural_topic_order(set().union(*(r.topics for r in self.results.values())))
        return table.reindex(index=[n for n in self.results if n != self.baseline],
                             columns=order)

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


def per_topic_table(results: dict, measures: Sequence[str], *, baseline: str | None = None,
                    alphas: Sequence[float] = ()) -> dict:
    """One row per run and topic: columns ``run``, ``topic`` and one per measure; with a
    ``baseline`` and ``alphas``, also each topic's risk-weighted difference x_q to the
    baseline ([TR] Eq. 3, whose mean over the run's topics is URisk), in columns named as the
    summary's URisk (``ndcg@20_urisk_a5``): the rows gdeval.pl prints in its risk mode. The
    baseline's own rows have none (NaN); a topic the baseline lacks is scored against 0, as
    gdeval.pl does.

    >>> from lgb_risk.trec import TopicValues
    >>> results = {"bm25": TopicValues(["1", "2"], {"p@1": np.array([1.0, 0.0])}, [], []),
    ...            "mine": TopicValues(["1", "2"], {"p@1": np.array([0.0, 1.0])}, [], [])}
    >>> per_topic_table(results, ["p@1"], baseline="bm25", alphas=[5])["p@1_urisk_a5"]
    [nan, nan, -6.0, 1.0]
    """
    columns: dict[str, Any] = {"run": [n for n, r in results.items() for _ in r.topics],
               "topic": [t for r in results.values() for t in r.topics]}
    for m in measures:
        columns[m] = np.concatenate([r.values[m] for r in results.values()])
    if baseline is None or not alphas:
        return columns
    if baseline not in results:
        raise ValueError(f"baseline {baseline!r} is not among the runs {', '.join(results)}")
    for m in measures:
        if not risk_measures_of(m):
            continue
        for alpha in alphas:
            column = []
            for name, result in results.items():
                if name == baseline:
                    column += [np.nan] * len(result.topics)
                    continue
                base = _baseline_on(results[baseline], result.topics, m)
                column += risk_deltas(result.values[m], base, alpha).tolist()
            columns[f"{m}_urisk_a{check_alpha(alpha):g}"] = column
    return columns


def _baseline_on(baseline, topics: Sequence[str], measure: str) -> np.ndarray:
    """The baseline's values of ``measure`` on ``topics``, 0 where it has none (gdeval.pl's
    rule for a topic the baseline run lacks)."""
    own = dict(zip(baseline.topics, baseline.values[measure].tolist()))
    return np.array([own.get(t, 0.0) for t in topics], dtype=np.float64)


def partial_run_notes(results: dict, baseline: str | None) -> list[str]:
    """What gdeval.pl's rule does with runs that lack topics, one sentence per run."""
    union = set().union(*(r.topics for r in results.values()))
    notes = []
    for name, result in results.items():
        lacking = natural_topic_order(union - set(result.topics))
        if not lacking:
            continue
        shown = ", ".join(lacking[:10]) + (", ..." if len(lacking) > 10 else "")
        if name == baseline:
            notes.append(f"baseline {name!r} has no ranking for topic(s) {shown} that runs "
                         "have: each run's x_q there is taken against 0, as gdeval.pl's "
                         "risk mode does")
        else:
            notes.append(f"run {name!r} has no ranking for topic(s) {shown} that other runs "
                         f"have: its risk measures against the baseline are over its own "
                         f"{len(result.topics)} topics, as gdeval.pl's risk mode (without -c) "
                         "does")
    if notes:
        notes.append("ZRisk, GeoRisk and T*Risk compare every run on every topic: left empty "
                     "where runs lack topics (--missing-topics zero scores a missing topic 0, "
                     "gdeval.pl's -c)")
    return notes


def per_topic_frame(results: dict, measure: str) -> pd.DataFrame:
    """One measure's values of every run (rows) on every topic (columns, natural order), from
    :func:`evaluate_files`' results; every run must cover the same topics."""
    import pandas as pd

    topics = natural_topic_order(set().union(*(r.topics for r in results.values())))
    return pd.DataFrame(_per_topic_matrix(results, measure), index=list(results),
                        columns=topics)


#: The risk measures that compare every run on every topic: undefined for runs that lack some.
_POPULATION_COLUMNS = ("zrisk", "georisk", "tstar_risk", "zrisk_baseline", "georisk_baseline")


def _own_topics_rows(results: dict, measure: str, alphas, baseline, correction, loss_fraction,
                     test) -> list[dict]:
    """:func:`lgb_risk.risk.risk_rows` for runs that lack topics, by gdeval.pl's rule: each
    run against the baseline over its own topics, the baseline 0 where it lacks one; the
    population's measures NaN; the TRisk p-values corrected over the runs as one family."""
    rows = []
    for alpha in alphas:
        block = []
        for name, result in results.items():
            base = _baseline_on(results[baseline], result.topics, measure)
            pair = np.vstack([result.values[measure], base])
            row = risk_rows(pair, [name, "\0baseline"], [alpha], "\0baseline", None,
                            loss_fraction, test)[0]
            if name == baseline:
                row.update({k: np.nan for k in ("urisk", "trisk", "trisk_p")})
                row.update({k: None for k in row if k in ("wins", "losses", "ties")
                            or k.startswith("loss_gt_")})
            row.update({k: np.nan for k in _POPULATION_COLUMNS})
            block.append(row)
        if correction is not None:
            corrected = corrected_p_values(np.array([r["trisk_p"] for r in block]), correction)
            for row, p in zip(block, corrected.tolist()):
                row[f"trisk_p_{correction}"] = p
            for row in block:  # the column where risk_rows puts it: after georisk_baseline
                counted = {k: row.pop(k) for k in list(row) if k in ("wins", "losses", "ties")
                           or k.startswith("loss_gt_")}
                row.update(counted)
        rows += block
    return rows


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
                  loss_fraction: float = 0.2, test: str = "t",
                  partial_runs: str = "refuse") -> dict:
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

    Runs that lack topics others have are refused (``partial_runs="refuse"``), or, with
    ``"gdeval"`` and a baseline, compared with it as gdeval.pl's risk mode does without ``-c``:
    each run over its own topics, the baseline's value 0 on a topic it lacks
    (:func:`partial_run_notes` says so); the measures that compare every run on every topic
    (ZRisk, GeoRisk, T*Risk) are left NaN there.
    """
    check_choice(layout, "layout", ("wide", "long"))
    check_choice(partial_runs, "partial_runs", ("refuse", "gdeval"))
    names = list(results)
    counts = {"topics": [len(results[n].topics) for n in names],
              "missing": [len(results[n].missing) for n in names]}
    means = {m: [results[n].values[m].mean() for n in names] for m in measures}
    partial = (partial_runs == "gdeval" and baseline is not None and len(names) > 1
               and len({frozenset(r.topics) for r in results.values()}) > 1)
    rows_of = _own_topics_rows if partial else (
        lambda results, m, *rest: risk_rows(_per_topic_matrix(results, m), names, *rest))
    risks = {m: rows_of(results, m, alphas, baseline, correction, loss_fraction, test)
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
