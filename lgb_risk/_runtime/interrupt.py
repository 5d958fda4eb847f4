"""Ctrl-C that lands inside a compiled kernel.

numba returns from a kernel that Ctrl-C stopped as ``SystemError(CPUDispatcher(...) returned a
result with an exception set)``, caused by the ``KeyboardInterrupt``. Callers turn that back into
the interruption it is.
"""

from __future__ import annotations

import contextlib


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
