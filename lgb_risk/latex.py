"""Result tables as LaTeX, for a paper: booktabs rules, the best value of each column in bold,
TRisk values marked where their test is significant, and a legend naming the test and the
correction.

The columns are those of ``lgb-risk evaluate`` and ``lgb-risk risk`` (and of
:func:`lgb_risk.trec.summary_table`, :func:`lgb_risk.risk.risk_table`): a column's meaning is
read from its name, in the long layout (``zrisk``, ``trisk_p``, ``wins``) or the wide one
(``ndcg@20_zrisk_a5``). Which direction is best is declared once, in :data:`BETTER`.

>>> text = latex_table({"run": ["a", "b"], "mean": [0.41, 0.47]})
>>> "\\\\textbf{0.4700}" in text and "\\\\toprule" in text
True
"""

from __future__ import annotations

import math
import numbers
import re
from collections.abc import Mapping, Sequence
from typing import Any

from lgb_risk.risk import TESTS
from lgb_risk.significance import CORRECTIONS

__all__ = ["latex_table", "summary_latex", "escape", "BETTER"]

#: The direction in which a column's values are better (columns absent are never bolded:
#: counts of topics, p-values, ties). A measure's own column (``ndcg@20``) is higher-better.
BETTER = {"mean": "higher", "zrisk": "higher", "georisk": "higher", "tstar_risk": "higher",
          "urisk": "higher", "trisk": "higher", "zrisk_baseline": "higher",
          "georisk_baseline": "higher", "wins": "higher", "losses": "lower"}

_WIDE = re.compile(r"^(?P<measure>.+?)_(?P<field>zrisk_baseline|georisk_baseline|tstar_risk|"
                   r"zrisk|georisk|urisk|trisk_p(?:_[a-z]+)?|trisk|wins|losses|ties|"
                   r"loss_gt_[0-9.]+)_a(?P<alpha>[0-9.]+)$")
_SPECIAL = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#",
            "_": r"\_", "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}",
            "^": r"\textasciicircum{}"}


def escape(text: str) -> str:
    """``text`` with LaTeX's special characters escaped."""
    return "".join(_SPECIAL.get(c, c) for c in str(text))


def _field(column: str) -> tuple[str, str | None, str | None]:
    """(field, measure, alpha) of a column name: ``ndcg@20_trisk_a5`` -> (trisk, ndcg@20, 5)."""
    match = _WIDE.match(column)
    if match:
        return match["field"], match["measure"], match["alpha"]
    return column, None, None


def _direction(column: str, measures: set) -> str | None:
    field, _, _ = _field(column)
    if field.startswith("loss_gt_"):
        return "lower"
    if field in measures:
        return "higher"
    return BETTER.get(field)


def _number(value: Any) -> float | None:
    if value is None or isinstance(value, (str, bool)):
        return None
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return None if math.isnan(number) else number


def latex_table(table: Mapping[str, Sequence[Any]], *, decimals: int = 4, level: float = 0.05,
                caption: str | None = None, headers: Mapping[str, str] | None = None,
                better: Mapping[str, str] | None = None,
                marks: Mapping[str, tuple[Sequence[Any], str]] | None = None,
                digits: Mapping[str, int] | None = None, label: str | None = None,
                header_groups: Sequence[tuple[str, int]] | None = None,
                test: str = "t") -> str:
    """A ``table`` environment with a booktabs ``tabular`` of ``table`` (column name -> values).

    Numbers get ``decimals`` digits (counts none); the best value of each column whose
    direction :data:`BETTER` declares is in bold, within each measure and α of the long layout
    (all rows of the wide one); a TRisk value whose p-value (the corrected one, where the table
    has a ``trisk_p_METHOD`` column) is below ``level`` gets a dagger, explained in the caption
    with the test and the correction. Missing values print as ``--``. The output needs
    ``\\usepackage{booktabs}``.

    ``headers`` prints a column under another name (LaTeX, as given); ``better`` gives a
    column's direction (``"higher"``/``"lower"``) where its name does not; ``marks`` maps a
    column to (the p-values of its rows, the test and correction in words): a value whose p-value
    is below ``level`` gets that column's mark (‡, §, ¶ in turn), which the caption explains;
    ``digits`` sets a column's number of decimals. ``header_groups`` adds a row above the
    headers, (text, number of columns) from the left, ruled under each group. The caption comes
    above the table (ACM's and most proceedings' style), followed by ``label``. Negative numbers
    print with a minus sign (``$-$``), and marks take no width (``\\rlap``), so that
    right-aligned columns of equal decimals align on the decimal point. ``test`` names the test
    of the TRisk p-values in the legend (:data:`lgb_risk.risk.TESTS`).
    """
    names = list(table)
    lengths = {name: len(table[name]) for name in names}
    if len(set(lengths.values())) > 1:
        raise ValueError("every column of a LaTeX table needs one value per row; got "
                         + ", ".join(f"{name!r}: {n}" for name, n in lengths.items()))
    if not 0.0 < level < 1.0:
        raise ValueError(f"level must be a significance level in (0, 1), got {level!r}")
    for name, places in [("decimals", decimals), *((f"digits[{column!r}]", value)
                                                    for column, value in (digits or {}).items())]:
        _check_places(places, name)
    n_rows = next(iter(lengths.values()), 0)
    for name, (p_values, _) in (marks or {}).items():
        if name not in lengths:
            raise ValueError(f"marks names column {name!r}, which the table does not have "
                             f"(it has {', '.join(map(repr, names))})")
        if len(p_values) != n_rows:
            raise ValueError(f"marks[{name!r}] has {len(p_values)} p-values for {n_rows} rows; "
                             "give one per row (None where there is no test)")
        _check_p_values(p_values, f"marks[{name!r}]")
    for name in names:
        if _field(name)[0].startswith("trisk_p"):
            _check_p_values(table[name], f"column {name!r}")
    rows = list(zip(*(list(table[name]) for name in names)))
    measures = {str(value) for value in table.get("measure", [])}
    measures |= {name for name in names if _field(name)[1] is None and "@" in name}
    group_by = [i for i, name in enumerate(names) if name in ("measure", "alpha")]
    groups: dict = {}
    for r, row in enumerate(rows):
        groups.setdefault(tuple(row[i] for i in group_by), []).append(r)
    directions = {name: (better or {}).get(name) or _direction(name, measures) for name in names}
    bold: set = set()
    for c, name in enumerate(names):
        direction = directions[name]
        if direction is None:
            continue
        for members in groups.values():
            numbers = [(_number(rows[r][c]), r) for r in members]
            values = [(v, r) for v, r in numbers if v is not None]
            if values:
                best = (max if direction == "higher" else min)(v for v, _ in values)
                bold |= {(r, c) for v, r in values if v == best}
    daggers, correction = _significant_trisk(names, rows, level)
    marked: dict = {cell: [r"\dagger"] for cell in daggers}  # (row, column) -> its marks
    explained = []
    symbols: dict = {}  # one mark per test: columns tested alike share it
    for name, (p_values, meaning) in (marks or {}).items():
        if meaning not in symbols:
            if len(symbols) == len(_MARKS):
                raise ValueError(f"marks name more than {len(_MARKS)} different tests")
            symbols[meaning] = _MARKS[len(symbols)]
            explained.append(rf"${symbols[meaning]}$: {meaning}, $p < {level:g}$.")
        c = names.index(name)
        for r, p in enumerate(p_values):
            if _number(p) is not None and float(p) < level:
                marked.setdefault((r, c), []).append(symbols[meaning])

    counts = [_field(name)[0] in ("wins", "losses", "ties", "topics", "missing")
              or _field(name)[0].startswith("loss_gt_") for name in names]

    def cell(r: int, c: int) -> str:
        value = rows[r][c]
        number = _number(value)
        if number is None:
            text = escape(value) if isinstance(value, str) else "--"
        elif names[c] in (digits or {}):
            text = f"{number:.{(digits or {})[names[c]]}f}"
        elif counts[c] or isinstance(value, int):
            text = f"{int(number)}"
        else:
            text = f"{number:.{decimals}f}"
        if number is not None and text.startswith("-"):
            text = "$-$" + text[1:]
        if (r, c) in bold:
            text = rf"\textbf{{{text}}}"
        symbols = marked.get((r, c), ())
        return text + (r"\rlap{$^{" + "".join(symbols) + "}$}" if symbols else "")

    numeric = [any(_number(row[c]) is not None for row in rows) for c in range(len(names))]
    spec = "".join("r" if is_number else "l" for is_number in numeric)
    heading = [r"\toprule"]
    if header_groups:
        if sum(span for _, span in header_groups) != len(names):
            raise ValueError(f"header_groups span {sum(span for _, span in header_groups)} "
                             f"columns; the table has {len(names)}")
        cells, rules, start = [], [], 1
        for text, span in header_groups:
            cells.append(text if span == 1 else rf"\multicolumn{{{span}}}{{c}}{{{text}}}")
            if text:
                rules.append(rf"\cmidrule(lr){{{start}-{start + span - 1}}}")
            start += span
        heading += [" & ".join(cells) + r" \\", " ".join(rules)]
    heading += [" & ".join((headers or {}).get(name) or escape(name) for name in names)
                + r" \\", r"\midrule"]
    body = [" & ".join(cell(r, c) for c in range(len(names))) + r" \\"
            for r in range(len(rows))]
    legend = [caption] if caption else []
    if any(directions.values()):
        legend.append("Bold: the best value of each column" + (" for each measure and $\\alpha$"
                                                               if group_by else "") + ".")
    if daggers:
        how = (f", {CORRECTIONS.get(correction, correction)}-corrected over the runs compared "
               "to the baseline" if correction else ", uncorrected")
        legend.append(rf"$^\dagger$: {TESTS[test]} against the baseline, "
                      rf"$p < {level:g}${how}.")
    legend += explained
    lines = [r"\begin{table}", r"\centering"]
    if legend:
        lines.append(r"\caption{" + " ".join(legend) + "}")
    if label:
        lines.append(rf"\label{{{label}}}")
    lines += [rf"\begin{{tabular}}{{{spec}}}", *heading, *body, r"\bottomrule",
              r"\end{tabular}", r"\end{table}"]
    return "\n".join(lines) + "\n"


def _check_places(places: Any, name: str) -> None:
    """A number of decimals: a whole number from 0 to 17 (17 keeps every double)."""
    if isinstance(places, bool) or not isinstance(places, numbers.Integral) or not (
            0 <= int(places) <= 17):
        raise ValueError(f"{name} must be a whole number of decimals from 0 to 17, got "
                         f"{places!r}")


def _check_p_values(p_values: Sequence[Any], name: str) -> None:
    """p-values are numbers in [0, 1], or None/NaN where there is no test: a string or a value
    outside [0, 1] would silently get no mark."""
    for row, p in enumerate(p_values):
        if p is None or (isinstance(p, numbers.Real) and not isinstance(p, bool)
                         and math.isnan(p)):
            continue  # no test on this row
        number = _number(p)
        if number is None or not 0.0 <= number <= 1.0:
            raise ValueError(f"{name}: the p-value of row {row} is {p!r}; expected a number in "
                             "[0, 1], or None or NaN where there is no test")


def summary_latex(summary: Mapping[str, Sequence[Any]], measures: Sequence[str], *,
                  alpha: float, baseline: str | None = None, correction: str | None = None,
                  labels: Mapping[str, str] | None = None, decimals: int = 3,
                  caption: str | None = None, label: str | None = None,
                  level: float = 0.05, test: str = "t") -> str:
    """The table a paper shows from a wide summary (:func:`lgb_risk.trec.summary_table`,
    ``lgb-risk evaluate``): a row per run; per measure its mean and, against ``baseline``,
    URisk and TRisk at ``alpha``, under a header naming the measure. With a baseline, a mean
    whose difference from the baseline's is significant (the paired t-test, which is TRisk's at
    α = 0: the summary must hold α = 0) is marked ‡, and a significant TRisk †, both after
    ``correction`` when the summary holds its corrected p-values; ``test`` names the test the
    summary's p-values come from (:data:`lgb_risk.risk.TESTS`). ``labels`` gives a measure's
    display name (default the registry's, ``NDCG@20``).

    >>> none = float("nan")  # the baseline's own row
    >>> summary = {"run": ["bm25", "mine"], "topics": [50, 50], "ndcg@20": [0.20, 0.25],
    ...            "ndcg@20_urisk_a5": [none, -0.01], "ndcg@20_trisk_a5": [none, -1.2],
    ...            "ndcg@20_trisk_p_a5": [none, 0.23], "ndcg@20_trisk_p_a0": [none, 0.01]}
    >>> text = summary_latex(summary, ["ndcg@20"], alpha=5, baseline="bm25")
    >>> print(next(line for line in text.splitlines() if line.startswith("mine")))
    mine & \\textbf{0.250}\\rlap{$^{\\ddagger}$} & \\textbf{$-$0.010} & \\textbf{$-$1.20} \\\\
    """
    from lgb_risk import measures as registry

    names = list(summary["run"])
    alpha_text = f"{alpha:g}"
    table: dict = {"run": names}
    headers = {"run": "Run"}
    groups: list = [("", 1)]
    marks: dict = {}
    suffix = f"_{correction}" if correction else ""
    for m in measures:
        shown = (labels or {}).get(m) or registry.parse(m).label
        table[m] = list(summary[m])
        headers[m] = "Mean"
        columns = 1
        if baseline is not None and f"{m}_urisk_a{alpha_text}" in summary:
            for field, head in (("urisk", "URisk"), ("trisk", "TRisk")):
                table[f"{m}_{field}_a{alpha_text}"] = list(summary[f"{m}_{field}_a{alpha_text}"])
                headers[f"{m}_{field}_a{alpha_text}"] = head
                columns += 1
            corrected = (f", {CORRECTIONS.get(correction, correction)}-corrected over the "
                         "runs compared to the baseline" if correction else "")
            p_means = summary.get(f"{m}_trisk_p{suffix}_a0")
            if p_means is not None:
                means_test = ("paired $t$-test" if test == "t" else
                              "paired randomisation test (9,999 sign flips, seeded)")
                marks[m] = (list(p_means), f"{means_test} of the difference from the "
                            f"baseline's mean{corrected}")
            p_trisk = summary.get(f"{m}_trisk_p{suffix}_a{alpha_text}")
            if p_trisk is not None:
                marks[f"{m}_trisk_a{alpha_text}"] = (
                    list(p_trisk), f"{TESTS[test]} against the baseline{corrected}")
        groups.append((escape(shown), columns))
    measures_text = ", ".join((labels or {}).get(m) or registry.parse(m).label for m in measures)
    compared = any(name.endswith(f"_urisk_a{alpha_text}") for name in table)
    if caption is None:
        caption = f"Mean {measures_text} of each run" + (
            f" and, against {escape(baseline)}, URisk and TRisk at $\\alpha = {alpha_text}$"
            if baseline is not None and compared else "") + "."
    digits = {name: min(decimals, 2) for name in table if _field(name)[0] == "trisk"}
    return latex_table(table, decimals=decimals, level=level, caption=caption, headers=headers,
                       marks=marks, label=label, header_groups=groups, digits=digits)


#: The marks of ``latex_table(marks=...)``, in the order the columns are given.
_MARKS = (r"\ddagger", r"\S", r"\P", r"\|")


def _significant_trisk(names: list, rows: list, level: float) -> tuple[set, str | None]:
    """The (row, column) cells of TRisk whose test is significant, and the correction used."""
    index = {name: c for c, name in enumerate(names)}
    cells: set = set()
    correction = None
    for c, name in enumerate(names):
        field, measure, alpha = _field(name)
        if field != "trisk":
            continue
        prefix, suffix = (f"{measure}_", f"_a{alpha}") if measure is not None else ("", "")
        corrected = [n for n in names if _field(n)[0].startswith("trisk_p_")
                     and n.startswith(prefix) and n.endswith(suffix)]
        p_column = corrected[0] if corrected else f"{prefix}trisk_p{suffix}"
        if corrected:
            correction = _field(p_column)[0].removeprefix("trisk_p_")
        if p_column not in index:
            continue
        for r, row in enumerate(rows):
            p = _number(row[index[p_column]])
            if p is not None and p < level:
                cells.add((r, c))
    return cells, correction
