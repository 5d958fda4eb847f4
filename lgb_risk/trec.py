"""Evaluation of TREC runs against qrels by the conventions of a named tool (gdeval.pl's default).

Every convention (:mod:`lgb_risk.conventions`) shares what both TREC tools do:

* documents are ranked by score descending, ties broken by DOCNO descending (byte order), scores
  rounded to float32 first where the tool keeps them so (trec_eval);
* judged grades below 0 (spam, −2) count as 0, unjudged documents count as 0;
* the ideal DCG and R_q (AP, recall, R-precision) come from the qrels' grades, not only from the
  documents the run retrieved.

and the convention decides the rest: which topics are scored (gdeval: those with a relevant
document; trec_eval: every judged topic, a topic without a relevant document scoring 0), what a
topic the run lacks counts (left out by default; 0 with ``missing_topics="zero"``, the tools'
``-c``), the gain (gdeval ``2**g − 1``, trec_eval ``g``) and the discount. ERR uses l_max =
``max_label`` (4 for TREC Web).

:func:`evaluate_run` takes and returns DataFrames; :func:`evaluate_columns` is the same evaluation
on :func:`lgb_risk.data.read_run_columns`' columns, without pandas (what ``lgb-risk evaluate``
uses). The tables made from several runs' results (:func:`summary_table`, :func:`per_topic_frame`,
:class:`RunSummary`) are written in :mod:`lgb_risk.summary` and read from here.
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np

from lgb_risk import measures as registry
from lgb_risk import summary
from lgb_risk._files.pair_keys import (
    SEEDS,
    KeyIndex,
    first_repeat,
    key_index,
    pair_keys,
    repeats_a_key,
    rows_of,
)
from lgb_risk._inputs.validation import check_choice
from lgb_risk._runtime.forked import map_in_forks
from lgb_risk._runtime.machine import usable_cores
from lgb_risk.conventions import resolve
from lgb_risk.data import QrelsColumns, RunColumns, read_qrels_columns, read_run_columns, run_name
from lgb_risk.risk import DEFAULT_ALPHAS
from lgb_risk.summary import *  # noqa: F403 (its __all__ is this module's too)
from lgb_risk.summary import (
    RunSummary,
    natural_topic_order,
)

if TYPE_CHECKING:
    from collections.abc import Sequence

    import pandas as pd

    from lgb_risk._inputs.type_aliases import ConventionLike
    from lgb_risk.baselines import BaselineStore
    from lgb_risk.conventions import Convention

__all__ = ["evaluate_run", "evaluate_columns", "evaluate_files", "evaluate_runs", "summarise",
           "named_runs", "PartialRunsWarning", "partial_runs_rule", "baseline_store",
           "Judgments", "judgments", "TopicValues", "scored_topics", "automatic_jobs"]
__all__ += summary.__all__  # the tables of several evaluated runs


class Judgments(NamedTuple):
    """Qrels prepared for evaluating many runs.

    Row i of ``topic``, ``docno`` and ``grade`` is the qrels' i-th judgment: topic, document id
    (UTF-8 bytes) and grade as given. A negative grade (spam, or trec_eval's "in the pool but not
    judged") counts as 0 in every measure, and bpref leaves its document out. ``by_key`` finds a
    judgment's row by the key of its pair (:mod:`lgb_risk._files.pair_keys` under ``seed``; no two
    judgments share one). ``pool`` maps each topic to its grades, negative ones as 0, sorted
    descending (for IDCG and R_q); ``negative`` counts each topic's negative grades;
    ``relevant`` is the set of topics with a grade > 0.
    """

    topic: np.ndarray
    docno: np.ndarray
    grade: np.ndarray
    seed: int
    by_key: KeyIndex
    pool: dict
    relevant: set
    negative: dict


def judgments(qrels: QrelsColumns) -> Judgments:
    """:class:`Judgments` from :func:`lgb_risk.data.read_qrels_columns`' columns.

    >>> from lgb_risk.data import QrelsColumns
    >>> qrels = QrelsColumns([b"1", b"1", b"2"], [b"a", b"b", b"c"], np.array([2, -2, 0]))
    >>> judged = judgments(qrels)
    >>> judged.pool[b"1"].tolist(), judged.negative, sorted(judged.relevant)  # spam (-2) as 0
    ([2, 0], {b'1': 1}, [b'1'])
    """
    topic = np.asarray(qrels.topic, dtype=bytes)
    docno = np.asarray(qrels.docno, dtype=bytes)
    grade = np.asarray(qrels.grade, dtype=np.int64)
    for seed in range(SEEDS):
        given = qrels.keys if seed == 0 else None  # the reader's, where it kept them
        keys = given if given is not None and given.shape == topic.shape else pair_keys(
            topic, docno, seed)
        index = key_index(keys)
        if index is not None:
            break
        if seed == 0:
            _refuse_repeated_judgments(topic, docno)
    else:
        raise RuntimeError(f"no two of {docno.size} judgments should share a key, yet they did "
                           f"under {SEEDS} seeds; please report this qrels")
    names, code = np.unique(topic, return_inverse=True)
    by_topic = np.argsort(code, kind="stable")
    bounds = np.searchsorted(code[by_topic], np.arange(names.size + 1))
    pool, negative = {}, {}
    for c, t in enumerate(names.tolist()):
        given = grade[by_topic[bounds[c]:bounds[c + 1]]]
        pool[t] = np.sort(np.maximum(given, 0))[::-1]
        if np.any(given < 0):
            negative[t] = int(np.sum(given < 0))
    return Judgments(topic, docno, grade, seed, index, pool,
                     {t for t, v in pool.items() if v[0] > 0}, negative)


def _refuse_repeated_judgments(topic: np.ndarray, docno: np.ndarray) -> None:
    """Two judgments of one document for one topic (possible in memory; a file's reader refuses
    them naming the lines) are an error naming both."""
    repeat = first_repeat(topic, docno)
    if repeat is not None:
        i, j = repeat
        raise ValueError(f"the qrels judge document {docno[j].decode()!r} for topic "
                         f"{topic[j].decode()!r} twice (judgments {i} and {j}, counting from 0); "
                         "give each document one grade per topic")


#: The grade of a run's document that the qrels do not judge, until it is set to 0.
_UNJUDGED = -(1 << 62)


def _grades_of(judged: Judgments, run: RunColumns, topic: np.ndarray,
               docno: np.ndarray) -> np.ndarray:
    """Each line's judged grade, :data:`_UNJUDGED` where the qrels do not judge its document.
    Keys (the reader's, where it kept them) find the candidate judgment; topic and id confirm
    it."""
    keys = run.keys
    if judged.seed != 0 or keys is None or keys.shape != topic.shape:
        keys = pair_keys(topic, docno, judged.seed)
    row = rows_of(keys, judged.by_key)
    found = np.flatnonzero(row >= 0)
    found = found[(judged.topic[row[found]] == topic[found])
                  & (judged.docno[row[found]] == docno[found])]
    grade = np.full(topic.size, _UNJUDGED, dtype=np.int64)
    grade[found] = judged.grade[row[found]]
    return grade


def scored_topics(judged: Judgments, convention: ConventionLike = "gdeval") -> list[str]:
    """The qrels' topics a convention scores, in natural order: with a grade > 0
    (``topics="relevant"``) or every judged topic (``"judged"``).

    >>> from lgb_risk.data import QrelsColumns
    >>> judged = judgments(QrelsColumns([b"1", b"2"], [b"a", b"c"], np.array([2, 0])))
    >>> scored_topics(judged, "gdeval"), scored_topics(judged, "trec_eval")
    (['1'], ['1', '2'])
    """
    conv = resolve(convention)
    topics = judged.pool if conv.topics == "judged" else judged.relevant
    return natural_topic_order(t.decode() for t in topics)


class TopicValues(NamedTuple):
    """Per-topic values of one run: ``values[measure][i]`` belongs to ``topics[i]``;
    ``missing`` lists the scored topics the run lacks (scored 0 or left out, as asked);
    ``unscored`` the run's topics the convention does not score (absent from the qrels, or
    without a relevant document where that is the rule)."""

    topics: list
    values: dict
    missing: list
    unscored: list


def _rank_order(code: np.ndarray, score: np.ndarray) -> np.ndarray:
    """Documents by topic code, then score descending: the identity where the run file lists
    them so already (as TREC runs do), a sort otherwise. Ties are left in file order."""
    same_topic = code[1:] == code[:-1]
    if np.all(code[1:] >= code[:-1]) and np.all(~same_topic | (score[1:] <= score[:-1])):
        return np.arange(code.size)
    return np.lexsort((-score, code))


def _break_ties_by_docno(order, code, score, docno, kept) -> None:
    """Reorder, in place, each block of ``order`` with equal (topic, score) by DOCNO descending,
    as trec_eval and gdeval break ties (``docno[kept[i]]`` is the id of document i)."""
    ranked_code, ranked_score = code[order], score[order]
    same = (ranked_code[1:] == ranked_code[:-1]) & (ranked_score[1:] == ranked_score[:-1])
    if not same.any():
        return
    in_block = np.zeros(order.size, dtype=bool)
    in_block[1:] |= same
    in_block[:-1] |= same
    slots = np.flatnonzero(in_block)  # positions of tied documents, in (topic, score) order
    members = order[slots]
    names = docno[kept[members]]
    docno_rank = np.empty(names.size, dtype=np.int64)  # byte order, as the tools compare
    docno_rank[np.argsort(names, kind="stable")] = np.arange(names.size)
    order[slots] = members[np.lexsort((-docno_rank, -score[members], code[members]))]


def evaluate_columns(judged: Judgments, run: RunColumns,
                     measures: Sequence[str] = ("ndcg@20", "err@20"), *,
                     convention: ConventionLike = "gdeval", max_label: int = 4,
                     missing_topics: str | None = None, **overrides: Any) -> TopicValues:
    """:func:`evaluate_run` on columns (:func:`judgments` of the qrels, and
    :func:`lgb_risk.data.read_run_columns`), returning :class:`TopicValues`.

    >>> from lgb_risk.data import QrelsColumns, RunColumns
    >>> judged = judgments(QrelsColumns([b"1", b"1"], [b"a", b"b"], np.array([2, 0])))
    >>> run = RunColumns([b"1", b"1"], [b"b", b"a"], np.array([1, 2]), np.array([0.9, 0.5]), "r")
    >>> result = evaluate_columns(judged, run, ["p@1", "rr"])
    >>> result.topics, {name: values.tolist() for name, values in result.values.items()}
    (['1'], {'p@1': [0.0], 'rr': [0.5]})
    """
    specs = [registry.parse(m) for m in measures]
    conv = resolve(convention, missing_topics=missing_topics, **overrides)
    scored = scored_topics(judged, conv)
    topic = np.asarray(run.topic, dtype=bytes)
    n = topic.size
    edges = [0, *(np.flatnonzero(topic[1:] != topic[:-1]) + 1).tolist(), n] if n else [0]
    block_topic = topic[edges[:-1]].tolist()  # one entry per block of lines of one topic
    in_run = {t.decode() for t in set(block_topic)}
    topics = [t for t in scored if t in in_run]
    missing = [t for t in scored if t not in in_run]
    unscored = natural_topic_order(in_run.difference(scored))
    if not topics:
        raise ValueError(f"run {run.name!r} has no topic that the qrels "
                         f"{'judge' if conv.topics == 'judged' else 'give a relevant document'}")
    encoded = [t.encode() for t in topics]
    code_of = {t: i for i, t in enumerate(encoded)}
    code = np.repeat([code_of.get(t, -1) for t in block_topic], np.diff(edges))
    kept = np.flatnonzero(code >= 0)
    docno = np.asarray(run.docno, dtype=bytes)
    code, grade = code[kept], _grades_of(judged, run, topic, docno)[kept]
    is_judged = grade >= 0  # neither unjudged nor of negative grade: bpref leaves those out
    np.maximum(grade, 0, out=grade)  # and every measure counts them as 0
    score = np.asarray(run.score, dtype=np.float64)[kept]
    if conv.score_dtype == "float32":
        score = score.astype(np.float32).astype(np.float64)
    order = _rank_order(code, score)
    _break_ties_by_docno(order, code, score, docno, kept)
    labels = grade[order]
    pool = [judged.pool[t] for t in encoded]
    lists = registry.Judged(
        labels=labels, scores=None, group=np.bincount(code, minlength=len(topics)),
        pool_labels=np.concatenate(pool), pool_group=np.array([p.size for p in pool]),
        max_label=max_label, pool_sorted=True, judged=is_judged[order],
        pool_unjudged=np.array([judged.negative.get(t, 0) for t in encoded]))
    values = {spec.text: spec.compute(lists, conv) for spec in specs}
    if missing and conv.missing_topics == "zero":
        every = natural_topic_order([*topics, *missing])
        position = {t: i for i, t in enumerate(every)}
        for text, got in values.items():
            filled = np.zeros(len(every))
            filled[[position[t] for t in topics]] = got
            values[text] = filled
        topics = every
    return TopicValues(topics, values, missing, unscored)


def evaluate_run(qrels: Any, run: Any, measures: Sequence[str] = ("ndcg@20", "err@20"), *,
                 convention: ConventionLike = "gdeval", max_label: int = 4,
                 missing_topics: str | None = None, **overrides: Any) -> pd.DataFrame:
    """Per-topic effectiveness of one run.

    Parameters
    ----------
    qrels : DataFrame, mapping, ranx Qrels or ir_measures Qrels
        As returned by :func:`lgb_risk.data.read_qrels` (``topic``, ``docno``, ``grade``), or
        another tool's judgments in memory (:func:`lgb_risk.data.as_qrels`: PyTerrier's and
        ir_measures' frames, ``{topic: {docno: grade}}`` as pytrec_eval takes them, ranx).
    run : DataFrame, mapping, ranx Run or ir_measures ScoredDocs
        As returned by :func:`lgb_risk.data.read_run` (``topic``, ``docno``, ``score``), or
        another tool's run in memory (:func:`lgb_risk.data.as_run`).
    measures : sequence of str
        Registered measures (:mod:`lgb_risk.measures`), e.g. ``ndcg@20``, ``p@10``, ``ap``.
    convention : str
        A tool's conventions (:mod:`lgb_risk.conventions`); default ``"gdeval"``.
    max_label : int
        l_max of ERR (4 for TREC Web). A qrels grade above it is an error when ERR is asked.
    missing_topics : {"skip", "zero"}, optional
        Overrides the convention: a scored topic the run has no ranking for is left out, or
        scores 0 on every measure.
    **overrides
        Single choices overriding the convention (``label_gain="exponential"``, ...).

    Returns
    -------
    DataFrame
        Index ``topic`` (natural order), one column per measure, in the order given;
        ``attrs["missing_topics"]`` lists the scored topics the run lacks (scored 0 or left out
        as the convention says), ``attrs["unscored_topics"]`` the run's topics the convention
        does not score.

    Raises
    ------
    ValueError
        An unknown measure, or a run with no topic the convention scores.

    Examples
    --------
    >>> import pandas as pd
    >>> qrels = pd.DataFrame({"topic": ["1", "1", "2"], "docno": ["a", "b", "c"],
    ...                       "grade": [2, 0, 1]})
    >>> run = pd.DataFrame({"topic": ["1", "1", "2"], "docno": ["a", "b", "c"],
    ...                     "score": [0.5, 0.9, 0.3]})
    >>> evaluate_run(qrels, run, ["ndcg@10", "p@1", "rr"]).round(4).to_dict("index")
    {'1': {'ndcg@10': 0.6309, 'p@1': 0.0, 'rr': 0.5}, '2': {'ndcg@10': 1.0, 'p@1': 1.0, 'rr': 1.0}}
    """
    import pandas as pd

    result = evaluate_columns(_judgments_of(qrels), _columns_of(run), measures,
                              convention=convention, max_label=max_label,
                              missing_topics=missing_topics, **overrides)
    frame = pd.DataFrame(result.values, index=pd.Index(result.topics, name="topic"))
    frame.attrs["missing_topics"] = result.missing
    frame.attrs["unscored_topics"] = result.unscored
    return frame


def _encoded(column) -> list[bytes]:
    """Topics or document ids (a frame's column) as UTF-8 bytes. Read as one numpy array of
    objects first: iterating a pandas (Arrow) string column value by value is far slower."""
    values = column.to_numpy(dtype=object) if hasattr(column, "to_numpy") else column
    return [v.encode() if isinstance(v, str) else str(v).encode() for v in values]


def _judgments_of(qrels: Any) -> Judgments:
    """Judgments of a qrels file (a path) or of judgments in memory (:func:`as_qrels`)."""
    from lgb_risk.data import as_qrels

    if isinstance(qrels, (str, os.PathLike)):
        return judgments(read_qrels_columns(qrels))
    frame = as_qrels(qrels)
    return judgments(QrelsColumns(np.array(_encoded(frame["topic"])),
                                  np.array(_encoded(frame["docno"])),
                                  frame["grade"].to_numpy(dtype=np.int64)))


def _columns_of(run: Any, name: str = "") -> RunColumns:
    """The columns of a run file (a path) or of a run in memory (:func:`as_run`)."""
    from lgb_risk.data import as_run

    if isinstance(run, (str, os.PathLike)):
        return read_run_columns(run)
    frame = as_run(run)
    topic, docno = np.array(_encoded(frame["topic"])), np.array(_encoded(frame["docno"]))
    if topic.size and repeats_a_key(pair_keys(topic, docno)):
        repeat = first_repeat(topic, docno)
        if repeat is not None:  # equal keys of two different pairs are no repeat
            i, j = repeat
            raise ValueError(f"document {docno[j].decode()!r} is listed twice for topic "
                             f"{topic[j].decode()!r} (rows {i} and {j} of the run, counting "
                             "from 0); a run ranks each document once per topic")
    return RunColumns(topic, docno,
                      frame["rank"].to_numpy() if "rank" in frame else np.zeros(len(frame)),
                      frame["score"].to_numpy(dtype=np.float64),
                      name or frame.attrs.get("name", ""))


def evaluate_runs(qrels: Any, runs: Mapping[str, Any] | Sequence[str | os.PathLike],
                  measures: Sequence[str] = ("ndcg@20", "err@20"), *,
                  convention: ConventionLike = "gdeval", max_label: int = 4,
                  **overrides: Any) -> dict:
    """Evaluate named runs, each a file or a run in memory, against qrels (a file or judgments
    in memory): ``{name: TopicValues}``, as :func:`evaluate_files` gives for files.

    A run in memory is any form :func:`lgb_risk.data.as_run` reads (this library's frame,
    PyTerrier's result frame, ir_measures' and ranx's runs, a ``{topic: {docno: score}}``
    dict); qrels likewise (:func:`lgb_risk.data.as_qrels`). Options as :func:`evaluate_run`.
    The error for a bad run names it.

    >>> qrels = {"1": {"a": 2, "b": 0}, "2": {"c": 1, "d": 0}}
    >>> runs = {"first": {"1": {"a": 0.9, "b": 0.5}, "2": {"c": 0.1, "d": 0.4}},
    ...         "second": {"1": {"b": 0.9, "a": 0.5}, "2": {"c": 0.9, "d": 0.4}}}
    >>> results = evaluate_runs(qrels, runs, ["p@1"])
    >>> {name: result.values["p@1"].tolist() for name, result in results.items()}
    {'first': [1.0, 0.0], 'second': [0.0, 1.0]}
    """
    for m in measures:
        registry.parse(m)
    runs = named_runs(runs)
    conv = resolve(convention, **overrides)
    judged = _judgments_of(qrels)
    results = {}
    for name, run in runs.items():
        try:
            columns = _columns_of(run, str(name))  # held until the next is read: see
            results[str(name)] = evaluate_columns(  # evaluate_files
                judged, columns, measures, convention=conv, max_label=max_label)
        except ValueError as error:
            raise ValueError(f"run {name!r}: {error}") from None
    return results


def named_runs(runs: Mapping[Any, Any] | Sequence[str | os.PathLike]) -> Mapping[Any, Any]:
    """The runs by name: a mapping as it is; a list of run files named by
    :func:`lgb_risk.data.run_name` (the file's name without its extension), as the command
    line names them. Runs are named by ``str(name)`` in every table, so two names with one
    text (``1`` and ``"1"``, two files ``a/run.txt`` and ``b/run.txt``) are refused.

    >>> list(named_runs(["runs/bm25.txt", "runs/mine.txt"]))
    ['bm25', 'mine']
    """
    if not isinstance(runs, Mapping):
        if isinstance(runs, (str, os.PathLike)) or not all(
                isinstance(run, (str, os.PathLike)) for run in runs):
            raise TypeError("runs must be a mapping {name: run}, or a list of run files "
                            f"(named by their file names), got {type(runs).__name__}")
        files = [Path(run) for run in runs]
        runs = {}
        for path in files:
            if run_name(path) in runs:
                raise ValueError(f"runs {str(runs[run_name(path)])!r} and {str(path)!r} both "
                                 f"have the name {run_name(path)!r} (runs are named by file "
                                 "name without extension); rename one, or give a mapping "
                                 "{name: file}")
            runs[run_name(path)] = path
    seen: dict[str, Any] = {}
    for name in runs:
        text = str(name)
        if text in seen:
            raise ValueError(f"runs {seen[text]!r} and {name!r} both have the name {text!r} in "
                             "the tables (run names are written as text); rename one")
        seen[text] = name
    return runs


def summarise(qrels: Any, runs: Mapping[str, Any] | Sequence[str | os.PathLike],
              measures: Sequence[str] = ("ndcg@20", "err@20"), *,
              baseline: str | None = None, alphas: Sequence[float] = DEFAULT_ALPHAS,
              layout: str = "wide", correction: str | None = None, loss_fraction: float = 0.2,
              test: str = "t", convention: ConventionLike = "gdeval", max_label: int = 4,
              **overrides: Any) -> RunSummary:
    """Evaluate named runs — files, or runs held by ranx, ir_measures, pytrec_eval or
    PyTerrier — and summarise them in one call, as ``lgb-risk evaluate`` does for files: the
    :func:`summary_table` (means, risk measures against the runs and against ``baseline``, one
    of the names, with ``correction``), and, from the returned :class:`RunSummary`, its figures
    and its LaTeX. ``runs`` is a mapping of names to runs, or a list of run files named as the
    command line names them (:func:`named_runs`); ``alpha=`` is taken for ``alphas=``, the
    command line's ``--alpha``.

    >>> qrels = {"1": {"a": 2, "b": 0}, "2": {"c": 1, "d": 0}, "3": {"e": 1, "f": 0}}
    >>> runs = {"bm25": {"1": {"a": 0.9, "b": 0.5}, "2": {"c": 0.1, "d": 0.4},
    ...                  "3": {"e": 0.3, "f": 0.2}},
    ...         "mine": {"1": {"a": 0.9, "b": 0.5}, "2": {"c": 0.9, "d": 0.4},
    ...                  "3": {"e": 0.1, "f": 0.2}}}
    >>> summary = summarise(qrels, runs, ["p@1"], baseline="bm25", alphas=[0])
    >>> summary.frame()[["run", "p@1", "p@1_wins_a0", "p@1_losses_a0"]].round(4).values.tolist()
    [['bm25', 0.6667, nan, nan], ['mine', 0.6667, 1.0, 1.0]]
    """
    if "alpha" in overrides:  # the command line's name, --alpha
        alpha = overrides.pop("alpha")
        if alphas is not DEFAULT_ALPHAS:
            raise TypeError("give alphas= or alpha= (its name on the command line), not both")
        alphas = list(alpha) if isinstance(alpha, (list, tuple, np.ndarray)) else [alpha]
    if isinstance(measures, str):  # one measure, as the command line's --measures ndcg@20
        measures = [measures]
    if not measures:
        raise ValueError("measures is empty: give at least one, e.g. ['ndcg@20', 'err@20']")
    runs = named_runs(runs)
    names = [str(n) for n in runs]
    if baseline is not None and baseline not in names:
        raise ValueError(f"baseline {baseline!r} is not among the runs {', '.join(names)}")
    check_choice(layout, "layout", ("wide", "long"))
    conv = resolve(convention, **overrides)
    results = evaluate_runs(qrels, runs, measures, convention=conv, max_label=max_label)
    summary = RunSummary(results, measures, baseline=baseline, alphas=alphas,
                         correction=correction, loss_fraction=loss_fraction, test=test,
                         layout=layout, partial_runs=partial_runs_rule(conv))
    for note in summary.notes:
        warnings.warn(note, PartialRunsWarning, stacklevel=2)
    return summary


class PartialRunsWarning(UserWarning):
    """Runs lack topics that others have: their risk measures follow gdeval.pl's rule."""


def partial_runs_rule(convention: Convention) -> str:
    """How the summary treats runs that lack topics under ``convention``: gdeval.pl's rule
    (each run over its own topics, the baseline 0 where it lacks one) where the convention is
    gdeval's and missing topics are left out; refused under every other convention, whose tool
    does not define the case."""
    return "gdeval" if (convention.name == "gdeval"
                        and convention.missing_topics == "skip") else "refuse"


#: Below this many bytes of runs in all, one process evaluates them faster than several start.
PARALLEL_FROM_BYTES = 4_000_000


def automatic_jobs(run_paths: Sequence[str | os.PathLike]) -> int:
    """Processes for evaluating these runs: one per usable CPU core, at most one per run, and 1
    when the runs total less than :data:`PARALLEL_FROM_BYTES` (or a path is not a file)."""
    paths = [Path(p) for p in run_paths]
    if not all(p.is_file() for p in paths):
        return 1
    if sum(p.stat().st_size for p in paths) < PARALLEL_FROM_BYTES:
        return 1
    return max(1, min(usable_cores(), len(paths)))


def evaluate_files(qrels_path: str | os.PathLike, run_paths: Sequence[str | os.PathLike],
                   measures: Sequence[str] = ("ndcg@20", "err@20"), *,
                   convention: ConventionLike = "gdeval", max_label: int = 4, jobs: int | None = 1,
                   **overrides: Any) -> dict:
    """Evaluate TREC run files against a qrels file: ``{run name: TopicValues}``.

    Runs are named by :func:`lgb_risk.data.run_name` (two runs may not share a name);
    ``jobs > 1`` reads and evaluates them in that many processes, this one and ``jobs - 1``
    forked copies of it, each with a share of the runs balanced by file size (on platforms
    without ``os.fork``, such as Windows, in this process only); ``jobs=None`` in
    :func:`automatic_jobs` processes. Results do not depend on ``jobs``, nor does the error
    raised for bad input: it is the first bad run's, in the order given. Options as
    :func:`evaluate_run`.
    """
    for m in measures:
        registry.parse(m)
    conv = resolve(convention, **overrides)
    paths = [Path(p) for p in run_paths]
    names = [run_name(p) for p in paths]
    duplicated = {n for n in names if names.count(n) > 1}
    if duplicated:
        raise ValueError(f"two runs share the name {sorted(duplicated)[0]!r} (runs are named by "
                         "file name without extension); rename one")
    judged = judgments(read_qrels_columns(qrels_path))

    def evaluate_share(share: list[str]) -> list[TopicValues | Exception]:
        """The share's results in order, up to its first bad run, whose error ends the list:
        these errors are raised below in the order of the runs, not of the processes. Any
        other failure is raised at once."""
        results: list[TopicValues | Exception] = []
        for path in share:
            try:
                # held until the next run is read: the allocator then reuses its memory for
                # that run instead of returning it to the system and faulting it in again
                columns = read_run_columns(path)
                results.append(evaluate_columns(judged, columns, measures, convention=conv,
                                                max_label=max_label))
            except (OSError, ValueError) as error:  # a bad or unreadable run
                results.append(error)
                break
        return results

    if jobs is None:
        jobs = automatic_jobs(paths)
    shares = _shares_by_size(paths, min(jobs, len(paths)))
    evaluated: dict[int, TopicValues | Exception] = {}
    share_paths = [[str(paths[i]) for i in share] for share in shares]
    for share, results in zip(shares, map_in_forks(evaluate_share, share_paths)):
        evaluated.update(zip(share, results))  # a share that failed ends at its failure
    for i in sorted(evaluated):  # every run before the first failure was evaluated
        result = evaluated[i]
        if isinstance(result, Exception):
            raise result
    return {name: evaluated[i] for i, name in enumerate(names)}


def _shares_by_size(paths: Sequence[Path], jobs: int) -> list[list[int]]:
    """The runs (indices into ``paths``) each of ``jobs`` processes evaluates, balanced by file
    size: the largest run next goes to the process with the fewest bytes so far. The first
    share is this process's: on an equal split it gets the smaller one, as it also gathers
    the others' results."""
    if jobs <= 1:
        return [list(range(len(paths)))]
    sizes = [p.stat().st_size if p.is_file() else 0 for p in paths]
    shares: list[list[int]] = [[] for _ in range(jobs)]
    load = [0] * jobs
    for i in sorted(range(len(paths)), key=lambda i: -sizes[i]):
        lightest = min(range(jobs), key=lambda j: (load[j], -j))
        shares[lightest].append(i)
        load[lightest] += sizes[i]
    return [sorted(share) for share in shares if share]


def baseline_store(qrels: Any, runs: dict, measure: str = "ndcg@10", *,
                   max_label: int = 4) -> BaselineStore:
    """Per-topic effectiveness of TREC runs as a :class:`~lgb_risk.baselines.BaselineStore`
    (gdeval.pl's conventions, as :func:`evaluate_run`), to train or evaluate against.

    ``runs`` maps names to run DataFrames (:func:`lgb_risk.data.read_run`); every run must rank
    every topic, and the measure must have a cut-off (``NAME@K``). ``max_label`` is the
    collection's highest grade, ERR's l_max unless the measure writes its own; the store's
    measure names it (``ERR(max_label=4)@20``), and its parameters and gain, so that an
    objective or a feval measuring another ERR or NDCG refuses it.
    """
    import pandas as pd

    from lgb_risk.baselines import BaselineStore

    spec = registry.parse(measure)
    if spec.k is None:
        raise ValueError(f"measure {measure!r}: a BaselineStore keeps a measure with a cut-off "
                         "(NAME@K)")
    table = pd.DataFrame({run: evaluate_run(qrels, frame, [measure], max_label=max_label)[measure]
                          for run, frame in runs.items()})
    if table.isna().any().any():
        missing = table.index[table.isna().any(axis=1)][0]
        raise ValueError(f"topic {missing!r} is not ranked by every run; a store needs every "
                         "baseline on every topic")
    # Named in full (ERR's l_max written in where the measure leaves it to the collection), so
    # that the store is compared by every choice that made its values.
    held = spec.with_unset("max_label", max_label).under("gdeval")
    return BaselineStore(table, held.written, spec.k, {run: {"source": "trec"} for run in runs})
