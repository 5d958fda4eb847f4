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
import re
from collections.abc import Mapping, Sequence
from typing import Any

from lgb_risk.significance import CORRECTIONS

__all__ = ["latex_table", "escape", "BETTER"]

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
                digits: Mapping[str, int] | None = None) -> str:
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
    ``digits`` sets a column's number of decimals.
    """
    names = list(table)
    lengths = {name: len(table[name]) for name in names}
    if len(set(lengths.values())) > 1:
        raise ValueError("every column of a LaTeX table needs one value per row; got "
                         + ", ".join(f"{name!r}: {n}" for name, n in lengths.items()))
    if not 0.0 < level < 1.0:
        raise ValueError(f"level must be a significance level in (0, 1), got {level!r}")
    n_rows = next(iter(lengths.values()), 0)
    for name, (p_values, _) in (marks or {}).items():
        if name not in lengths:
            raise ValueError(f"marks names column {name!r}, which the table does not have "
                             f"(it has {', '.join(map(repr, names))})")
        if len(p_values) != n_rows:
            raise ValueError(f"marks[{name!r}] has {len(p_values)} p-values for {n_rows} rows; "
                             "give one per row (None where there is no test)")
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
    for symbol, (name, (p_values, meaning)) in zip(_MARKS, (marks or {}).items()):
        c = names.index(name)
        for r, p in enumerate(p_values):
            if _number(p) is not None and float(p) < level:
                marked.setdefault((r, c), []).append(symbol)
        explained.append(rf"${symbol}$: {meaning}, $p < {level:g}$.")

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
        if (r, c) in bold:
            text = rf"\textbf{{{text}}}"
        return text + "".join(f"$^{symbol}$" for symbol in marked.get((r, c), ()))

    numeric = [any(_number(row[c]) is not None for row in rows) for c in range(len(names))]
    spec = "".join("r" if is_number else "l" for is_number in numeric)
    lines = [r"\begin{table}", r"\centering", rf"\begin{{tabular}}{{{spec}}}", r"\toprule",
             " & ".join((headers or {}).get(name) or escape(name) for name in names) + r" \\",
             r"\midrule"]
    lines += [" & ".join(cell(r, c) for c in range(len(names))) + r" \\"
              for r in range(len(rows))]
    lines += [r"\bottomrule", r"\end{tabular}"]
    legend = [caption] if caption else []
    if any(directions.values()):
        legend.append("Bold: the best value of each column" + (" for each measure and $\\alpha$"
                                                               if group_by else "") + ".")
    if daggers:
        how = (f", {CORRECTIONS.get(correction, correction)}-corrected over the runs compared "
               "to the baseline" if correction else ", uncorrected")
        legend.append(rf"$^\dagger$: TRisk's two-sided $t$-test of the risk-weighted "
                      rf"differences $x_q$ against the baseline, $p < {level:g}${how}.")
    legend += explained
    if legend:
        lines.append(r"\caption{" + " ".join(legend) + "}")
    lines.append(r"\end{table}")
    return "\n".join(lines) + "\n"


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
