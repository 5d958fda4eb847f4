"""How the package calls its compiled kernels: on ranges of queries shared out among threads, and
with Ctrl-C that lands inside one turned back into the interruption it is.

The objectives' re-sort (:func:`lgb_risk._measuring.ranking.rerank_by_score`) is a compiled serial
loop over a range of queries that releases the GIL (``nogil=True``); :func:`over_queries` runs it on
``numba.get_num_threads()`` threads, this one included. numba's own parallel loop (``prange``) does
the same work, but its analysis and the function it generates cost compile time on a new install or
a cluster's fresh worker (BENCHMARKS.md). Every query is computed by one thread alone, wholly, so
the results do not depend on the number of threads or on which thread took which range.

The pair kernel stays in numba's parallel loop although it would compile faster here: run this
way it trained slower at the MSLR-WEB10K shape although its pair loop executes the same
instructions (BENCHMARKS.md): the loop's machine code, re-optimised in its caller's module,
runs slower outside numba's parallel function. :func:`query_ranges` also splits the
objectives' setup into pieces of queries.

numba returns from a kernel that Ctrl-C stopped as ``SystemError(CPUDispatcher(...) returned a
result with an exception set)``, caused by the ``KeyboardInterrupt``: :func:`interruptible` around
a call, and :func:`caused_by_ctrl_c` where an error is reported, turn it back into the
interruption it is.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable
from typing import Any

import numba
import numpy as np

#: Ranges per thread: threads take the next range when done with one, so that a thread that
#: drew large queries does not hold the others up.
RANGES_PER_THREAD = 4
#: Below this many documents a call runs in this thread alone (starting threads would cost more).
PARALLEL_FROM_DOCUMENTS = 20_000


def query_ranges(offsets: np.ndarray, n_ranges: int) -> list[tuple[int, int]]:
    """Contiguous ranges ``(first, last)`` of the queries delimited by ``offsets``, about equal
    in documents, none empty, at most ``n_ranges``.

    >>> query_ranges(np.array([0, 10, 20, 30, 40]), 2)
    [(0, 2), (2, 4)]
    """
    n_queries = offsets.size - 1
    targets = np.linspace(0, offsets[-1], n_ranges + 1)[1:-1]
    cuts = np.unique(np.clip(np.searchsorted(offsets, targets), 1, max(n_queries - 1, 1)))
    bounds = [0, *(int(c) for c in cuts if 0 < c < n_queries), n_queries]
    return [(a, b) for a, b in zip(bounds[:-1], bounds[1:]) if b > a]


def over_queries(kernel: Callable[..., None], offsets: np.ndarray, *args: Any) -> None:
    """``kernel(*args, first, last)`` for ranges of the queries that together cover them all,
    on ``numba.get_num_threads()`` threads (this one among them). The kernel writes its
    results into arrays among ``args``, each range to its own queries' entries.

    All threads have finished when this returns or raises; an exception in another thread is
    raised here.
    """
    n_threads = numba.get_num_threads()
    if n_threads == 1 or offsets[-1] < PARALLEL_FROM_DOCUMENTS:
        kernel(*args, 0, offsets.size - 1)
        return
    ranges = iter(query_ranges(offsets, n_threads * RANGES_PER_THREAD))  # next() holds the GIL
    failures: list[BaseException] = []

    def work() -> None:
        try:
            for first, last in ranges:
                kernel(*args, first, last)
        except BaseException as error:  # raised in the calling thread below
            failures.append(error)

    threads = [threading.Thread(target=work, daemon=True) for _ in range(n_threads - 1)]
    for thread in threads:
        thread.start()
    try:
        work()
    finally:
        for thread in threads:
            thread.join()
    if failures:
        raise failures[0]


def caused_by_ctrl_c(exc: BaseException) -> bool:
    """Whether ``exc`` is, or was caused by, a ``KeyboardInterrupt``."""
    seen: BaseException | None = exc
    while seen is not None:
        if isinstance(seen, KeyboardInterrupt):
            return True
        seen = seen.__cause__ or seen.__context__
    return False


@contextlib.contextmanager
def interruptible():
    """Raise ``KeyboardInterrupt`` for a ``SystemError`` that Ctrl-C caused inside."""
    try:
        yield
    except SystemError as exc:
        if caused_by_ctrl_c(exc):
            raise KeyboardInterrupt from None
        raise
