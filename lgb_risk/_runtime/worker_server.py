"""Set-up of the process that a local cluster's workers are forked from, imported there first
(:func:`lgb_risk._runtime.dask_client.start_worker_server`), so that every worker starts with it
done. Not meant to be imported anywhere else.

- OpenMP threads that a worker leaves idle (LightGBM's and numba's runtime) wait asleep, not
  spinning: the workers are single-threaded processes sharing the cores, and a spinning thread
  takes a core that another worker needs (about half of an idle worker's CPU time on the demo
  experiment; ``scripts/bench_jobs.py``). The OpenMP runtime reads ``OMP_WAIT_POLICY`` when it is
  loaded, with LightGBM, after this module; a value set by the user is kept.
- Ctrl-C is ignored: a terminal sends it to the whole process group, and the driver, which
  closes the cluster on Ctrl-C, ends the workers itself; a worker that took it would print
  Dask's tracebacks (the forkserver gives every forked child the handlers of this set-up).
- numba's compiler is readied (its registries and LLVM) by compiling a trivial
  function, instead of at each worker's first kernel. Nothing here starts a thread, so the
  forks are safe.
"""

import os
import signal

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
signal.signal(signal.SIGINT, signal.SIG_IGN)

import numba  # noqa: E402


@numba.njit(cache=False)
def _ready() -> int:
    return 0


_ready()
