"""Per-query inputs of the risk measures, checked and aligned once: arrays aligned by position,
or values keyed by topic (a pandas Series, a DataFrame with a column per topic, a dict) aligned
by topic, with a missing or extra topic named; NaN queries refused or left out
(``nan_policy``)."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from lgb_risk._inputs.validation import check_choice

NAN_POLICIES = ("raise", "omit")


def _as_matrix(values, name: str) -> np.ndarray:
    m = np.asarray(values, dtype=np.float64)
    if m.ndim == 1:
        m = m[None, :]
    if m.ndim != 2 or m.shape[1] == 0:
        raise ValueError(f"{name} must be a vector of per-query values or a matrix "
                         f"(n_systems, n_queries), got shape {np.shape(values)}")
    if np.any(np.isinf(m)):
        raise ValueError(f"{name} holds an infinite value")
    return m


def _keyed_by_topic(value, name: str):
    """``(topics, matrix (n_systems, n_topics))`` of a value keyed by topic, None for an array.

    Keyed values: a pandas Series or a mapping topic -> value (one system); a DataFrame with a
    row per system and a column per topic, or a mapping name -> (Series or mapping) (several).
    Topics are compared as strings (``10002`` and ``"10002"`` are one topic).
    """
    if isinstance(value, Mapping):
        rows = list(value.values())
        if rows and all(isinstance(r, Mapping) or _is_series(r) for r in rows):
            keyed = [_keyed_by_topic(r, f"{name}[{key!r}]") for key, r in value.items()]
            topics = keyed[0][0]
            return topics, np.vstack([_reordered(t, m, topics, f"{name}[{key!r}]",
                                                 f"{name}[{next(iter(value))!r}]")
                                      for (t, m), key in zip(keyed, value)])
        topics, values = [str(k) for k in value], list(value.values())
    elif _is_series(value):
        topics, values = [str(k) for k in value.index], value.to_numpy()
    elif hasattr(value, "columns") and getattr(value, "ndim", 0) == 2:
        return _unique(name, [str(c) for c in value.columns]), _as_matrix(value.to_numpy(), name)
    else:
        return None
    return _unique(name, topics), _as_matrix(np.asarray(values, dtype=np.float64), name)


def _is_series(value) -> bool:
    return type(value).__name__ == "Series" and hasattr(value, "index")


def _unique(name: str, topics: list) -> list:
    seen: set = set()
    for topic in topics:
        if topic in seen:
            raise ValueError(f"{name} has topic {topic!r} twice")
        seen.add(topic)
    return topics


def _reordered(topics, matrix, order, name, reference) -> np.ndarray:
    """``matrix``'s columns in the topic order ``order``, refusing missing or extra topics."""
    position = {t: i for i, t in enumerate(topics)}
    missing = [t for t in order if t not in position]
    extra = sorted(set(topics) - set(order))
    if missing or extra:
        said = []
        if missing:
            said.append(f"lacks {len(missing)} topic(s) of {reference}: {', '.join(missing[:10])}")
        if extra:
            said.append(f"has {len(extra)} topic(s) {reference} lacks: {', '.join(extra[:10])}")
        raise ValueError(f"{name} " + "; ".join(said) + " (inputs keyed by topic must cover "
                         "the same topics)")
    return matrix[:, [position[t] for t in order]]


def aligned(nan_policy: str, **arrays) -> list[np.ndarray]:
    """Check that all inputs cover the same queries; apply the NaN policy to whole queries.

    Inputs keyed by topic (:func:`_keyed_by_topic`) are aligned by topic, in the first one's
    order; arrays are aligned by position. Keyed and positional inputs are not mixed.
    """
    check_choice(nan_policy, "nan_policy", NAN_POLICIES)
    keyed = {name: _keyed_by_topic(v, name) for name, v in arrays.items()}
    if any(k is not None for k in keyed.values()):
        positional = [name for name, k in keyed.items() if k is None]
        if positional:
            raise ValueError(f"{positional[0]} is an array while another input is keyed by "
                             "topic: give every input keyed by topic (Series or dict), or every "
                             "one as an array in the same query order")
        found = {name: k for name, k in keyed.items() if k is not None}
        first = next(iter(found))
        order = found[first][0]
        arrays = {name: _reordered(topics, matrix, order, name, first)
                  for name, (topics, matrix) in found.items()}
    mats = {name: _as_matrix(v, name) for name, v in arrays.items()}
    sizes = {name: m.shape[1] for name, m in mats.items()}
    if len(set(sizes.values())) != 1:
        raise ValueError(f"per-query inputs must cover the same queries; lengths: {sizes}")
    nan_query = np.zeros(next(iter(sizes.values())), dtype=bool)
    for name, m in mats.items():
        bad = np.isnan(m).any(axis=0)
        if bad.any() and nan_policy == "raise":
            raise ValueError(
                f"{name} is NaN for query index {int(np.flatnonzero(bad)[0])} "
                f"({int(bad.sum())} NaN queries); pass nan_policy='omit' to leave such queries out"
            )
        nan_query |= bad
    kept = [m[:, ~nan_query] for m in mats.values()]
    if kept[0].shape[1] == 0:
        raise ValueError("no query left to compare after leaving out NaN queries")
    return kept
