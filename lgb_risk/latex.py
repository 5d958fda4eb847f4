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
from dataclasses import dataclass
from typing import Any

from lgb_risk._inputs.validation import check_choice
from lgb_risk.risk import TESTS
from lgb_risk.significance import CORRECTIONS

__all__ = ["latex_table", "summary_latex", "escape", "plain_text", "measures_named",
           "column_header", "BETTER", "estimated_width"]

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


def plain_text(text: Any, name: str) -> str:
    """A string a user gives for a table (a header, a measure's name, a caption given as plain
    text), checked once for every writer: non-empty text, returned with LaTeX's special
    characters escaped, so that ``50%_x`` prints as written and no character ends the table's
    LaTeX early.

    >>> print(plain_text("50%_x", "header"))
    50\\%\\_x
    """
    if not isinstance(text, str) or not text.strip():
        raise ValueError(f"{name} must be non-empty text, got {text!r}")
    return escape(text)


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


#: A column's header by its field (the long layout's names; the wide layout's
#: ``MEASURE_FIELD_aALPHA`` adds the measure and α): what a reader of the paper sees.
HEADERS = {"run": "Run", "system": "Run", "measure": "Measure", "alpha": r"$\alpha$",
           "topics": "Topics", "missing": "Missing", "mean": "Mean", "zrisk": "ZRisk",
           "georisk": "GeoRisk", "tstar_risk": "T*Risk", "urisk": "URisk", "trisk": "TRisk",
           "trisk_se": "SE", "trisk_p": "$p$", "zrisk_baseline": "ZRisk (base)",
           "georisk_baseline": "GeoRisk (base)", "wins": "Wins", "losses": "Losses",
           "ties": "Ties"}


def column_header(name: str) -> str:
    r"""The header a column is printed under, in LaTeX: ``trisk_p_holm`` is ``$p$ (Holm)``,
    ``ndcg@20_trisk_a5`` is ``NDCG@20 TRisk ($\alpha$=5)``, ``loss_gt_20`` is
    ``Losses $>$20\%``; a measure's own column its label (``NDCG@20``).

    >>> column_header("trisk_p_holm"), column_header("ndcg@20_urisk_a5")
    ('$p$ (Holm)', 'NDCG@20 URisk ($\\alpha$=5)')
    """
    from lgb_risk import measures as registry

    field, measure, alpha = _field(name)
    if field.startswith("trisk_p_"):
        method = field.removeprefix("trisk_p_")
        text = f"$p$ ({CORRECTIONS.get(method, method).split('-')[0]})"
    elif field.startswith("loss_gt_"):
        text = f"Losses $>${field.removeprefix('loss_gt_')}\\%"
    elif field in HEADERS:
        text = HEADERS[field]
    else:
        try:
            text = escape(registry.parse(field).label)
        except ValueError:
            text = escape(field)
    if measure is None:
        return text
    try:
        shown = registry.parse(measure).label
    except ValueError:
        shown = measure
    return f"{escape(shown)} {text} ($\\alpha$={alpha})"


#: Widths of Times-Roman's characters in thousandths of an em (Adobe's font metrics), to
#: estimate a table's printed width in ACM sigconf's 9-pt Times; another character counts as
#: a capital M would (an over-estimate).
_TIMES_WIDTHS = {
    **dict(zip("abcdefghijklmnopqrstuvwxyz", (444, 500, 444, 500, 444, 333, 500, 500, 278, 278,
                                              500, 278, 778, 500, 500, 500, 500, 333, 389, 278,
                                              500, 500, 722, 500, 500, 444))),
    **dict(zip("ABCDEFGHIJKLMNOPQRSTUVWXYZ", (722, 667, 667, 722, 611, 556, 722, 722, 333, 389,
                                              722, 611, 889, 722, 722, 556, 722, 667, 556, 611,
                                              722, 722, 944, 722, 722, 611))),
    **dict.fromkeys("0123456789", 500), " ": 250, ".": 250, ",": 250, ":": 278, ";": 278,
    "-": 333, "–": 500, "_": 360, "@": 921, "(": 333, ")": 333, "[": 333, "]": 333, "*": 500,
    "=": 564, ">": 564, "<": 564, "%": 833, "/": 278, "'": 333, "+": 564, "&": 778, "#": 500,
    "−": 564, "α": 520, "$": 0,
}
_TABLE_FONT_PT = 9.0
#: The space either side of a column; LaTeX's default is 6 pt, which a paper's tables often
#: narrow so that they take one column.
_TABCOLSEP_PT = 4.0
#: The character widths miss math spacing and bold text, so the sum can fall short of the width
#: pdflatex prints (BENCHMARKS.md): a table is placed in one column when its estimate, this much
#: larger, fits; a test holds it at or above pdflatex's measure.
_ESTIMATE_MARGIN = 1.02
#: ACM sigconf: a column is 241 pt wide, the text (both columns) 506 pt.
WIDTHS_PT = {"column": 241.0, "page": 506.0}


def _text_width(latex: str) -> float:
    """The estimated printed width (pt) of a cell or header of this module's LaTeX."""
    text = re.sub(r"\\rlap\{\$.*?\$\}", "", latex)  # marks take no width
    text = text.replace("$-$", "−").replace(r"\alpha", "α").replace("--", "–")
    text = re.sub(r"\\([%_&#$])", r"\1", text)  # an escaped character, printed
    text = re.sub(r"\\[a-zA-Z]+\*? ?", "", text).replace("{", "").replace("}", "")
    return _TABLE_FONT_PT * sum(_TIMES_WIDTHS.get(c, 889) for c in text) / 1000.0


def estimated_width(cells: Sequence[Sequence[str]],
                    groups: Sequence[tuple[str, int]] | None = None) -> float:
    """The estimated width (pt) of a tabular whose rows (the header first) are ``cells``, with
    ``groups`` of (header, columns spanned) above them: each column as wide as its widest
    cell plus \tabcolsep on each side, a group at least as wide as its header."""
    n = len(cells[0]) if cells else 0
    widths = [max(_text_width(row[c]) for row in cells) + 2 * _TABCOLSEP_PT for c in range(n)]
    widths = [w * _ESTIMATE_MARGIN for w in widths]
    start = 0
    for text, span in groups or ():
        spanned = sum(widths[start:start + span])
        needed = _text_width(text) + 2 * _TABCOLSEP_PT
        if needed > spanned:
            widths[start + span - 1] += needed - spanned
        start += span
    return sum(widths)


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
                test: str = "t", placement: str = "auto", baseline: str | None = None,
                directional: Mapping[str, tuple[Sequence[Any], Sequence[float]]] | None = None,
                directional_meaning: str = "") -> str:
    """A ``table`` (or ``table*``) environment with a booktabs ``tabular`` of ``table``
    (column name -> values).

    Numbers get ``decimals`` digits (counts none); the best value of each column whose
    direction :data:`BETTER` declares is in bold (its minus sign too), within each measure and
    α of the long layout (all rows of the wide one), the ``baseline`` run's rows left out: they
    are printed as the baseline, ``NAME (baseline)``. A TRisk value whose p-value (the
    corrected one, where the table has a ``trisk_p_METHOD`` column) is below ``level`` is
    marked ▲ (TRisk > 0: better than the baseline) or ▼ (worse), explained in the caption with
    the test and the correction. Missing values print as
    ``--``. Every column is printed under :func:`column_header` unless ``headers`` names it
    (LaTeX, as given: a user's text goes through :func:`plain_text` first). The output needs
    ``\\usepackage{booktabs}`` (and ``amssymb`` for ``directional`` marks outside acmart), as
    its first line says.

    ``better`` gives a column's direction (``"higher"``/``"lower"``) where its name does not;
    ``marks`` maps a column to (the p-values of its rows, the test and correction in words): a
    value whose p-value is below ``level`` gets that column's mark (‡, §, ¶ in turn), which the
    caption explains; ``directional`` maps a column to (p-values, signed differences from the
    baseline): a significant value is marked ▲ (above the baseline) or ▼ (below), explained by
    ``directional_meaning``. ``digits`` sets a column's number of decimals. ``header_groups``
    adds a row above the headers, (text, number of columns) from the left, ruled under each
    group. The caption comes above the table (ACM's and most proceedings' style), followed by
    ``label``. Negative numbers print with a minus sign (``$-$``), and marks take no width
    (``\\rlap``), so that right-aligned columns of equal decimals align on the decimal point.
    ``test`` names the test of the TRisk p-values in the legend (:data:`lgb_risk.risk.TESTS`).
    ``placement``: ``"column"`` (``table``), ``"page"`` (``table*``, both columns of a
    two-column page) or ``"auto"``: ``table`` where the estimated width
    (:func:`estimated_width`, in ACM sigconf's 9-pt Times) fits one column of
    :data:`WIDTHS_PT`, else ``table*``.
    """
    rows = _checked_rows(table, decimals=decimals, level=level, digits=digits, marks=marks,
                         directional=directional, placement=placement)
    names = list(table)
    base_rows = {r for r, row in enumerate(rows) if baseline is not None and names
                 and str(row[0]) == str(baseline)}
    measures = {str(value) for value in table.get("measure", [])}
    measures |= {name for name in names if _field(name)[1] is None and "@" in name}
    group_by = [i for i, name in enumerate(names) if name in ("measure", "alpha")]
    directions = {name: (better or {}).get(name) or _direction(name, measures) for name in names}
    daggers, correction = _significant_trisk(names, rows, level)
    marked, explained = _marked_cells(names, rows, level, daggers, marks, directional)
    if directional and directional_meaning:
        explained.append(rf"$\blacktriangle$/$\blacktriangledown$: {directional_meaning}, "
                         rf"$p < {level:g}$.")
    cells = _Cells(names, rows, base_rows, decimals, digits or {},
                   _best_cells(names, rows, base_rows, group_by, directions), marked)
    header_cells = [(headers or {}).get(name) or column_header(name) for name in names]
    body_cells = [[cells.text(r, c) for c in range(len(names))] for r in range(len(rows))]
    body = [" & ".join(row) + r" \\" for row in body_cells]
    if len(base_rows) == 1 and not group_by:  # the baseline first, ruled off the runs
        (base_row,) = base_rows
        body = [body[base_row], r"\midrule", *body[:base_row], *body[base_row + 1:]]
    legend = [caption] if caption else []
    if any(directions.values()):
        legend.append("Bold: the best value of each column" + (" for each measure and $\\alpha$"
                                                               if group_by else "")
                      + (" among the runs compared to the baseline" if base_rows else "")
                      + ".")
    if daggers:
        how = (f", {CORRECTIONS.get(correction, correction)}-corrected over the runs compared "
               "to the baseline" if correction else ", uncorrected")
        legend.append(rf"$\blacktriangle$/$\blacktriangledown$ on TRisk: significantly "
                      rf"better/worse than the baseline by {TESTS[test]}, "
                      rf"$p < {level:g}${how}.")
    legend += explained
    width = estimated_width([header_cells, *body_cells], header_groups)
    wide = placement == "page" or (placement == "auto" and width > WIDTHS_PT["column"])
    numeric = [any(_number(row[c]) is not None for row in rows) for c in range(len(names))]
    return _environment(
        "table*" if wide else "table", width, caption, label, legend,
        spec="".join("r" if is_number else "l" for is_number in numeric),
        rows=[*_heading(header_cells, header_groups), *body],
        amssymb=bool(directional or daggers))


def _checked_rows(table, *, decimals, level, digits, marks, directional, placement) -> list:
    """The table's rows (tuples in column order), its arguments checked: one value per row in
    every column, the level, the decimals, the marks' p-values and the placement."""
    check_choice(placement, "placement", ("auto", "column", "page"))
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
    for kind, given in (("marks", marks), ("directional", directional)):
        for name, (p_values, _) in (given or {}).items():
            if name not in lengths:
                raise ValueError(f"{kind} names column {name!r}, which the table does not have "
                                 f"(it has {', '.join(map(repr, names))})")
            if len(p_values) != n_rows:
                raise ValueError(f"{kind}[{name!r}] has {len(p_values)} p-values for {n_rows} "
                                 "rows; give one per row (None where there is no test)")
            _check_p_values(p_values, f"{kind}[{name!r}]")
    for name in names:
        if _field(name)[0].startswith("trisk_p"):
            _check_p_values(table[name], f"column {name!r}")
    return list(zip(*(list(table[name]) for name in names)))


def _best_cells(names, rows, base_rows, group_by, directions) -> set:
    """The (row, column) cells in bold: each directed column's best value within each group of
    rows of one measure and α (the baseline's rows left out)."""
    groups: dict = {}
    for r, row in enumerate(rows):
        groups.setdefault(tuple(row[i] for i in group_by), []).append(r)
    bold: set = set()
    for c, name in enumerate(names):
        direction = directions[name]
        if direction is None:
            continue
        for members in groups.values():
            numbers = [(_number(rows[r][c]), r) for r in members if r not in base_rows]
            values = [(v, r) for v, r in numbers if v is not None]
            if values:
                best = (max if direction == "higher" else min)(v for v, _ in values)
                bold |= {(r, c) for v, r in values if v == best}
    return bold


def _marked_cells(names, rows, level, daggers, marks, directional) -> tuple[dict, list]:
    """The marks of each (row, column) cell — ▲/▼ on a significant TRisk, a test's symbol, a
    directional ▲/▼ — and the legend's sentence for each test's symbol."""
    marked: dict = {(r, c): [r"\blacktriangle" if float(rows[r][c]) > 0 else
                             r"\blacktriangledown"] for r, c in daggers}
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
    for name, (p_values, signs) in (directional or {}).items():
        c = names.index(name)
        for r, (p, sign) in enumerate(zip(p_values, signs)):
            if _number(p) is not None and float(p) < level and _number(sign):
                marked.setdefault((r, c), []).append(
                    r"\blacktriangle" if float(sign) > 0 else r"\blacktriangledown")
    return marked, explained


@dataclass(frozen=True)
class _Cells:
    """How each cell prints: a number with its decimals (counts none), a minus sign as
    ``$-$``, bold where best, its marks in ``\\rlap`` (no width); text escaped, a missing value
    ``--``, the baseline's name with ``(baseline)``."""

    names: list
    rows: list
    base_rows: set
    decimals: int
    digits: Mapping[str, int]
    bold: set
    marked: dict

    def text(self, r: int, c: int) -> str:
        name, value = self.names[c], self.rows[r][c]
        number = _number(value)
        if number is None:
            text = escape(_shown_value(name, value)) if isinstance(value, str) else "--"
            if c == 0 and r in self.base_rows:
                text += " (baseline)"
        elif name in self.digits:
            text = f"{number:.{self.digits[name]}f}"
        elif _is_count(name) or isinstance(value, int):
            text = f"{int(number)}"
        else:
            text = f"{number:.{self.decimals}f}"
        if number is not None and text.startswith("-"):
            text = "$-$" + text[1:]
        if (r, c) in self.bold:
            text = (r"\textbf{\boldmath " if text.startswith("$") else r"\textbf{") + text + "}"
        symbols = self.marked.get((r, c), ())
        return text + (r"\rlap{$^{" + "".join(symbols) + "}$}" if symbols else "")


def _is_count(name: str) -> bool:
    """Whether a column holds counts (printed without decimals)."""
    field = _field(name)[0]
    return field in ("wins", "losses", "ties", "topics", "missing") or field.startswith("loss_gt_")


def _heading(header_cells: list, header_groups) -> list[str]:
    """The rules and header rows: the groups' row above the headers (ruled under each group)
    where given."""
    heading = [r"\toprule"]
    if header_groups:
        if sum(span for _, span in header_groups) != len(header_cells):
            raise ValueError(f"header_groups span {sum(span for _, span in header_groups)} "
                             f"columns; the table has {len(header_cells)}")
        cells, rules, start = [], [], 1
        for text, span in header_groups:
            cells.append(text if span == 1 else rf"\multicolumn{{{span}}}{{c}}{{{text}}}")
            if text:
                rules.append(rf"\cmidrule(lr){{{start}-{start + span - 1}}}")
            start += span
        heading += [" & ".join(cells) + r" \\", " ".join(rules)]
    return heading + [" & ".join(header_cells) + r" \\", r"\midrule"]


def _environment(environment, width, caption, label, legend, *, spec, rows, amssymb) -> str:
    """The table environment around the tabular's ``rows``: the packages it needs and its width
    in a comment, the caption above (ACM's style) and the legend's notes under it."""
    packages = r"\usepackage{booktabs}" + (
        r" (and amssymb for $\blacktriangle$, except under acmart, whose fonts have it)"
        if amssymb else "")
    lines = [rf"% needs {packages}; about {width:.0f} pt wide (ACM sigconf: a "
             f"column {WIDTHS_PT['column']:.0f} pt, the page {WIDTHS_PT['page']:.0f} pt)",
             rf"\begin{{{environment}}}", r"\centering"]
    # The caption says what the table shows, in a sentence; what its marks mean goes in a
    # note under it, as proceedings set a table's notes.
    notes = legend[1:] if caption else legend
    if caption:
        lines.append(r"\caption{" + caption + "}")
    if label:
        lines.append(rf"\label{{{label}}}")
    lines += [rf"\setlength{{\tabcolsep}}{{{_TABCOLSEP_PT:g}pt}}",
              rf"\begin{{tabular}}{{{spec}}}", *rows, r"\bottomrule", r"\end{tabular}"]
    if notes:
        lines += [r"\par\smallskip", r"{\footnotesize " + " ".join(notes) + r"\par}"]
    lines.append(rf"\end{{{environment}}}")
    return "\n".join(lines) + "\n"


def _shown_value(column: str, value: str) -> str:
    """A text cell as the table shows it: a measure by its label (``NDCG@20``)."""
    if column == "measure":
        from lgb_risk import measures as registry

        try:
            return registry.parse(value).label
        except ValueError:
            return value
    return value


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
                  level: float = 0.05, test: str = "t", span: str = "column") -> str:
    """The table a paper shows from a wide summary (:func:`lgb_risk.trec.summary_table`,
    ``lgb-risk evaluate``): a row per run, the ``baseline``'s first; per measure its mean and,
    against the baseline, TRisk at ``alpha`` (``span="column"``, a table for one column of a
    two-column page) or URisk and TRisk (``span="page"``, a ``table*`` across both), under a
    header naming the measure. A value whose difference from the baseline is significant is
    marked ▲ (above the baseline) or ▼ (below): a mean by the paired test of the per-topic
    differences (TRisk's at α = 0: the summary must hold α = 0), TRisk by its own test, both
    after ``correction`` when the summary holds its corrected p-values; ``test`` names the test
    the summary's p-values come from (:data:`lgb_risk.risk.TESTS`). ``labels`` gives a
    measure's display name as plain text (escaped; default the registry's, ``NDCG@20``). A
    one-column table that is estimated wider than the column (long run names, many measures)
    is placed as ``table*``.

    >>> none = float("nan")  # the baseline's own row
    >>> summary = {"run": ["bm25", "mine"], "topics": [50, 50], "ndcg@20": [0.20, 0.25],
    ...            "ndcg@20_urisk_a5": [none, -0.01], "ndcg@20_trisk_a5": [none, -1.2],
    ...            "ndcg@20_trisk_p_a5": [none, 0.23], "ndcg@20_trisk_p_a0": [none, 0.01]}
    >>> text = summary_latex(summary, ["ndcg@20"], alpha=5, baseline="bm25")
    >>> print(next(line for line in text.splitlines() if line.startswith("mine")))
    mine & \\textbf{0.250}\\rlap{$^{\\blacktriangle}$} & \\textbf{\\boldmath $-$1.20} \\\\
    """
    from lgb_risk import measures as registry

    check_choice(span, "span", ("column", "page"))
    unknown = [m for m in (labels or {}) if m not in measures]
    if unknown:
        raise ValueError(f"labels names {unknown[0]!r}, which the table does not show; its "
                         f"measures: {', '.join(measures)}")
    labels = {m: plain_text(text, f"labels[{m!r}]") for m, text in (labels or {}).items()}
    names = list(summary["run"])
    alpha_text = f"{alpha:g}"
    table: dict = {"run": names}
    headers = {"run": "Run"}
    groups: list = [("", 1)]
    directional: dict = {}
    suffix = f"_{correction}" if correction else ""
    fields = (("trisk", "TRisk"),) if span == "column" else (("urisk", "URisk"),
                                                              ("trisk", "TRisk"))
    base_row = names.index(baseline) if baseline in names else None
    compared = False
    for m in measures:
        shown = (labels or {}).get(m) or escape(registry.parse(m).label)
        means = list(summary[m])
        table[m] = means
        headers[m] = "Mean"
        columns = 1
        if baseline is not None and f"{m}_trisk_a{alpha_text}" in summary:
            compared = True
            for field, head in fields:
                table[f"{m}_{field}_a{alpha_text}"] = list(summary[f"{m}_{field}_a{alpha_text}"])
                headers[f"{m}_{field}_a{alpha_text}"] = head
                columns += 1
            p_means = summary.get(f"{m}_trisk_p{suffix}_a0")
            if p_means is not None and base_row is not None:
                differences = [float(v) - float(means[base_row]) for v in means]
                directional[m] = (list(p_means), differences)
            p_trisk = summary.get(f"{m}_trisk_p{suffix}_a{alpha_text}")
            if p_trisk is not None:
                directional[f"{m}_trisk_a{alpha_text}"] = (
                    list(p_trisk), list(summary[f"{m}_trisk_a{alpha_text}"]))
        groups.append((shown, columns))
    measures_text = measures_named(measures, labels)
    risk_text = "TRisk" if span == "column" else "URisk and TRisk"
    if caption is None:
        caption = f"Mean {measures_text} of each run" + (
            f" and, against {escape(baseline)}, {risk_text} at $\\alpha = {alpha_text}$"
            if baseline is not None and compared else "") + "."
    corrected = (f", {CORRECTIONS.get(correction, correction)}-corrected over the runs "
                 "compared to the baseline" if correction else "")
    means_test = ("the paired $t$-test" if test == "t" else
                  "the paired randomisation test (9,999 sign flips, seeded)")
    meaning = (f"significantly above/below the baseline (a mean by {means_test} of the "
               f"per-topic differences, TRisk by {TESTS[test]}{corrected})")
    digits = {name: min(decimals, 2) for name in table if _field(name)[0] == "trisk"}
    return latex_table(table, decimals=decimals, level=level, caption=caption, headers=headers,
                       label=label, header_groups=groups, digits=digits,
                       placement="auto" if span == "column" else "page",
                       baseline=baseline if base_row is not None else None,
                       directional=directional, directional_meaning=meaning)


def measures_named(measures: Sequence[str], labels: Mapping[str, str] | None = None) -> str:
    """The measures as a caption names them, in LaTeX: ``labels`` where given, else the
    registry's labels escaped; ``NDCG@20``, ``NDCG@20 and ERR@20``, ``A, B and C``.

    >>> measures_named(["ndcg@20", "err@20"])
    'NDCG@20 and ERR@20'
    """
    from lgb_risk import measures as registry

    names = [(labels or {}).get(m) or escape(registry.parse(m).label) for m in measures]
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


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
