"""Readers for TREC run files and qrels, and for LETOR/SVMlight learning-to-rank files.

Every reader refuses malformed input with a :class:`ValueError` naming the file and the line.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np

from lgb_risk._io import atomic_write, atomic_write_text
from lgb_risk._pair_keys import first_repeat, pair_keys, repeats_a_key
from lgb_risk._validation import is_number

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["read_run", "read_qrels", "read_run_columns", "read_qrels_columns", "RunColumns",
           "QrelsColumns", "run_name", "load_letor", "LetorData", "read_pool_scores",
           "read_per_topic_table", "as_run", "as_qrels", "atomic_write", "atomic_write_text"]


def run_name(path: str | os.PathLike) -> str:
    """Name of a run: its file name without the last extension (``runs/rm_cata.txt`` → ``rm_cata``).

    TREC run files often carry the same RUNID in every file (the TREC 2012 baselines all say
    ``indri``), so runs are named by file.

    >>> run_name("runs/rm_cata-filtered.txt")
    'rm_cata-filtered'
    """
    return Path(path).stem if Path(path).suffix else Path(path).name


def _text_lines(path):
    """Yield (line_number, text) for every line of a UTF-8 file; an undecodable line is an error
    naming the file and line."""
    p = os.fspath(path)
    if not os.path.isfile(p):
        raise FileNotFoundError(f"no such file: {p}")
    with open(p, "rb") as fh:
        for number, raw in enumerate(fh, start=1):
            try:
                yield number, raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise ValueError(f"{p}:{number}: not UTF-8 text ({exc.reason} at byte "
                                 f"{exc.start} of the line); is this the right file?") from None


def _lines(path):
    """Yield (line_number, fields) for the non-blank lines of a text file."""
    for number, line in _text_lines(path):
        fields = line.split()
        if fields:
            yield number, fields


class RunColumns(NamedTuple):
    """A TREC run as columns, in file order: what :func:`read_run` returns as a DataFrame.

    ``topic`` and ``docno`` are arrays of UTF-8 bytes (numpy ``S`` dtype; ids compared byte by
    byte, as gdeval.pl and trec_eval compare them); ``rank`` and ``score`` arrays; ``name`` the
    run's :func:`run_name`. ``keys`` are the (topic, docno) pairs' keys under seed 0
    (:func:`lgb_risk._pair_keys.pair_keys`) where the reader computed them to find a repeated
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
    for number, fields in _lines(path):
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


@dataclass(frozen=True)
class LetorData:
    """A learning-to-rank dataset: documents of each query contiguous, queries in file order.

    Attributes
    ----------
    X : scipy.sparse.csr_matrix, shape (n_documents, n_features)
        Column ``f - 1`` holds feature ``f`` (LETOR numbers features from 1).
    y : ndarray of int64
        Relevance labels.
    qid : ndarray of int64, shape (n_documents,)
        Query id of every document.
    query_ids : ndarray of int64, shape (n_queries,)
        Query ids in order, one per query.
    group : ndarray of int64, shape (n_queries,)
        Query sizes (LightGBM's ``group``).
    docids : ndarray of str or None
        Document ids from trailing ``# docid = ...`` comments, where every line has one.
    """

    X: Any  # a scipy.sparse CSR matrix (or an array)
    y: np.ndarray
    qid: np.ndarray
    query_ids: np.ndarray
    group: np.ndarray
    docids: np.ndarray | None


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


def _data_lines(path):
    """Yield (line_number, text before any ``#``, comment) for every document line: not blank,
    not a comment-only line (as scikit-learn's SVMlight reader counts documents)."""
    for number, line in _text_lines(path):
        stripped = line.lstrip()
        if stripped and not stripped.startswith("#"):
            data, _, comment = line.partition("#")
            yield number, data, comment


def _document_line(path, index: int) -> int:
    """File line number of the document at 0-based ``index``."""
    for i, (number, _, _) in enumerate(_data_lines(path)):
        if i == index:
            return number
    raise IndexError(index)


def _first_bad_line(path, n_features):
    """Line-by-line check of an SVMlight/LETOR file: the first problem, as a message naming the
    line, or None."""
    for number, data, _ in _data_lines(path):
        tokens = data.split()
        where = f"{path}:{number}"
        try:
            float(tokens[0])
        except ValueError:
            return f"{where}: the label must be a number, got {tokens[0]!r}"
        previous = 0
        for token in tokens[1:]:
            name, sep, value = token.partition(":")
            if not sep:
                return f"{where}: expected INDEX:VALUE or qid:ID, got {token!r}"
            if name == "qid":
                if not value.lstrip("-").isdigit():
                    return f"{where}: qid must be a whole number, got {value!r}"
                continue
            if not name.isdigit() or int(name) < 1:
                return f"{where}: feature index must be a whole number >= 1, got {name!r}"
            index = int(name)
            if index <= previous:
                return (f"{where}: feature indices must increase along a line; {index} comes "
                        f"after {previous}")
            if n_features is not None and index > n_features:
                return (f"{where}: feature index {index} exceeds n_features={n_features} (the "
                        "width given for this data)")
            try:
                float(value)
            except ValueError:
                return f"{where}: feature {index} must be a number, got {value!r}"
            previous = index
    return None


def _per_document(path) -> tuple[np.ndarray, np.ndarray | None]:
    """Each document's ``qid:`` (the token after the label, as SVMlight has it) and comment
    docid, in one pass over the file (scikit-learn's reader collects query ids by appending to
    an array once per query, quadratic in the number of queries).

    Query ids: empty where no document has one; a file where only some do, or with a query id
    that is not a whole number, is refused naming the line. Docids: ``docid = X`` (LETOR 4.0)
    or the first token of each document's trailing comment; None where some document has none.
    """
    ids: list[int] = []
    docids: list[str] | None = []
    without = None
    for number, data, comment in _data_lines(path):
        parts = data.split(None, 2)
        if len(parts) > 1 and parts[1].startswith("qid:"):
            try:
                ids.append(int(parts[1][4:]))
            except ValueError:
                raise ValueError(f"{path}:{number}: query id {parts[1][4:]!r} is not a whole "
                                 "number") from None
        elif without is None:
            without = number
        if ids and without is not None:
            raise ValueError(f"{path}:{without}: this document has no qid: field, the file's "
                             "others do; every document needs its query id")
        if docids is not None:
            tokens = comment.split()
            if "docid" in tokens:
                tokens = tokens[tokens.index("docid") + 1:]
                if tokens[:1] == ["="]:
                    tokens = tokens[1:]
            if tokens:
                docids.append(tokens[0])
            else:
                docids = None
    return np.array(ids, dtype=np.int64), None if docids is None else np.array(docids)


def _query_sizes(query_file: Path, n_documents: int) -> np.ndarray:
    """LightGBM's ``.query`` file: one positive query size per line, adding up to the data."""
    sizes = []
    for number, fields in _lines(query_file):
        if len(fields) != 1 or not fields[0].isdigit() or int(fields[0]) < 1:
            raise ValueError(f"{query_file}:{number}: expected one query size (a whole number "
                             f">= 1), got {' '.join(fields)!r}")
        sizes.append(int(fields[0]))
    group = np.array(sizes, dtype=np.int64)
    if group.sum() != n_documents:
        raise ValueError(f"{query_file}: query sizes add up to {int(group.sum())}, the data "
                         f"file has {n_documents} documents")
    return group


#: A file whose widest feature index is this many times the next widest is suspect.
_WIDTH_JUMP = 10


def _check_width(p: Path, X, n_features) -> None:
    """Refuse, naming the line, a matrix that one stray feature index makes implausibly wide
    (LightGBM would allocate for every column): the caller accepts it by giving n_features."""
    if n_features is not None or X.shape[1] <= 1000:
        return
    used = np.unique(X.indices)
    if used.size > 1 and used[-1] + 1 > _WIDTH_JUMP * (used[-2] + 1):
        row = int(np.searchsorted(X.indptr, np.flatnonzero(X.indices == used[-1])[0],
                                  side="right") - 1)
        raise ValueError(
            f"{p}:{_document_line(p, row)}: feature index {int(used[-1]) + 1} is more than "
            f"{_WIDTH_JUMP} times any other in the file (next: {int(used[-2]) + 1}): a stray "
            f"index would give the matrix {X.shape[1]} columns. If the file's features do run "
            f"that far, pass n_features={X.shape[1]}; to drop the index, fix the line")


def load_letor(path: str | os.PathLike, *, n_features: int | None = None) -> LetorData:
    """Read an SVMlight/LETOR file (``label qid:Q 1:v 2:v ... # comment``) for ranking.

    Files without ``qid:`` are read with LightGBM's ``PATH.query`` file of query sizes beside
    them (LightGBM's examples); their query ids are then 0, 1, .... Blank lines and lines that
    are only a comment are not documents. NaN feature values are kept (LightGBM's missing
    value); infinite ones are refused.

    Parameters
    ----------
    path : str or Path
    n_features : int, optional
        Number of feature columns (to give train and test files the same width); a feature index
        beyond it is an error. Without it, an index that makes the matrix implausibly wide (ten
        times any other index of the file) draws a warning naming its line.

    Raises
    ------
    ValueError
        Naming the file and line: a malformed line, a label that is not a whole number >= 0, an
        infinite feature value, a document without ``qid:`` in a file that has them, a query
        whose documents are not contiguous; also an empty file, or a file with neither ``qid:``
        nor a valid ``.query`` file.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "tiny.txt"
    >>> _ = path.write_text("2 qid:7 1:0.5 2:1 # docid = a\\n0 qid:7 1:0.1 # docid = b\\n")
    >>> data = load_letor(path)
    >>> data.X.shape, data.group.tolist(), data.docids.tolist()
    ((2, 2), [2], ['a', 'b'])
    """
    from sklearn.datasets import load_svmlight_file

    p = Path(path)
    if not p.is_file():
        raise FileNotFoundError(f"no such file: {p}")
    try:
        X, y = load_svmlight_file(str(p), n_features=n_features, zero_based=False)
    except (ValueError, UnicodeDecodeError) as exc:
        problem = _first_bad_line(p, n_features)
        raise ValueError(problem or f"{p}: not a valid SVMlight/LETOR file: {exc}") from None
    labels = np.asarray(y)
    if labels.size == 0:
        raise ValueError(f"{p}: no document in the file (it is empty or holds only comments)")
    bad = np.flatnonzero((labels != np.round(labels)) | (labels < 0))
    if bad.size:
        raise ValueError(f"{p}:{_document_line(p, int(bad[0]))}: label {float(labels[bad[0]])}; "
                         "expected a whole number >= 0")
    infinite = np.flatnonzero(np.isinf(X.data))
    if infinite.size:
        row = int(np.searchsorted(X.indptr, infinite[0], side="right") - 1)
        raise ValueError(f"{p}:{_document_line(p, row)}: feature {int(X.indices[infinite[0]]) + 1} "
                         "is infinite; features must be finite numbers (NaN marks a missing "
                         "value)")
    _check_width(p, X, n_features)
    qid, docids = _per_document(p)
    query_file = Path(str(p) + ".query")
    if qid.size == 0:
        if not query_file.is_file():
            raise ValueError(f"{p} has no qid: fields and there is no {query_file.name} beside it "
                             "to give the query sizes")
        group = _query_sizes(query_file, labels.size)
        query_ids = np.arange(group.size, dtype=np.int64)
        qid = np.repeat(query_ids, group)
    else:
        starts = np.flatnonzero(np.r_[True, qid[1:] != qid[:-1]])
        query_ids = qid[starts]
        uniq, first = np.unique(query_ids, return_index=True)
        if uniq.size != query_ids.size:
            seen = np.zeros(query_ids.size, dtype=bool)
            seen[first] = True
            again = int(np.flatnonzero(~seen)[0])
            raise ValueError(f"{p}:{_document_line(p, int(starts[again]))}: the documents of "
                             f"query {int(query_ids[again])} are not contiguous (it starts again "
                             "here); sort the file by query")
        group = np.diff(np.r_[starts, qid.size]).astype(np.int64)
    return LetorData(X=X.tocsr(), y=labels.astype(np.int64), qid=qid, query_ids=query_ids,
                     group=group, docids=docids)


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
    first: list[str] = next(_lines(path), (0, []))[1]
    if len(first) == 6 and first[1] == "Q0":
        if pool.docids is None:
            raise ValueError(f"{path} is a TREC run, but the pool file has no document ids "
                             "(comments '# docid = ...') to match it with")
        run = read_run(path)
        scores = dict(zip(zip(run["topic"], run["docno"]), run["score"]))
        return np.array([scores.get((str(q), str(d)), np.nan)
                         for q, d in zip(pool.qid, pool.docids)], dtype=np.float64)
    values = []
    for number, fields in _lines(path):
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
        raise ValueError(f"{path}: header must be 'system,topic,score' or 'run,topic,MEASURE,...' "
                         f"(lgb-risk evaluate --per-topic), got {','.join(columns)!r}")
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
