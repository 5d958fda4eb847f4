"""64-bit keys of (topic, document) pairs, computed in numpy's loops for a whole file at once.

They find a run's documents among the judgments, and a document listed twice for a topic: the
two steps that would otherwise take a Python dictionary lookup per line of every run. A key is
a hash of the topic's and the document id's bytes, so two different pairs can share a key
(about one chance in 2**64 for a given two). No result depends on that: a match of keys is
confirmed on the ids themselves, the judgments are keyed again with another ``seed`` until no
two of them share a key, and a repeated key within a file sends it to the exact, line-by-line
check.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

_GOLDEN = 0x9E3779B97F4A7C15  # 2**64 / golden ratio
_MASK = (1 << 64) - 1
#: How many seeds :func:`lgb_risk.trec.judgments` tries before it gives up (each fails with a
#: chance of about m**2 / 2**65 for m judgments).
SEEDS = 16


def _splitmix(x: int) -> int:
    """splitmix64's finaliser on a Python int: a bijection of 64-bit values."""
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9 & _MASK
    x = (x ^ (x >> 27)) * 0x94D049BB133111EB & _MASK
    return x ^ (x >> 31)


def _multiplier(seed: int, position: int) -> np.uint64:
    """The odd multiplier of the 64-bit word at ``position`` under ``seed``."""
    return np.uint64(_splitmix((seed * 4096 + position + 1) * _GOLDEN & _MASK) | 1)


def _weighted_words(values: np.ndarray, seed: int, parity: int) -> np.ndarray:
    """Σ_j w_j · m_(2j + parity) over the 64-bit words w_j of each of ``values`` (a bytes
    array); a word of trailing NUL bytes adds 0, so the sum does not depend on the width."""
    width = -(-max(values.dtype.itemsize, 1) // 8) * 8
    words = np.ascontiguousarray(values, dtype=f"S{width}").view(np.uint64)
    words = words.reshape(values.size, width // 8)
    used = width // 8
    while used and not words[:, used - 1].any():  # a column of padding adds 0 to every sum
        used -= 1
    total = np.zeros(values.size, dtype=np.uint64)
    for j in range(used):
        total += words[:, j] * _multiplier(seed, 2 * j + parity)
    return total


def pair_keys(topic: np.ndarray, docno: np.ndarray, seed: int = 0) -> np.ndarray:
    """The uint64 key of every (topic, document id) pair, both numpy bytes (``S``) arrays.
    Trailing NUL bytes do not count, as numpy does not count them when it compares such arrays,
    so a pair's key does not depend on the arrays' widths.

    The ids' bytes are read as 64-bit words; the key is a bijective mix (splitmix64's
    finaliser) of the sum of the words, each times an odd multiplier of its id and position
    that ``seed`` chooses.

    >>> topic = np.array([b"201", b"202"])
    >>> docno = np.array([b"clueweb12-0000tw-05-12114", b"clueweb12-0000tw-05-12114"])
    >>> keys = pair_keys(topic, docno)
    >>> bool(keys[0] != keys[1])
    True
    >>> bool(np.all(pair_keys(topic.astype("S16"), docno.astype("S64")) == keys))
    True
    """
    keys = _weighted_words(topic, seed, 0)
    keys += _weighted_words(docno, seed, 1)
    keys ^= keys >> np.uint64(30)
    keys *= np.uint64(0xBF58476D1CE4E5B9)
    keys ^= keys >> np.uint64(27)
    keys *= np.uint64(0x94D049BB133111EB)
    keys ^= keys >> np.uint64(31)
    return keys


def first_repeat(topic: np.ndarray, docno: np.ndarray) -> tuple[int, int] | None:
    """``(i, j)``, i < j, where pair j is the first to repeat an earlier pair i, compared on
    the bytes themselves (the exact check behind a repeated key); None where none repeats.

    >>> first_repeat(np.array([b"1", b"1", b"2", b"1"]), np.array([b"a", b"b", b"a", b"b"]))
    (1, 3)
    """
    first: dict = {}
    for j, pair in enumerate(zip(topic.tolist(), docno.tolist())):
        i = first.setdefault(pair, j)
        if i != j:
            return i, j
    return None


def repeats_a_key(keys: np.ndarray) -> bool:
    """Whether two of ``keys`` are equal."""
    ordered = np.sort(keys)
    return bool(np.any(ordered[1:] == ordered[:-1]))


class KeyIndex(NamedTuple):
    """Distinct keys in ascending order with their rows, and a directory of the keys by their
    top ``bits`` bits: the keys starting with bucket b are ``sorted_keys[start[b]:start[b+1]]``
    (a quarter of a key a bucket, on average)."""

    sorted_keys: np.ndarray
    rows: np.ndarray
    start: np.ndarray
    bits: int


def key_index(keys: np.ndarray) -> KeyIndex | None:
    """The :class:`KeyIndex` of ``keys``, None where two of them are equal."""
    rows = np.argsort(keys)
    ordered = keys[rows]
    if np.any(ordered[1:] == ordered[:-1]):
        return None
    bits = int(min(max(np.ceil(np.log2(max(keys.size, 1))) + 2, 1), 22))
    bucket = ordered >> np.uint64(64 - bits)
    start = np.searchsorted(bucket, np.arange((1 << bits) + 1, dtype=np.uint64))
    return KeyIndex(ordered, rows, start, bits)


def rows_of(keys: np.ndarray, index: KeyIndex) -> np.ndarray:
    """For each of ``keys``, the row of the equal key in ``index``, else -1: each key's bucket
    is scanned, all keys at once, as many times as the fullest bucket holds keys.

    >>> rows_of(np.array([5, 9, 2], np.uint64), key_index(np.array([5, 2], np.uint64)))
    array([ 0, -1,  1])
    """
    found = np.full(keys.size, -1, dtype=np.int64)
    bucket = (keys >> np.uint64(64 - index.bits)).astype(np.int64)
    at, end = index.start[bucket], index.start[bucket + 1]
    waiting = np.flatnonzero(at < end)
    while waiting.size:
        here = at[waiting]
        hit = index.sorted_keys[here] == keys[waiting]
        found[waiting[hit]] = index.rows[here[hit]]
        at[waiting] += 1
        waiting = waiting[~hit & (at[waiting] < end[waiting])]
    return found
