"""Facts of the machine this process runs on."""

import os


def usable_cores() -> int:
    """CPU cores this process may run on (its affinity where the OS reports it)."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return cores or 1
