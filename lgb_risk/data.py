"""Readers for TREC run files and qrels, and for LETOR/SVMlight learning-to-rank files.

Every reader refuses malformed input with a :class:`ValueError` naming the file and the line.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pandas as pd

__all__ = ["read_run", "read_qrels", "run_name"]


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
            f"for topic {frame['topic'].iloc[i]!r} (first at line {first}); {what} must list each "
            "document once per topic"
        )


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
    topics, docnos, ranks, scores, numbers = [], [], [], [], []
    for number, f in _lines(path):
        if len(f) != 6:
            raise ValueError(f"{path}:{number}: expected 6 fields 'QID Q0 DOCNO RANK SCORE RUNID', "
                             f"found {len(f)}")
        try:
            score = float(f[4])
            rank = int(f[3])
        except ValueError:
            raise ValueError(f"{path}:{number}: RANK must be an integer and SCORE a number, got "
                             f"{f[3]!r} and {f[4]!r}") from None
        if not np.isfinite(score):
            raise ValueError(f"{path}:{number}: SCORE must be finite, got {f[4]!r}")
        topics.append(f[0])
        docnos.append(f[2])
        ranks.append(rank)
        scores.append(score)
        numbers.append(number)
    if not topics:
        raise ValueError(f"{path}: the run file has no line")
    frame = pd.DataFrame({"topic": topics, "docno": docnos,
                          "rank": np.array(ranks, dtype=np.int64),
                          "score": np.array(scores, dtype=np.float64)})
    _refuse_duplicates(frame, np.asarray(numbers), path, "a run")
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
    topics, docnos, grades, numbers = [], [], [], []
    for number, f in _lines(path):
        if len(f) != 4:
            raise ValueError(f"{path}:{number}: expected 4 fields 'QID ITERATION DOCNO GRADE', "
                             f"found {len(f)}")
        try:
            grade = int(f[3])
        except ValueError:
            raise ValueError(f"{path}:{number}: GRADE must be an integer, got {f[3]!r}") from None
        topics.append(f[0])
        docnos.append(f[2])
        grades.append(grade)
        numbers.append(number)
    if not topics:
        raise ValueError(f"{path}: the qrels file has no line")
    frame = pd.DataFrame({"topic": topics, "docno": docnos,
                          "grade": np.array(grades, dtype=np.int64)})
    _refuse_duplicates(frame, np.asarray(numbers), path, "qrels")
    return frame
