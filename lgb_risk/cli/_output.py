"""Result tables as the commands print or write them: aligned text, CSV, JSON or LaTeX, a file
written whole or not at all; the notes and checks of a LaTeX table's headers and placement."""

from __future__ import annotations

import re
import sys
from collections.abc import Callable

import numpy as np

from lgb_risk._files.atomic import atomic_write_text

FORMATS = ("table", "csv", "json", "latex")


#: Columns that count topics (wins, losses, ...; with a measure and α in the wide layout), and
#: α: printed as whole numbers where they are, though a column holding NaN is float.
_COUNT_COLUMN = re.compile(r"((^|_)(wins|losses|ties|topics|missing|loss_gt_[0-9.]+)"
                           r"(_a[0-9.]+)?|^alpha|^needed.*)$")


def _cell(value, decimals: int, missing: str, count: bool = False) -> str:
    """One printed cell: floats with ``decimals`` digits (a ``count`` as a whole number), NaN
    and None as ``missing``."""
    if value is None:
        return missing
    if isinstance(value, (bool, np.bool_)):
        return str(bool(value))
    if isinstance(value, (float, np.floating)):
        if np.isnan(value):
            return missing
        return f"{int(value)}" if count and float(value).is_integer() else f"{value:.{decimals}f}"
    return str(value)


#: The widest a printed table's line may be: the terminal's usual 100 columns. A wider table
#: is printed in blocks of columns, each led by the columns that name its rows.
TERMINAL_WIDTH = 100

#: p-value columns: printed "< 1e-6" (at 6 decimals) where they round to zero.
_P_COLUMN = re.compile(r"(^|_)p($|_)")


def _aligned_text(names: list, rows: list, decimals: int, width: int) -> str:
    """The table as aligned text within ``width`` characters a line where it can be: columns
    right-aligned (text left-aligned), NaN as ``-``, a p-value below the decimals shown as
    ``< 1e-D``; too wide, in blocks of columns, each repeating the text columns and α."""
    counts = [bool(_COUNT_COLUMN.search(n)) for n in names]
    smallest = 10.0 ** -decimals
    cells = [[f"< 1e-{decimals}" if (_P_COLUMN.search(n) and isinstance(v, (float, np.floating))
                                     and 0 < v < smallest / 2) else _cell(v, decimals, "-", c)
              for n, v, c in zip(names, row, counts)] for row in rows]
    widths = [max([len(n), *(len(r[i]) for r in cells)]) for i, n in enumerate(names)]
    text_column = [all(isinstance(row[i], str) for row in rows) for i in range(len(names))]
    if sum(w + 1 for w in widths) - 1 <= width:
        keys = []  # one block, in the columns' order
    else:
        keys = [i for i, n in enumerate(names) if text_column[i] or n == "alpha"]
    blocks, block = [], list(keys)
    for i in range(len(names)):
        if i in keys:
            continue
        if len(block) > len(keys) and sum(widths[j] + 1 for j in [*block, i]) - 1 > width:
            blocks.append(block)
            block = list(keys)
        block.append(i)
    blocks.append(block)

    def aligned(values, columns):
        return " ".join(values[j].ljust(widths[j]) if text_column[j] else
                        values[j].rjust(widths[j]) for j in columns).rstrip()

    return "\n\n".join("\n".join([aligned(names, columns), *(aligned(r, columns) for r in cells)])
                       for columns in blocks) + "\n"


def _column_values(column) -> np.ndarray:
    """A DataFrame column's values; a nullable integer column's (whole numbers of topics, NA
    where there is no answer) as floats with NaN, so that every writer prints them alike."""
    import pandas as pd

    if pd.api.types.is_extension_array_dtype(column) and pd.api.types.is_integer_dtype(column):
        return column.to_numpy(dtype=np.float64, na_value=np.nan)
    return column.to_numpy()


def _json_value(value, decimals: int):
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        return None if np.isnan(value) else round(float(value), min(decimals, 15))
    return value


def write_output(table, fmt: str, out: str | None, decimals: int | None = None,
                 latex: dict | None = None, placed: Callable | None = None) -> None:
    """Print or write a result table; a file is written whole or not at all (atomic rename).

    ``table`` is a mapping of column name to values (all of one length), or a DataFrame.
    ``table``: columns right-aligned, NaN as ``-``; ``csv``: NaN empty; ``json``: a list of
    records, NaN as null; ``latex``: :func:`lgb_risk.latex.latex_table` with the options
    ``latex`` (headers, caption, label). ``decimals``: 6, or 3 for LaTeX, unless given.
    """
    if decimals is None:
        decimals = 3 if fmt == "latex" else 6
    if hasattr(table, "columns") and hasattr(table, "to_numpy"):  # a DataFrame
        table = {str(c): _column_values(table[c]) for c in table.columns}
    names = list(table)
    rows = list(zip(*(list(table[c]) for c in names)))
    if fmt == "csv":
        import csv
        import io

        buffer = io.StringIO()
        writer = csv.writer(buffer, lineterminator="\n")
        writer.writerow(names)
        counts = [bool(_COUNT_COLUMN.search(n)) for n in names]
        writer.writerows([_cell(v, decimals, "", c) for v, c in zip(row, counts)] for row in rows)
        text = buffer.getvalue()
    elif fmt == "latex":
        from lgb_risk.latex import latex_table

        text = latex_table({n: [row[i] for row in rows] for i, n in enumerate(names)},
                           decimals=decimals, **(latex or {}))
        if placed is not None:
            placed(text)
    elif fmt == "json":
        import json

        text = json.dumps([{n: _json_value(v, decimals) for n, v in zip(names, row)}
                           for row in rows], indent=1) + "\n"
    else:
        text = _aligned_text(names, rows, decimals, TERMINAL_WIDTH)
    if out is None:
        sys.stdout.write(text)
    else:
        atomic_write_text(out, text)


def note_placement(text: str, span: str | None) -> None:
    """Say where a LaTeX table placed itself when it could not take one column."""
    lines = text.splitlines()
    if span is None and len(lines) > 1 and lines[1] == r"\begin{table*}":
        width = lines[0].split("about ")[1].split(" pt")[0]
        print(f"note: the table is about {width} pt wide, more than ACM's 241-pt column: "
              "placed as table* across the page (--span page says so; fewer --measures, "
              "--columns or shorter run names fit a column)", file=sys.stderr)


def refuse_unknown_headers(headers: dict, names: list, what: str) -> None:
    """``--header NAME=TEXT`` names one of the table's measures (paper's table) or columns."""
    unknown = [name for name in headers if name not in names]
    if unknown:
        raise ValueError(f"--header {unknown[0]}=...: the table has no {what} {unknown[0]!r}; "
                         f"its {what}s: {', '.join(names)}")


def headers_given(given) -> dict:
    """``--header COLUMN=TEXT ...`` as a mapping."""
    headers = {}
    for item in given or ():
        column, equals, text = item.partition("=")
        if not equals or not column or not text.strip():
            raise ValueError(f"--header: expected COLUMN=TEXT with TEXT the header (plain "
                             f"text), got {item!r}")
        headers[column] = text
    return headers
