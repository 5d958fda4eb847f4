"""Facts of the machine this process runs on: its usable cores, and what an experiment's
``environment.json`` records so that two runs can be compared."""

from __future__ import annotations

import os
import platform

#: The packages whose versions decide a run's numbers (LightGBM's trees change between minor
#: versions; numpy, scipy and numba the last bits that can flip a split).
NUMBER_PACKAGES = ("lgb_risk", "lightgbm", "numpy", "scipy", "numba", "llvmlite", "scikit-learn",
                   "pandas")

#: Packages whose versions decide the bytes of an output but not its numbers (matplotlib writes
#: the figures); recorded where installed.
OUTPUT_PACKAGES = ("matplotlib",)


def usable_cores() -> int:
    """CPU cores this process may run on (its affinity where the OS reports it)."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return cores or 1


def _cpu_model_and_flags() -> tuple[str, set]:
    model, flags = platform.processor() or platform.machine(), set()
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as cpuinfo:
            for line in cpuinfo:
                key, _, value = line.partition(":")
                if key.strip() == "model name":
                    model = value.strip()
                elif key.strip() == "flags":
                    flags = set(value.split())
                    break
    except OSError:  # not Linux: the model platform reports, no flags
        pass
    return model, flags


def libm_variant() -> str:
    """Which variant of the C library's ``exp``/``log``/``log2`` this process computes with.

    glibc selects, at load time, implementations using fused multiply-adds on x86-64 CPUs with
    FMA and AVX2 (every Intel CPU since Haswell, every AMD CPU since Zen); they differ from the
    plain ones in the last bit for some arguments, which LightGBM's tables and the objectives'
    sigmoid and discount tables inherit. ``"glibc 2.36, fma"`` or ``"glibc 2.36, no fma"``; the
    library and version alone elsewhere.
    """
    library, version = platform.libc_ver()
    if not library:
        return platform.system()
    if platform.machine() not in ("x86_64", "AMD64"):
        return f"{library} {version}"
    _, flags = _cpu_model_and_flags()
    tunables = os.environ.get("GLIBC_TUNABLES", "")
    fma = {"fma", "avx2"} <= flags and "-FMA" not in tunables and "-AVX2" not in tunables
    return f"{library} {version}, {'fma' if fma else 'no fma'}"


def libm_probe() -> str:
    """A fingerprint of the bits this process's ``exp``, ``log`` and ``log2`` give (Python's
    ``math`` calls the C library's) on 4,096 fixed arguments spread over the ranges the
    objectives' sigmoid and discount tables use: two processes with the same fingerprint
    compute those tables alike, whatever :func:`libm_variant` infers from the CPU's flags."""
    import hashlib
    import math
    import struct

    digest = hashlib.sha256()
    for i in range(4096):
        x = (i + 0.5) / 4096.0
        for value in (math.exp(-50.0 + 100.0 * x), math.log(1.0 + 1e4 * x), math.log2(2.0 + i)):
            digest.update(struct.pack("<d", value))
    return digest.hexdigest()[:16]


def environment() -> dict:
    """What decides a run's numbers, and the machine facts that must not.

    ``reproducing``: Python, the versions of :data:`NUMBER_PACKAGES` and the C library's
    ``exp``/``log`` variant, inferred (:func:`libm_variant`) and probed (:func:`libm_probe`);
    runs that agree on these give the same bits. ``outputs``: the versions of
    :data:`OUTPUT_PACKAGES` that are installed (the figures' bytes). ``machine``: the CPU,
    the BLAS library and the kernels it chose (and ``OPENBLAS_CORETYPE``, which forces them,
    where set), numpy's SIMD extensions in use, numba's target CPU and the thread counts;
    recorded to compare runs, and no number depends on them (the library computes every
    BLAS-backed step in a fixed order, :mod:`lgb_risk.experiment.fixed_order`).
    """
    from importlib import import_module, metadata

    import numba
    from threadpoolctl import threadpool_info

    model, _ = _cpu_model_and_flags()
    pools = threadpool_info()
    simd = import_module("numpy._core._multiarray_umath")  # numpy's dispatch tables
    features = simd.__cpu_features__
    return {
        "reproducing": {"python": platform.python_version(),
                        **{name: metadata.version(name) for name in NUMBER_PACKAGES},
                        "libm": libm_variant(), "libm_probe": libm_probe()},
        "outputs": {name: _installed_version(name) for name in OUTPUT_PACKAGES},
        "machine": {
            "cpu": model,
            "architecture": platform.machine(),
            "usable_cores": usable_cores(),
            "numpy_simd": [f for f in simd.__cpu_dispatch__ if features.get(f)],
            "numba_target_cpu": getattr(numba.config, "CPU_NAME", None) or "host",
            "numba_threads": getattr(numba.config, "NUMBA_NUM_THREADS", None),
            "blas": sorted(({"library": f"{pool['internal_api']} {pool.get('version')}",
                             "kernels": pool.get("architecture"), "threads": pool["num_threads"]}
                            for pool in pools if pool["user_api"] == "blas"),
                           key=lambda blas: blas["library"]),  # not in the order loaded
            "openmp_threads": sorted({pool["num_threads"] for pool in pools
                                      if pool["user_api"] == "openmp"}),
            "environment": {name: os.environ.get(name) for name in
                            ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE", "GLIBC_TUNABLES",
                             "NUMBA_CPU_NAME")},
        },
    }


def _installed_version(name: str) -> str | None:
    """The installed version of the package ``name``; None where it is not installed."""
    from importlib import metadata

    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None
