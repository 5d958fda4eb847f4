"""The LETOR/SVMlight reader (:func:`lgb_risk.data.load_letor`): a ranking dataset from
``label qid:Q 1:v 2:v ... # comment`` lines, every fault refused naming the file and line."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from lgb_risk._files.text import field_lines, text_lines

__all__ = ["LetorData", "load_letor"]

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


def _data_lines(path):
    """Yield (line_number, text before any ``#``, comment) for every document line: not blank,
    not a comment-only line (as scikit-learn's SVMlight reader counts documents)."""
    for number, line in text_lines(path):
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


_INT64_MIN, _INT64_MAX = int(np.iinfo(np.int64).min), int(np.iinfo(np.int64).max)


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
            if not _INT64_MIN <= ids[-1] <= _INT64_MAX:
                raise ValueError(f"{path}:{number}: query id {parts[1][4:]} is beyond the "
                                 "64-bit whole numbers that SVMlight's and LightGBM's readers "
                                 f"take ({_INT64_MIN} to {_INT64_MAX}); renumber the queries")
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
    for number, fields in field_lines(query_file):
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
