"""A Dask client for a call or a run: of the cluster at an address, or of a local cluster
started for it (the optional ``dask`` extra)."""

from __future__ import annotations

from contextlib import contextmanager


@contextmanager
def dask_client(n_workers: int, scheduler: str | None = None, *, needed_for: str):
    """A client of the Dask cluster at ``scheduler``, or of a ``LocalCluster`` of ``n_workers``
    single-threaded worker processes started here and closed on exit (its workers end when this
    process dies). ``needed_for`` says what needs Dask, for the error without the extra."""
    try:
        from distributed import Client, LocalCluster
    except ImportError:
        raise ImportError(f"{needed_for} runs on Dask, an optional extra: "
                          "pip install 'lgb_risk[dask]'") from None
    import logging

    import dask

    # Workers of a local cluster skip Dask's statistical profiler (a stack sample every 10 ms)
    # and keep glibc's adaptive allocator: Dask's default MALLOC_TRIM_THRESHOLD_ turns it off,
    # and every large array was then mapped and unmapped (measured on the experiment's units:
    # 10-20% slower, the extra time spent in the kernel).
    local_settings = {"distributed.worker.profile.enabled": False,
                      "distributed.nanny.pre-spawn-environ.MALLOC_TRIM_THRESHOLD_": None}
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
