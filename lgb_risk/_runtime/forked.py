"""Work shared between this process and forked copies of it (POSIX ``os.fork``).

A forked child starts with this process's memory, so it needs nothing pickled to start: only its
result comes back, through a pipe. This is cheaper to start than a process pool (no pool
threads, no queues, no ``multiprocessing`` import), which matters for a command that runs for a
fraction of a second.
"""

from __future__ import annotations

import os
import pickle
import signal
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

__all__ = ["can_fork", "map_in_forks"]


def can_fork() -> bool:
    """Whether this platform has ``os.fork`` (not Windows)."""
    return hasattr(os, "fork")


def map_in_forks(function: Callable[[Any], Any], shares: Sequence[Any]) -> list:
    """``[function(share) for share in shares]``, each share after the first in a forked child.

    This process computes the first share while the children compute theirs. An exception
    raised in a child is raised here (its message kept, its traceback not); a child that ends
    without sending a result (killed, out of memory) is a :class:`ChildProcessError` saying how
    it ended. If this process fails or is interrupted, the children are killed and reaped.
    Without ``os.fork`` every share is computed here.

    A child has only the calling thread: a lock that another thread holds when it forks stays
    held in the child (Python 3.12 warns when a process with threads forks). ``function``
    should therefore not wait on locks of the caller's threads; reading files and numpy do not.

    >>> map_in_forks(sum, [[1, 2], [3, 4], [5]])
    [3, 7, 5]
    """
    if not can_fork() or len(shares) < 2:
        return [function(share) for share in shares]
    children: list[tuple[int, int, Any]] = []  # pid, read end of its pipe, its share
    try:
        for share in shares[1:]:
            read_end, write_end = os.pipe()
            pid = os.fork()
            if pid == 0:
                os.close(read_end)
                for _, other_read_end, _ in children:
                    os.close(other_read_end)
                _run_child(function, share, write_end)  # does not return
            os.close(write_end)
            children.append((pid, read_end, share))
        results = [function(shares[0])]
        while children:
            results.append(_collect(*children.pop(0)))
        return results
    finally:
        for pid, read_end, _ in children:  # left only when this process failed
            os.close(read_end)
            _kill_and_reap(pid)


def _kill_and_reap(pid: int) -> None:
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    os.waitpid(pid, 0)


def _run_child(function, share, write_end) -> None:
    """In the child: compute, send ``(True, result)`` or ``(False, exception)``, and leave
    without running the parent's exit handlers or flushing its buffers."""
    try:
        try:
            payload = pickle.dumps((True, function(share)), protocol=pickle.HIGHEST_PROTOCOL)
        except BaseException as exc:  # noqa: BLE001 - every failure goes to the parent
            try:
                payload = pickle.dumps((False, exc), protocol=pickle.HIGHEST_PROTOCOL)
            except Exception:  # an exception that does not pickle: its type and message
                payload = pickle.dumps((False, RuntimeError(f"{type(exc).__name__}: {exc}")))
        with os.fdopen(write_end, "wb") as out:
            out.write(payload)
    finally:
        os._exit(0)


def _collect(pid: int, read_end: int, share: Any) -> Any:
    """The result a child sent, once it has ended; its exception raised here."""
    try:
        with os.fdopen(read_end, "rb") as pipe:
            payload = pipe.read()
    except BaseException:
        _kill_and_reap(pid)
        raise
    _, status = os.waitpid(pid, 0)
    if not payload:
        how = (f"killed by signal {os.WTERMSIG(status)}" if os.WIFSIGNALED(status)
               else f"exit status {os.waitstatus_to_exitcode(status)}")
        raise ChildProcessError(f"the process working on {share!r} ended without a result "
                                f"({how})")
    done, value = pickle.loads(payload)
    if not done:
        raise value
    return value
