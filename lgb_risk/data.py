"""Readers for TREC run files and qrels, and for LETOR/SVMlight learning-to-rank files.

Every reader refuses malformed input with a :class:`ValueError` naming the file and the line.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

__all__ = ["read_run", "read_qrels", "run_name", "load_letor", "LetorData", "read_pool_scores"]


def run_name(path) -> str:
    """Name of a run: its file name without the last extension (``runs/rm_cata.txt`` → ``rm_cata``).

    TREC run files often carry the same RUNID in every file (the TREC 2012 baselines all say
    ``indri``), so runs are named by file.
    """
    return Path(path).stem if Path(path).suffix else Path(path).name


def _lines(path):
    """Yield (line_number, fields) for the non-blank lines of a text file."""
    p = os.fspath(path)
    if not os.path.isfile(p):
        raise FileNotFoundError(f"no such file: {p}")
    with open(p, encoding="utf-8") as fh:
        for number, line in enumerate(fh, start=1):
            fields = line.split()
            if fields:
                yield number, fields


def _refuse_duplicates(frame: pd.DataFrame, line_numbers: np.ndarray, path, what: str) -> None:
    dup = frame.duplicated(["topic", "docno"], keep="first").to_numpy()
    if dup.any():
        i = int(np.flatnonzero(dup)[0])
        first = int(line_numbers[(frame["topic"] == frame["topic"].iloc[i]).to_numpy()
                                 & (frame["docno"] == frame["docno"].iloc[i]).to_numpy()][0])
        raise ValueError(
            f"{path}:{int(line_numbers[i])}: document {frame['docno'].iloc[i]!r} appears again "
            f"for topic {frame['topic'].iloc[i]!r} (first at line {first}); a {what} file must "
            "list each document once per topic"
        )


def _finite_float(text: str) -> float:
    value = float(text)
    if not np.isfinite(value):
        raise ValueError
    return value


def _read_fields(path, layout: str, columns: dict, what: str) -> pd.DataFrame:
    """Parse a whitespace-separated TREC file into a DataFrame, refusing bad lines by number.

    ``layout`` names the fields (e.g. ``"QID Q0 DOCNO RANK SCORE RUNID"``); ``columns`` maps each
    output column to ``(field index, parser, what the field must be)``. Documents repeated within
    a topic are refused.
    """
    names = layout.split()
    values = {column: [] for column in columns}
    numbers = []
    for number, fields in _lines(path):
        if len(fields) != len(names):
            raise ValueError(f"{path}:{number}: expected {len(names)} fields '{layout}', found "
                             f"{len(fields)}")
        for column, (index, parse, expected) in columns.items():
            try:
                values[column].append(parse(fields[index]))
            except ValueError:
                raise ValueError(f"{path}:{number}: {names[index]} must be {expected}, got "
                                 f"{fields[index]!r}") from None
        numbers.append(number)
    if not numbers:
        raise ValueError(f"{path}: the {what} file has no line")
    frame = pd.DataFrame(values)
    _refuse_duplicates(frame, np.asarray(numbers), path, what)
    return frame


def read_run(path) -> pd.DataFrame:
    """Read a TREC run file (``QID Q0 DOCNO RANK SCORE RUNID`` per line).

    Returns
    -------
    DataFrame
        Columns ``topic`` (str), ``docno`` (str), ``rank`` (int), ``score`` (float), in file order;
        ``attrs["name"]`` holds :func:`run_name` of the path.

    Raises
    ------
    ValueError
        A line without six fields, a non-numeric or non-finite score, a non-integer rank, or a
        document repeated within a topic; the message names the file and line.
    """
    frame = _read_fields(path, "QID Q0 DOCNO RANK SCORE RUNID", {
        "topic": (0, str, "a topic id"), "docno": (2, str, "a document id"),
        "rank": (3, int, "an integer"), "score": (4, _finite_float, "a finite number")}, "run")
    frame.attrs["name"] = run_name(path)
    return frame


def read_qrels(path) -> pd.DataFrame:
    """Read a TREC qrels file (``QID ITERATION DOCNO GRADE`` per line).

    Returns
    -------
    DataFrame
        Columns ``topic`` (str), ``docno`` (str), ``grade`` (int, as judged: negative grades such as
        spam −2 are kept; evaluation decides how to count them).

    Raises
    ------
    ValueError
        A line without four fields, a non-integer grade, or a document judged twice for a topic.
    """
    return _read_fields(path, "QID ITERATION DOCNO GRADE", {
        "topic": (0, str, "a topic id"), "docno": (2, str, "a document id"),
        "grade": (3, int, "an integer")}, "qrels")


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

    X: object
    y: np.ndarray
    qid: np.ndarray
    query_ids: np.ndarray
    group: np.ndarray
    docids: np.ndarray | None


def _comment_docids(path) -> np.ndarray | None:
    """``docid = X`` (LETOR 4.0) or the first token of each trailing comment; None if absent."""
    ids = []
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            if not line.strip():
                continue
            _, sep, comment = line.partition("#")
            if not sep:
                return None
            tokens = comment.split()
            if "docid" in tokens:
                tokens = tokens[tokens.index("docid") + 1:]
                if tokens[:1] == ["="]:
                    tokens = tokens[1:]
            if not tokens:
                return None
            ids.append(tokens[0])
    return np.array(ids)


def load_letor(path, *, n_features=None) -> LetorData:
    """Read an SVMlight/LETOR file (``label qid:Q 1:v 2:v ... # comment``) for ranking.

    Files without ``qid:`` are read with LightGBM's ``PATH.query`` file of query sizes beside
    them (LightGBM's examples); their query ids are then 0, 1, ....

    Parameters
    ----------
    path : str or Path
    n_features : int, optional
        Number of feature columns (to give train and test files the same width).

    Raises
    ------
    ValueError
        A malformed line, a query whose documents are not contiguous (naming its id and the line
        where it reappears), a file with neither ``qid:`` nor a ``.query`` file.
    """
    from sklearn.datasets import load_svmlight_file

    p = Path(path)
    if not p.is_file():
        raise FileNotFoundError(f"no such file: {p}")
    try:
        X, y, qid = load_svmlight_file(str(p), n_features=n_features, zero_based=False,
                                       query_id=True)
    except ValueError as exc:
        raise ValueError(f"{p}: not a valid SVMlight/LETOR file: {exc}") from None
    labels = np.asarray(y)
    if np.any(labels != np.round(labels)) or np.any(labels < 0):
        i = int(np.flatnonzero((labels != np.round(labels)) | (labels < 0))[0])
        raise ValueError(f"{p}: document {i + 1} has label {float(labels[i])}; expected a whole "
                         "number >= 0")
    query_file = Path(str(p) + ".query")
    if np.all(qid == 0) and not _has_qid(p):
        if not query_file.is_file():
            raise ValueError(f"{p} has no qid: fields and there is no {query_file.name} beside it "
                             "to give the query sizes")
        group = np.loadtxt(query_file, dtype=np.int64, ndmin=1)
        if group.sum() != labels.size or np.any(group < 1):
            raise ValueError(f"{query_file}: query sizes add up to {int(group.sum())}, the data "
                             f"file has {labels.size} documents")
        query_ids = np.arange(group.size, dtype=np.int64)
        qid = np.repeat(query_ids, group)
    else:
        qid = np.asarray(qid, dtype=np.int64)
        starts = np.flatnonzero(np.r_[True, qid[1:] != qid[:-1]])
        query_ids = qid[starts]
        uniq, first = np.unique(query_ids, return_index=True)
        if uniq.size != query_ids.size:
            seen = np.zeros(query_ids.size, dtype=bool)
            seen[first] = True
            again = int(np.flatnonzero(~seen)[0])
            raise ValueError(f"{p}: the documents of query {int(query_ids[again])} are not "
                             f"contiguous (it starts again at document {int(starts[again]) + 1}); "
                             "sort the file by query")
        group = np.diff(np.r_[starts, qid.size]).astype(np.int64)
    return LetorData(X=X.tocsr(), y=labels.astype(np.int64), qid=qid, query_ids=query_ids,
                     group=group, docids=_comment_docids(p))


def _has_qid(path) -> bool:
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            if line.strip():
                return "qid:" in line
    return False


def read_pool_scores(path, pool: LetorData) -> np.ndarray:
    """A ranker's scores of a pool's documents, in the pool's document order.

    ``path`` holds one score per line (``nan`` for a document the ranking does not hold), as many
    lines as the pool has documents; or a TREC run (``QID Q0 DOCNO RANK SCORE RUNID``), matched to
    the pool by query id and the document ids of the pool file's comments, its documents the run
    lacks getting NaN.
    """
    first = next(_lines(path), (0, []))[1]
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
