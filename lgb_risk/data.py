"""Readers for TREC run files and qrels, and for LETOR/SVMlight learning-to-rank files.

Every reader refuses malformed input with a :class:`ValueError` naming the file and the line.
The LETOR reader (:func:`load_letor`, :class:`LetorData`) is :mod:`lgb_risk._files.letor`'s.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np

from lgb_risk._files import letor
from lgb_risk._files.atomic import atomic_write, atomic_write_text
from lgb_risk._files.letor import *  # noqa: F403 (its __all__ is this module's too)
from lgb_risk._files.letor import LetorData
from lgb_risk._files.pair_keys import first_repeat, pair_keys, repeats_a_key
from lgb_risk._files.text import field_lines
from lgb_risk._inputs.validation import is_number

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["read_run", "read_qrels", "read_run_columns", "read_qrels_columns", "RunColumns",
           "QrelsColumns", "run_name", "read_pool_scores", "read_per_topic_table",
           "read_number_rows", "as_run", "as_qrels", "atomic_write", "atomic_write_text"]
__all__ += letor.__all__  # the LETOR reader


def run_name(path: str | os.PathLike) -> str:
    """Name of a run: its file name without the last extension (``runs/rm_cata.txt`` → ``rm_cata``).

    TREC run files often carry the same RUNID in every file (the TREC 2012 baselines all say
    ``indri``), so runs are named by file.

    >>> run_name("runs/rm_cata-filtered.txt")
    'rm_cata-filtered'
    """
    return Path(path).stem if Path(path).suffix else Path(path).name


class RunColumns(NamedTuple):
    """A TREC run as columns, in file order: what :func:`read_run` returns as a DataFrame.

    ``topic`` and ``docno`` are arrays of UTF-8 bytes (numpy ``S`` dtype; ids compared byte by
    byte, as gdeval.pl and trec_eval compare them); ``rank`` and ``score`` arrays; ``name`` the
    run's :func:`run_name`. ``keys`` are the (topic, docno) pairs' keys under seed 0
    (:func:`lgb_risk._files.pair_keys.pair_keys`) where the reader computed them to find a repeated
    document, kept to find the pairs' judgments; None to compute them when needed.
    """

    topic: np.ndarray
    docno: np.ndarray
    rank: np.ndarray
    score: np.ndarray
    name: str
    keys: np.ndarray | None = None


class QrelsColumns(NamedTuple):
    """A TREC qrels file as columns, in file order (``topic`` and ``docno`` arrays of UTF-8
    bytes, numpy ``S`` dtype; ``grade``; ``keys`` as :class:`RunColumns` has them)."""

    topic: np.ndarray
    docno: np.ndarray
    grade: np.ndarray
    keys: np.ndarray | None = None


_RUN_LAYOUT = "QID Q0 DOCNO RANK SCORE RUNID"
_QRELS_LAYOUT = "QID ITERATION DOCNO GRADE"
#: Widths of the fast reader's text fields (topic id, document id), narrow first: the narrower,
#: the less memory the table takes and the faster it is read. An id that fills its field may have
#: been cut, so the next widths are tried; an id too long for the last goes to the exact
#: line-by-line reader (which has no limit). Q0, ITERATION and RUNID are checked for presence only.
_ID_WIDTHS = ((16, 48), (64, 256))


def _fast_columns(path, layout):
    """Whole-file parse in numpy's C reader; None where it cannot vouch for the result (a
    malformed line, an id too long for every field width): the caller then reads line by
    line."""
    for topic_width, docno_width in _ID_WIDTHS:
        table = _loaded_table(path, layout, topic_width, docno_width)
        if table is None:
            return None
        raw = table.view(np.uint8).reshape(table.size, table.dtype.itemsize)
        if not any(raw[:, table.dtype.fields[name][1] + width - 1].any()
                   for name, width in (("topic", topic_width), ("docno", docno_width))):
            return table
    return None


def _loaded_table(path, layout, topic_width, docno_width):
    """The file as a structured array, or None for a line numpy's reader refuses or warns of,
    an empty file, or a non-finite score."""
    import warnings

    kinds = {"QID": ("topic", f"S{topic_width}"), "DOCNO": ("docno", f"S{docno_width}"),
             "RANK": ("rank", "i8"), "SCORE": ("score", "f8"), "GRADE": ("grade", "i8")}
    dtype = np.dtype([kinds.get(name, (name.lower(), "S1")) for name in layout.split()])
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            table = np.loadtxt(path, dtype=dtype, comments=None, encoding="bytes", ndmin=1)
    except (ValueError, UserWarning):
        return None
    if table.size == 0:
        return None
    if "score" in dtype.names and not np.all(np.isfinite(table["score"])):
        return None
    return table


def _exact_columns(path, layout: str, numeric: dict, what: str):
    """Line-by-line parse with a specific error (file, line, field) for the first bad line.

    ``numeric`` maps a field name to (parser, what it must be); returns topics, docnos (bytes)
    and the numeric columns, and the line number of every row.
    """
    names = layout.split()
    topic, docno, numbers = [], [], []
    values: dict[str, list] = {name: [] for name in numeric}
    for number, fields in field_lines(path):
        if len(fields) != len(names):
            raise ValueError(f"{path}:{number}: expected {len(names)} fields '{layout}', found "
                             f"{len(fields)}")
        for name, (parse, expected) in numeric.items():
            index = names.index(name)
            try:
                values[name].append(parse(fields[index]))
            except ValueError:
                raise ValueError(f"{path}:{number}: {name} must be {expected}, got "
                                 f"{fields[index]!r}") from None
        topic.append(fields[0].encode())
        docno.append(fields[2].encode())
        numbers.append(number)
    if not numbers:
        raise ValueError(f"{path}: the {what} file has no line")
    return topic, docno, values, numbers


def _finite_float(text: str) -> float:
    value = float(text)
    if not np.isfinite(value):
        raise ValueError
    return value


def _refuse_duplicates(path, layout, numeric, topic, docno, what) -> None:
    """A document listed twice for a topic is an error naming both lines (called where two
    pairs share a key: they may be two pairs whose keys are equal by chance, no error)."""
    repeat = first_repeat(topic, docno)
    if repeat is None:
        return
    i, j = repeat
    _, _, _, numbers = _exact_columns(path, layout, numeric, what)  # the rows' line numbers
    raise ValueError(
        f"{path}:{numbers[j]}: document {docno[j].decode()!r} appears again for topic "
        f"{topic[j].decode()!r} (first at line {numbers[i]}); a {what} file must list each "
        "document once per topic")


_RUN_NUMERIC = {"RANK": (int, "an integer"), "SCORE": (_finite_float, "a finite number")}
_QRELS_NUMERIC = {"GRADE": (int, "an integer")}


def _read_trec(path, layout: str, numeric: dict, what: str):
    """Topics and docnos (bytes) and the numeric columns of a TREC file, fast path first."""
    p = os.fspath(path)
    if not os.path.isfile(p):
        raise FileNotFoundError(f"no such file: {p}")
    table = _fast_columns(p, layout)
    if table is not None:
        topic, docno = table["topic"], table["docno"]
        values = {name: table[name.lower()] for name in numeric}
    else:
        topics, docnos, lists, _ = _exact_columns(p, layout, numeric, what)
        topic, docno = np.array(topics, dtype=bytes), np.array(docnos, dtype=bytes)
        values = {name: np.array(column) for name, column in lists.items()}
    keys = pair_keys(topic, docno)
    if repeats_a_key(keys):
        _refuse_duplicates(p, layout, numeric, topic, docno, what)
    return topic, docno, values, keys


def read_run_columns(path: str | os.PathLike) -> RunColumns:
    """Read a TREC run file (``QID Q0 DOCNO RANK SCORE RUNID`` per line) as columns.

    The fast path parses the whole file in numpy's C reader; any line it cannot vouch for sends
    the file through the line-by-line reader, whose error names the file, line and field.

    Raises
    ------
    ValueError
        A line without six fields, a non-numeric or non-finite score, a non-integer rank, a
        document repeated within a topic, text that is not UTF-8, or an empty file.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "bm25.txt"
    >>> _ = path.write_text("151 Q0 doc-a 1 12.5 bm25\\n151 Q0 doc-b 2 11.0 bm25\\n")
    >>> run = read_run_columns(path)
    >>> run.docno.tolist(), run.score.tolist()
    ([b'doc-a', b'doc-b'], [12.5, 11.0])
    """
    topic, docno, values, keys = _read_trec(path, _RUN_LAYOUT, _RUN_NUMERIC, "run")
    return RunColumns(topic, docno, values["RANK"].astype(np.int64),
                      values["SCORE"].astype(np.float64), run_name(path), keys)


def read_qrels_columns(path: str | os.PathLike) -> QrelsColumns:
    """Read a TREC qrels file (``QID ITERATION DOCNO GRADE`` per line) as columns.

    Raises
    ------
    ValueError
        A line without four fields, a non-integer grade, a document judged twice for a topic,
        text that is not UTF-8, or an empty file; the message names the file and line.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "qrels.txt"
    >>> _ = path.write_text("151 0 doc-a 2\\n")
    >>> read_qrels_columns(path).grade.tolist()
    [2]
    """
    topic, docno, values, keys = _read_trec(path, _QRELS_LAYOUT, _QRELS_NUMERIC, "qrels")
    return QrelsColumns(topic, docno, values["GRADE"].astype(np.int64), keys)


def _decoded(values, path) -> list[str]:
    try:
        return [v.decode("utf-8") for v in values]
    except UnicodeDecodeError:
        raise ValueError(f"{path}: holds an id that is not UTF-8 text") from None


def read_run(path: str | os.PathLike) -> pd.DataFrame:
    """Read a TREC run file (``QID Q0 DOCNO RANK SCORE RUNID`` per line).

    Returns
    -------
    DataFrame
        Columns ``topic`` (str), ``docno`` (str), ``rank`` (int), ``score`` (float), in file order;
        ``attrs["name"]`` holds :func:`run_name` of the path.

    Raises
    ------
    ValueError
        As :func:`read_run_columns`; the message names the file and line.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "bm25.txt"
    >>> _ = path.write_text("151 Q0 doc-a 1 12.5 bm25\\n151 Q0 doc-b 2 11.0 bm25\\n")
    >>> run = read_run(path)
    >>> run.attrs["name"], run["docno"].tolist(), run["score"].tolist()
    ('bm25', ['doc-a', 'doc-b'], [12.5, 11.0])
    """
    import pandas as pd

    run = read_run_columns(path)
    frame = pd.DataFrame({"topic": _decoded(run.topic, path), "docno": _decoded(run.docno, path),
                          "rank": run.rank, "score": run.score})
    frame.attrs["name"] = run.name
    return frame


def read_qrels(path: str | os.PathLike) -> pd.DataFrame:
    """Read a TREC qrels file (``QID ITERATION DOCNO GRADE`` per line).

    Returns
    -------
    DataFrame
        Columns ``topic`` (str), ``docno`` (str), ``grade`` (int, as judged: negative grades such as
        spam −2 are kept; evaluation decides how to count them).

    Raises
    ------
    ValueError
        As :func:`read_qrels_columns`.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "qrels.txt"
    >>> _ = path.write_text("151 0 doc-a 2\\n151 0 doc-b -2\\n")
    >>> read_qrels(path)["grade"].tolist()
    [2, -2]
    """
    import pandas as pd

    qrels = read_qrels_columns(path)
    return pd.DataFrame({"topic": _decoded(qrels.topic, path),
                         "docno": _decoded(qrels.docno, path), "grade": qrels.grade})


# -- runs and qrels held by other tools, in memory -------------------------------------------

#: Column names of a run or qrels frame, by tool: (topic, document, score or grade).
_RUN_COLUMNS = {"lgb_risk": ("topic", "docno", "score"), "PyTerrier": ("qid", "docno", "score"),
                "ir_measures": ("query_id", "doc_id", "score"), "ranx": ("q_id", "doc_id", "score")}
_QRELS_COLUMNS = {"lgb_risk": ("topic", "docno", "grade"), "PyTerrier": ("qid", "docno", "label"),
                  "ir_measures": ("query_id", "doc_id", "relevance"),
                  "ranx": ("q_id", "doc_id", "score")}


def _triples(value, columns: dict, what: str):
    """(topics, documents, values) of a run or qrels given as a frame (any tool's column names,
    :data:`_RUN_COLUMNS`), a mapping topic -> {document: value} (pytrec_eval, ir_measures,
    ranx's ``to_dict``), a ranx ``Qrels``/``Run``, or an iterable of records with
    ``query_id``, ``doc_id`` and ``score``/``relevance`` (ir_measures' ``ScoredDoc``/``Qrel``)."""
    if type(value).__module__.split(".")[0] == "ranx":
        value = value.to_dict()
    if hasattr(value, "columns"):
        names = set(value.columns)
        for topic, doc, number in columns.values():
            if {topic, doc, number} <= names:
                return (value[topic].astype(str).tolist(), value[doc].astype(str).tolist(),
                        value[number].tolist())
        raise ValueError(f"a {what} frame needs the columns of one of " + "; ".join(
            f"{tool} ({', '.join(c)})" for tool, c in columns.items())
            + f"; it has {', '.join(map(str, value.columns))}")
    if isinstance(value, Mapping):
        topics, docs, numbers = [], [], []
        for topic, ranking in value.items():
            if not isinstance(ranking, Mapping):
                raise ValueError(f"a {what} given as a mapping must map each topic to a mapping "
                                 f"document -> value; topic {topic!r} maps to "
                                 f"{type(ranking).__name__}")
            for doc, number in ranking.items():
                topics.append(str(topic))
                docs.append(str(doc))
                numbers.append(number)
        return topics, docs, numbers
    number_field = "relevance" if what == "qrels" else "score"
    try:
        records = [(str(r.query_id), str(r.doc_id), getattr(r, number_field)) for r in value]
    except (TypeError, AttributeError):
        raise ValueError(f"cannot read a {what} from {type(value).__name__}: expected a frame "
                         f"with topic, document and {number_field} columns, a mapping topic -> "
                         f"{{document: {number_field}}}, a ranx {what.title()} or records with "
                         f"query_id, doc_id and {number_field}") from None
    topics, docs, numbers = (list(column) for column in zip(*records)) if records else ([], [],
                                                                                        [])
    return topics, docs, numbers


def as_run(run: Any) -> pd.DataFrame:
    """A run held in memory by another tool, as :func:`read_run`'s frame (``topic``, ``docno``,
    ``score``).

    Accepted: this library's frame; a frame with PyTerrier's columns (``qid``, ``docno``,
    ``score``), ir_measures' (``query_id``, ``doc_id``, ``score``) or ranx's (``q_id``,
    ``doc_id``, ``score``); a mapping ``{topic: {docno: score}}`` (pytrec_eval, ir_measures);
    a ranx ``Run``; an iterable of ir_measures ``ScoredDoc``. Topics and document ids become
    strings. A score that is not a finite number is an error naming topic and document.

    >>> as_run({"151": {"d1": 2.5, "d2": 1.0}})["score"].tolist()
    [2.5, 1.0]
    """
    import pandas as pd

    if hasattr(run, "columns") and {"topic", "docno", "score"} <= set(run.columns):
        return _checked_frame(run, "score", float)
    topics, docs, scores = _triples(run, _RUN_COLUMNS, "run")
    values = _numbers(scores, topics, docs, "score", float)
    frame = pd.DataFrame({"topic": topics, "docno": docs, "score": values})
    frame.attrs["name"] = getattr(run, "name", None) or ""
    return frame


def as_qrels(qrels: Any) -> pd.DataFrame:
    """Judgments held in memory by another tool, as :func:`read_qrels`' frame (``topic``,
    ``docno``, ``grade``): the same forms as :func:`as_run`, with PyTerrier's ``label``,
    ir_measures' ``relevance`` or ranx's ``score`` as the grade. A grade that is not a whole
    number is an error naming topic and document.

    >>> as_qrels({"151": {"d1": 2, "d2": 0}})["grade"].tolist()
    [2, 0]
    """
    import pandas as pd

    if hasattr(qrels, "columns") and {"topic", "docno", "grade"} <= set(qrels.columns):
        return _checked_frame(qrels, "grade", int)
    topics, docs, grades = _triples(qrels, _QRELS_COLUMNS, "qrels")
    values = _numbers(grades, topics, docs, "grade", int)
    return pd.DataFrame({"topic": topics, "docno": docs, "grade": values})


def _checked_frame(frame: pd.DataFrame, column: str, kind) -> pd.DataFrame:
    """A frame already in this library's columns, with the same checks as any other way in:
    ``frame`` itself when its ``column`` passes as it is, else a copy holding the converted
    numbers (whole-number floats as grades)."""
    given = frame[column].to_numpy()
    numbers = _numbers(given, frame["topic"].to_numpy(), frame["docno"].to_numpy(), column,
                       kind)
    if given.dtype == numbers.dtype:
        return frame
    converted = frame.copy()
    converted[column] = numbers
    return converted


def _numbers(values, topics, docs, what: str, kind) -> np.ndarray:
    """Scores (finite floats) or grades (whole numbers) checked, naming the first bad one."""
    try:
        numbers = np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError):
        numbers = None
    if numbers is None or numbers.ndim != 1:
        bad = next((i for i, v in enumerate(values) if not is_number(v)), 0)
        raise ValueError(f"the {what} of topic {topics[bad]!r}, document {docs[bad]!r} is "
                         f"{values[bad]!r}, not a number")
    wrong = ~np.isfinite(numbers) if kind is float else (
        ~np.isfinite(numbers) | (numbers != np.round(numbers)))
    if wrong.any():
        i = int(np.flatnonzero(wrong)[0])
        expected = "a finite number" if kind is float else "a whole number"
        raise ValueError(f"the {what} of topic {topics[i]!r}, document {docs[i]!r} is "
                         f"{values[i]!r}; expected {expected}")
    return numbers if kind is float else numbers.astype(np.int64)


def read_pool_scores(path: str | os.PathLike, pool: LetorData) -> np.ndarray:
    """A ranker's scores of a pool's documents, in the pool's document order.

    ``path`` holds one score per line (``nan`` for a document the ranking does not hold), as many
    lines as the pool has documents; or a TREC run (``QID Q0 DOCNO RANK SCORE RUNID``), matched to
    the pool by query id and the document ids of the pool file's comments, its documents the run
    lacks getting NaN.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> pool = "1 qid:7 1:0.5 # docid = a\\n0 qid:7 1:0.1 # docid = b\\n"
    >>> _ = (folder / "pool.txt").write_text(pool)
    >>> _ = (folder / "run.txt").write_text("7 Q0 b 1 2.0 r\\n")
    >>> read_pool_scores(folder / "run.txt", load_letor(folder / "pool.txt")).tolist()
    [nan, 2.0]
    """
    first: list[str] = next(field_lines(path), (0, []))[1]
    if len(first) == 6 and first[1] == "Q0":
        if pool.docids is None:
            raise ValueError(f"{path} is a TREC run, but the pool file has no document ids "
                             "(comments '# docid = ...') to match it with")
        run = read_run(path)
        scores = dict(zip(zip(run["topic"], run["docno"]), run["score"]))
        matched = np.array([scores.get((str(q), str(d)), np.nan)
                            for q, d in zip(pool.qid, pool.docids)], dtype=np.float64)
        if np.all(np.isnan(matched)):
            pool_topics = ", ".join(map(str, list(dict.fromkeys(pool.qid.tolist()))[:5]))
            run_topics = ", ".join(list(dict.fromkeys(run["topic"].tolist()))[:5])
            raise ValueError(f"{path}: none of the run's documents is in the pool (matched by "
                             f"query id and the pool's '# docid = ...' comments; the pool's "
                             f"queries begin {pool_topics}, the run's {run_topics})")
        return matched
    values = []
    for number, fields in field_lines(path):
        try:
            if len(fields) != 1:
                raise ValueError
            value = float(fields[0])
            if np.isinf(value):
                raise ValueError
        except ValueError:
            raise ValueError(f"{path}:{number}: expected one score (a finite number, or nan for "
                             f"a document not ranked), got {' '.join(fields)!r}") from None
        values.append(value)
    if len(values) != pool.y.size:
        raise ValueError(f"{path} has {len(values)} scores but the pool has {pool.y.size} "
                         "documents; one score per document, in the pool file's order")
    return np.array(values)


def read_number_rows(path: str | os.PathLike, what: str, *, columns: int | None = None,
                     positive: bool = False) -> np.ndarray:
    """A file of numbers, one row a line (``,`` or whitespace between them), each finite and
    >= 0 (``positive``: > 0): rows × columns, ``columns`` per line where given. Errors name the
    file and the line (1-based) and say that the line holds ``what``."""
    if not Path(path).is_file():
        raise FileNotFoundError(f"no such file: {path}")
    rows, width = [], columns
    with open(path, encoding="utf-8") as handle:
        for number, line in enumerate(handle, 1):
            fields = line.replace(",", " ").split()
            if not fields:
                continue
            try:
                row = [float(f) for f in fields]
            except ValueError:
                raise ValueError(f"{path}:{number}: expected {what}, got {line.strip()!r}") \
                    from None
            if width is not None and len(row) != width:
                raise ValueError(f"{path}:{number}: expected {what} ({width} number(s)), got "
                                 f"{len(row)}: {line.strip()!r}")
            width = len(row)
            if not all(np.isfinite(v) and (v > 0 if positive else v >= 0) for v in row):
                raise ValueError(f"{path}:{number}: expected {what}, finite and "
                                 f"{'> 0' if positive else '>= 0'}, got {line.strip()!r}")
            rows.append(row)
    if not rows:
        raise ValueError(f"{path}: no line holds {what}")
    return np.array(rows, dtype=np.float64)


def read_per_topic_table(path: str | os.PathLike, *, measure: str | None = None) -> pd.DataFrame:
    """A per-topic table as systems × topics: the long format ``system,topic,score`` or the
    output of ``lgb-risk evaluate --per-topic --format csv`` (``run,topic,MEASURE...``; one
    measure chosen by ``measure`` where there are several).

    Returns
    -------
    DataFrame
        Index: systems, columns: topics, both in order of first appearance; NaN where a system
        has no score for a topic (:func:`lgb_risk.risk.risk_table` refuses it, naming both).

    Raises
    ------
    ValueError
        Naming the file and line: an unknown header, no row, an empty, non-numeric, infinite or
        negative score (ZRisk and GeoRisk need effectiveness >= 0), a second score for a system
        and topic.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "scores.csv"
    >>> _ = path.write_text("system,topic,score\\nbm25,1,0.5\\nbm25,2,0.25\\n")
    >>> read_per_topic_table(path).loc["bm25"].tolist()
    [0.5, 0.25]
    """
    import pandas as pd

    if not Path(path).is_file():
        raise FileNotFoundError(f"no such file: {path}")
    with open(path, encoding="utf-8", errors="replace") as handle:
        first_line = handle.readline().strip()
    if first_line[:1] in ("{", "["):
        raise ValueError(f"{path}:1: a JSON document, not a CSV table: give the per-topic CSV "
                         "that lgb-risk evaluate --per-topic --format csv writes, or lines "
                         "system,topic,score")
    try:
        frame = pd.read_csv(path, dtype=str, keep_default_na=False)
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as exc:
        raise ValueError(f"{path}: not a CSV table ({exc})") from None
    columns = [str(c) for c in frame.columns]
    if columns == ["system", "topic", "score"]:
        if measure is not None:
            raise ValueError(f"{path}: measure {measure!r} was asked for, but the table has one "
                             "score per system and topic (system,topic,score), no measure "
                             "columns")
        score_column = "score"
    elif columns[:2] == ["run", "topic"] and len(columns) > 2:
        measures = columns[2:]
        if measure is None and len(measures) > 1:
            raise ValueError(f"{path} holds several measures ({', '.join(measures)}); choose "
                             "one with --measure")
        score_column = measure or measures[0]
        if score_column not in measures:
            raise ValueError(f"{path} has no measure {score_column!r}; it has "
                             f"{', '.join(measures)}")
        frame = frame.rename(columns={"run": "system"})
    else:
        raise ValueError(f"{path}:1: header must be 'system,topic,score' or "
                         "'run,topic,MEASURE,...' (lgb-risk evaluate --per-topic), got "
                         f"{first_line!r}")
    if frame.empty:
        raise ValueError(f"{path}: no score row after the header")
    values = np.empty(len(frame))
    for i, (system, topic, text) in enumerate(zip(frame["system"], frame["topic"],
                                                  frame[score_column])):
        where = f"{path}:{i + 2}: system {system!r}, topic {topic!r}"
        if not text.strip():
            raise ValueError(f"{where}: the score is empty")
        try:
            values[i] = float(text)
        except ValueError:
            raise ValueError(f"{where}: the score must be a number, got {text!r}") from None
        if not np.isfinite(values[i]):
            raise ValueError(f"{where}: the score must be finite, got {text!r}")
        if values[i] < 0:
            raise ValueError(f"{where}: the score {text} is negative; ZRisk and GeoRisk are "
                             "defined for effectiveness scores >= 0")
    dup = frame.duplicated(["system", "topic"])
    if dup.any():
        i = int(np.flatnonzero(dup.to_numpy())[0])
        raise ValueError(f"{path}:{i + 2}: system {frame['system'].iloc[i]!r} has a second score "
                         f"for topic {frame['topic'].iloc[i]!r}")
    systems = list(dict.fromkeys(frame["system"]))
    topics = list(dict.fromkeys(frame["topic"]))
    matrix = frame.assign(score=values).pivot(index="system", columns="topic", values="score")
    return matrix.loc[systems, topics]
