"""A Dask client for a call or a run: of the cluster at an address, or of a local cluster
started for it (the optional ``dask`` extra), whose workers are forked from a server that
imported their modules once (:func:`start_worker_server`); started at once
(:func:`dask_client`) or in a thread while the caller goes on (:func:`dask_client_in_background`).
"""

from __future__ import annotations

import multiprocessing
import multiprocessing.forkserver
import socket
import time
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import ExitStack, contextmanager
from typing import Any
from urllib.parse import urlsplit


def start_worker_server(preload: tuple[str, ...] = ()) -> bool:
    """Start now the process that a local cluster's workers are forked from, importing
    ``distributed`` and the modules ``preload`` there once, rather than in every worker (each
    worker would otherwise start a new interpreter and import them: seconds of CPU per worker),
    after its own set-up (:mod:`lgb_risk._runtime.worker_server`).

    Called early (the CLI calls it before importing the runner), its imports overlap this
    process's own. Only the first call of a process starts the server and chooses its modules;
    later calls do nothing. Returns False where the platform has no ``forkserver`` start method
    (Windows): local workers are then spawned as Dask does by default.
    """
    if "forkserver" not in multiprocessing.get_all_start_methods():
        return False
    server = multiprocessing.get_context("forkserver")
    server.set_forkserver_preload(["lgb_risk._runtime.worker_server", "distributed", *preload])
    multiprocessing.forkserver.ensure_running()
    return True


def silence_dask_logs() -> None:
    """Set Dask's loggers (``distributed`` and each of its own, which Dask's configuration sets
    one by one on import; tornado's and asyncio's, through which its event loop reports) past
    CRITICAL: for a command that says what went wrong in one line of its own."""
    import logging

    import distributed  # noqa: F401  (its import configures the levels set here)

    names = [name for name in list(logging.root.manager.loggerDict)
             if name.split(".")[0] in ("distributed", "tornado", "asyncio")]
    for name in ("distributed", "tornado", "asyncio", *names):
        logging.getLogger(name).setLevel(logging.CRITICAL + 1)


def scheduler_workers(client: Any) -> dict:
    """The cluster's workers as its scheduler lists them now: ``{address: information}``.

    Asked of the scheduler at each call. ``client.scheduler_info()`` answers from the client's
    cached view, which the client's own periodic refresh
    (``distributed.client.scheduler-info-interval``) replaces with one that lists no worker in
    recent Dask: read at that moment, every worker looked gone, and a distributed training
    stopped saying its rank 0 had died.
    """
    return client.sync(client.scheduler.identity)["workers"]


def require_dask(needed_for: str) -> None:
    """Raise an ImportError naming the ``dask`` extra when Dask's ``distributed`` is missing;
    ``needed_for`` says what needs it."""
    try:
        import distributed  # noqa: F401
    except ImportError:
        raise ImportError(f"{needed_for} runs on Dask, an optional extra: "
                          "pip install 'lgb_risk[dask]'") from None


def check_scheduler(address: str, *, timeout: float = 10.0,
                    wait_for_workers: float = 0.0) -> None:
    """Raise ValueError, naming ``address`` and the time waited, unless a Dask scheduler
    answers there within ``timeout`` seconds and its cluster has a worker (waiting for one up to
    ``wait_for_workers`` seconds). Called before any work, so that a wrong address costs
    nothing."""
    from distributed import Client

    start = time.monotonic()
    parts = urlsplit(address if "://" in address else f"tcp://{address}")
    if parts.scheme == "tcp" and parts.hostname and parts.port:
        try:  # the quick answer: nothing listens there
            socket.create_connection((parts.hostname, parts.port), timeout=timeout).close()
        except OSError as error:
            raise ValueError(f"no Dask scheduler answers at {address} ({error.strerror or error}"
                             f", after {time.monotonic() - start:.0f} s): start one there "
                             "(dask scheduler) or correct the address") from None
    try:
        client = Client(address, timeout=timeout, set_as_default=False)
    except (OSError, TimeoutError) as error:
        raise ValueError(f"no Dask scheduler answers at {address} (waited "
                         f"{time.monotonic() - start:.0f} s: {error}); start one there (dask "
                         "scheduler) or correct the address") from None
    with client:
        if scheduler_workers(client):
            return
        if wait_for_workers <= 0:
            raise ValueError(f"the Dask cluster at {address} has no workers: start some there "
                             f"(dask worker {address}), or wait for them with "
                             "--wait-for-workers SECONDS")
        try:
            client.wait_for_workers(1, timeout=wait_for_workers)
        except TimeoutError:
            raise ValueError(f"the Dask cluster at {address} still has no workers after "
                             f"waiting {wait_for_workers:g} s") from None


def unguarded_main_line() -> int | None:
    """The line of the running script's module-level code that led here, where that code is not
    under ``if __name__ == "__main__":``; None otherwise (a guarded call, a function of an
    imported module, an interactive session, a worker process). A local cluster's worker
    processes import the script again, which would then start a cluster of its own."""
    import ast
    import sys

    main = sys.modules.get("__main__")
    path = getattr(main, "__file__", None)
    if not path or getattr(main, "__name__", None) != "__main__":
        return None
    frame: Any = sys._getframe()
    while frame is not None and not (frame.f_code.co_filename == path
                                     and frame.f_code.co_name == "<module>"):
        frame = frame.f_back
    if frame is None:
        return None
    line = frame.f_lineno
    try:
        with open(path, encoding="utf-8") as source:
            tree = ast.parse(source.read())
    except (OSError, SyntaxError, ValueError):
        return None

    def is_main_test(test) -> bool:
        return (isinstance(test, ast.Compare) and len(test.ops) == 1
                and isinstance(test.ops[0], ast.Eq)
                and {ast.unparse(test.left), ast.unparse(test.comparators[0])}
                == {"__name__", "'__main__'"})

    guarded = any(isinstance(node, ast.If) and is_main_test(node.test)
                  and node.lineno <= line <= (node.end_lineno or node.lineno)
                  for node in ast.walk(tree))
    return None if guarded else line


@contextmanager
def dask_client(n_workers: int, scheduler: str | None = None, *, needed_for: str,
                preload: tuple[str, ...] = ()):
    """A client of the Dask cluster at ``scheduler``, or of a ``LocalCluster`` of ``n_workers``
    single-threaded worker processes started here and closed on exit (its workers end when this
    process dies), forked from a server that imported ``preload`` (see
    :func:`start_worker_server`). ``needed_for`` says what needs Dask, for the error without
    the extra."""
    require_dask(needed_for)
    line = None if scheduler is not None else unguarded_main_line()
    if line is not None:
        import sys

        raise RuntimeError(
            f"{sys.modules['__main__'].__file__}, line {line}: {needed_for} starts worker "
            "processes, which import this script again; put the script's work under "
            "'if __name__ == \"__main__\":' (or pass a Dask client)")
    import logging

    import dask
    from distributed import Client, LocalCluster

    # Workers of a local cluster skip Dask's statistical profiler (a stack sample every 10 ms)
    # and keep glibc's adaptive allocator: Dask's default MALLOC_TRIM_THRESHOLD_ turns it off,
    # and every large array was then mapped and unmapped, which slowed the experiment's units.
    # Dask's bookkeeping runs less often (ticks, memory checks and system statistics below),
    # which halves the share of a core its event loops take (BENCHMARKS.md).
    local_settings = {"distributed.worker.profile.enabled": False,
                      "distributed.nanny.pre-spawn-environ.MALLOC_TRIM_THRESHOLD_": None,
                      "distributed.admin.tick.interval": "1s",
                      "distributed.worker.memory.monitor-interval": "500ms",
                      "distributed.admin.system-monitor.interval": "2s"}
    if scheduler is None and start_worker_server(preload):
        local_settings["distributed.worker.multiprocessing-method"] = "forkserver"
    with dask.config.set(local_settings):
        cluster = None if scheduler is not None else LocalCluster(
            n_workers=n_workers, threads_per_worker=1, processes=True, dashboard_address=":0",
            silence_logs=logging.ERROR, death_timeout=10)
    client = Client(scheduler if cluster is None else cluster)
    try:
        yield client
    finally:
        client.close()
        if cluster is not None:
            cluster.close()


class StartingClient:
    """A Dask client being started in a thread (:func:`dask_client_in_background`)."""

    def __init__(self, thread: ThreadPoolExecutor, started: Future):
        self._thread, self._started = thread, started

    def result(self):
        """The client, once started; raises what starting raised."""
        return self._started.result()

    def then(self, work) -> Future:
        """Run ``work(client)`` in the starting thread as soon as the client is ready, while the
        caller goes on; returns a future of its result."""
        return self._thread.submit(lambda: work(self._started.result()))


@contextmanager
def dask_client_in_background(n_workers: int, scheduler: str | None = None, *, needed_for: str,
                              preload: tuple[str, ...] = ()):
    """:func:`dask_client`, started in a thread while the caller goes on with its own work:
    yields a :class:`StartingClient`. On exit, waits for the start and the work given to
    ``then`` to end, then closes the client and the local cluster."""
    clients = ExitStack()
    with clients, ThreadPoolExecutor(1, thread_name_prefix="lgb_risk-dask-start") as thread:
        yield StartingClient(thread, thread.submit(lambda: clients.enter_context(dask_client(
            n_workers, scheduler, needed_for=needed_for, preload=preload))))
