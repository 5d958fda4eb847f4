"""Input checks shared by the public functions (validation at the boundary).

Every check raises :class:`ValueError` saying what was wrong, where, and what was expected.
"""

from __future__ import annotations

import numpy as np


def is_number(value) -> bool:
    """Whether ``float(value)`` succeeds (a number, or text holding one)."""
    try:
        float(value)
    except (TypeError, ValueError):
        return False
    return True


def check_query_sizes(group) -> np.ndarray:
    """LightGBM-style query sizes on their own: a non-empty 1-D array of whole numbers >= 1,
    returned as int64 (:func:`check_group` also checks their total)."""
    try:
        g = np.asarray(group)
    except (TypeError, ValueError):
        raise ValueError(f"group must be query sizes (whole numbers >= 1), got "
                         f"{type(group).__name__}") from None
    if g.ndim != 1 or g.size == 0:
        raise ValueError(f"group must be a non-empty 1-D array of query sizes, got shape {g.shape}")
    if not np.issubdtype(g.dtype, np.integer):
        if not np.issubdtype(g.dtype, np.floating) or np.any(g != np.round(g)):
            raise ValueError(f"group must hold whole numbers (query sizes), got dtype {g.dtype}")
    g = g.astype(np.int64)
    bad = np.flatnonzero(g < 1)
    if bad.size:
        raise ValueError(
            f"group has an empty or negative query size at query index {int(bad[0])} "
            f"(size {int(g[bad[0]])}); every query needs at least one document"
        )
    return g


def check_group(group, n_items: int, what: str = "labels") -> np.ndarray:
    """Validate LightGBM-style query sizes and return them as an int64 array.

    Parameters
    ----------
    group : array-like of int
        Number of documents of each query, in order.
    n_items : int
        Length of the flat per-document arrays the sizes must add up to.
    what : str
        Name of the flat array, for the error message.
    """
    g = check_query_sizes(group)
    total = int(g.sum())
    if total != n_items:
        raise ValueError(
            f"group sizes add up to {total} documents but {what} has {n_items}; "
            "they must agree"
        )
    return g


def check_labels(labels, name: str = "labels") -> np.ndarray:
    """Relevance labels must be finite, non-negative whole numbers; returned as int64."""
    y = np.asarray(labels)
    if y.ndim != 1:
        raise ValueError(f"{name} must be 1-D, got shape {y.shape}")
    if not (np.issubdtype(y.dtype, np.number) or y.dtype == bool):
        raise ValueError(f"{name} must be relevance grades (whole numbers >= 0), got "
                         f"{y.dtype} values, the first {str(y.flat[0]) if y.size else ''!r} "
                         "(Unknown label type: map text labels to grades first)")
    if np.issubdtype(y.dtype, np.integer):
        yi = y.astype(np.int64)
    else:
        yf = y.astype(np.float64)
        bad = np.flatnonzero(~np.isfinite(yf) | (yf != np.round(yf)))
        if bad.size:
            raise ValueError(
                f"{name} must be whole numbers; position {int(bad[0])} holds {float(yf[bad[0]])}"
            )
        yi = yf.astype(np.int64)
    neg = np.flatnonzero(yi < 0)
    if neg.size:
        raise ValueError(
            f"{name} must be non-negative; position {int(neg[0])} holds {int(yi[neg[0]])}"
        )
    return yi


def check_scores(scores, n_items: int, name: str = "scores") -> np.ndarray:
    """Scores must be finite floats with one value per document; returned as float64."""
    s = np.asarray(scores, dtype=np.float64)
    if s.ndim != 1:
        raise ValueError(f"{name} must be 1-D, got shape {s.shape}")
    if s.size != n_items:
        raise ValueError(f"{name} has {s.size} values but labels has {n_items}; they must agree")
    bad = np.flatnonzero(~np.isfinite(s))
    if bad.size:
        raise ValueError(
            f"{name} must be finite; position {int(bad[0])} holds {float(s[bad[0]])} "
            f"({bad.size} non-finite value(s) in all)"
        )
    return s


def check_k(k) -> int | None:
    """Cut-off ``k``: a whole number >= 1, or None for the whole list."""
    if k is None:
        return None
    if isinstance(k, (bool, np.bool_)) or not isinstance(k, (int, np.integer)):
        raise ValueError(f"k must be a whole number >= 1 or None, got {k!r}")
    if k < 1:
        raise ValueError(f"k must be >= 1, got {k}")
    return int(k)


def check_choice(value, name: str, allowed) -> str:
    """A keyword that takes one of a fixed set of strings."""
    if value not in allowed:
        raise ValueError(f"{name} must be one of {sorted(allowed)}, got {value!r}")
    return value


def check_number(value, name: str, *, minimum=None, maximum=None, integer: bool = False,
                 above: bool = False):
    """A number (a whole number with ``integer``; never a bool or a string) within
    [``minimum``, ``maximum``] (``above``: strictly greater than ``minimum``); returned as given.
    """
    kind = "a whole number" if integer else "a number"
    bounds = [f"{'>' if above else '>='} {minimum}" if minimum is not None else "",
              f"<= {maximum}" if maximum is not None else ""]
    wanted = " and ".join(filter(None, bounds))
    expected = f"{kind} {wanted}".strip()
    types = (int, np.integer) if integer else (int, float, np.integer, np.floating)
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, types) or value != value:
        raise ValueError(f"{name} must be {expected}, got {value!r}")
    if minimum is not None and (value <= minimum if above else value < minimum):
        raise ValueError(f"{name} must be {expected}, got {value!r}")
    if maximum is not None and value > maximum:
        raise ValueError(f"{name} must be {expected}, got {value!r}")
    return value


def check_whole_number(value, name: str, minimum: int = 1) -> int:
    """A whole number >= ``minimum`` (not a bool)."""
    return int(check_number(value, name, minimum=minimum, integer=True))


def check_flag(value, name: str) -> bool:
    """True or False (numpy's bools included), nothing else."""
    if not isinstance(value, (bool, np.bool_)):
        raise ValueError(f"{name} must be True or False, got {value!r}")
    return bool(value)


def check_alpha(alpha) -> float:
    """Risk-sensitivity parameter alpha: a finite number >= 0 (not a string, not a bool)."""
    if isinstance(alpha, (str, bytes, bool, np.bool_)) or not isinstance(
            alpha, (int, float, np.integer, np.floating)):
        raise ValueError(f"alpha must be a number >= 0, got {alpha!r} "
                         f"({type(alpha).__name__})")
    a = float(alpha)
    if not np.isfinite(a) or a < 0:
        raise ValueError(f"alpha must be a finite number >= 0, got {alpha!r}")
    return a


def check_lightgbm_parameter_names(params, where: str) -> None:
    """Refuse a parameter name LightGBM does not know (it would ignore it silently at
    ``verbose=-1``), suggesting the nearest known name; ``where`` names the argument."""
    import difflib

    import lightgbm

    aliases = lightgbm.basic._ConfigAliases._get_all_param_aliases()
    known = set(aliases) | {alias for names in aliases.values() for alias in names}
    for name in params:
        if name not in known:
            near = difflib.get_close_matches(str(name), sorted(known), n=1)
            hint = f" (did you mean {near[0]!r}?)" if near else ""
            raise ValueError(f"{where}: {name!r} is not a LightGBM parameter{hint}; LightGBM "
                             "would ignore it")
