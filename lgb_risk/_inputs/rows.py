"""What :class:`lgb_risk.sklearn.RiskRanker` reads from rows: each row's query (adjacent rows of
one query, scikit-learn's and XGBoost's ``qid``), features that are numbers, and a pandas
baseline taken in the rows' order; each refusal names the row or the column."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from lgb_risk._inputs.validation import is_number

if TYPE_CHECKING:
    from lgb_risk._inputs.type_aliases import ArrayLike

__all__ = ["queries_of_rows"]

def n_rows(features: Any) -> int:
    """The number of rows of an array, sparse matrix, DataFrame or list of rows."""
    shape = getattr(features, "shape", None)
    return int(shape[0]) if shape is not None else len(features)


def queries_of_rows(qid: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    """The query ids, in order of first row, and the query sizes (LightGBM's ``group``) of a
    query id per row; the rows of a query must be adjacent.

    Raises ValueError naming the first row that returns to a query seen before.

    >>> ids, group = queries_of_rows([7, 7, 3, 3, 3])
    >>> ids.tolist(), group.tolist()
    ([7, 3], [2, 3])
    """
    q = np.asarray(qid)
    if q.ndim != 1 or q.size == 0:
        raise ValueError(f"qid must hold one query id per row (1-D, not empty), got shape "
                         f"{q.shape}")
    if q.dtype.kind == "f" and np.isnan(q).any():
        raise ValueError(f"qid of row {int(np.flatnonzero(np.isnan(q))[0])} is NaN: every row "
                         "needs a query id")
    if q.dtype.kind == "O":
        import pandas as pd

        missing = np.flatnonzero(pd.isna(q))
        if missing.size:
            raise ValueError(f"qid of row {int(missing[0])} is {q[missing[0]]!r}: every row "
                             "needs a query id")
        kinds = {type(v).__name__: row for row, v in reversed(list(enumerate(q.tolist())))}
        if len({("number" if isinstance(v, (int, float, np.number)) and not isinstance(v, bool)
                 else type(v).__name__) for v in q.tolist()}) > 1:
            raise ValueError("qid mixes types (" + ", ".join(
                f"{kind} first at row {row}" for kind, row in sorted(kinds.items(),
                                                                     key=lambda kv: kv[1]))
                + "): give every query id the same type, e.g. all strings")
    starts = np.concatenate([[0], np.flatnonzero(q[1:] != q[:-1]) + 1])
    ids = q[starts]
    if np.unique(ids).size != ids.size:
        seen: dict = {}
        for position, start in enumerate(starts.tolist()):
            key = ids[position].item()
            if key in seen:
                raise ValueError(f"qid: row {start} returns to query {key!r}, whose rows ended "
                                 f"at row {seen[key]}; the rows of a query must be adjacent "
                                 "(sort the rows by query, e.g. with a stable argsort of qid)")
            end = starts[position + 1] - 1 if position + 1 < starts.size else q.size - 1
            seen[key] = int(end)
    return ids, np.diff(np.append(starts, q.size)).astype(np.int64)


def check_numeric_features(X, method: str) -> None:
    """Refuse a DataFrame column of strings or categories, naming it (scikit-learn's message
    names neither the column nor what to do)."""
    if not hasattr(X, "dtypes"):
        return
    for position, (name, dtype) in enumerate(X.dtypes.items()):
        if str(dtype) != "category" and (dtype.kind in "biuf" or (
                dtype.kind in "OSU" and all(is_number(v) for v in X[name]))):
            continue
        raise ValueError(
            f"RiskRanker.{method}: column {name!r} of X holds {dtype} values, not numbers: "
            "encode it as numbers; for LightGBM's categorical splits, integer codes (e.g. "
            f"X[{name!r}].astype('category').cat.codes) and lgbm_params={{'categorical_feature':"
            f" [{position}]}} (its position among the features)")


def aligned_to_rows(baseline, X, method: str):
    """A pandas ``baseline`` taken in the order of the rows of ``X`` (a DataFrame), as pandas
    aligns; refused if its index does not hold their labels once each. Anything else as given
    (by position)."""
    if not (hasattr(baseline, "index") and hasattr(X, "index")):
        return baseline
    rows, labels = X.index, baseline.index
    if labels.equals(rows):
        return baseline.to_numpy()
    if rows.has_duplicates or labels.has_duplicates or len(rows) != len(labels) or \
            not labels.isin(rows).all():
        missing = rows.difference(labels)
        example = f" (row {missing.tolist()[0]!r} has no baseline)" if len(missing) else ""
        raise ValueError(f"RiskRanker.{method}: baseline's index does not hold X's row labels "
                         f"once each{example}; index it like X, or pass a plain array in X's "
                         "row order")
    return baseline.reindex(rows).to_numpy()
