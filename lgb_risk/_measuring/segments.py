"""Queries as contiguous segments of flat per-document arrays (pure numpy).

Queries are delimited by ``offsets`` (length ``n_queries + 1``, ``offsets[0] == 0``), built from
LightGBM-style query sizes (``group``).
"""

from __future__ import annotations

import numpy as np


def offsets_from_group(group: np.ndarray) -> np.ndarray:
    """``[0, g0, g0+g1, ...]``: segment boundaries from LightGBM-style query sizes."""
    off = np.zeros(len(group) + 1, dtype=np.int64)
    np.cumsum(group, out=off[1:])
    return off


def query_of_document(group: np.ndarray) -> np.ndarray:
    """The query index (0, 1, ...) of every flat slot: ``[0]*g0 + [1]*g1 + ...``."""
    return np.repeat(np.arange(len(group)), group)


def positions_in_query(group: np.ndarray) -> np.ndarray:
    """0-based position of every flat slot within its query (0, 1, ..., n_q - 1 per query)."""
    off = offsets_from_group(group)
    return np.arange(off[-1], dtype=np.int64) - np.repeat(off[:-1], group)
