"""What this fastml install is built from and runs on: `fastml.show_config()`.

A bug report starts with its output (`fastml --version --verbose` prints the same): the
versions of fastml, Python, numpy and scipy; whether the kernels were compiled with OpenMP and
how many threads it would give them; the SIMD clones compiled and the one this CPU runs; the
BLAS that scipy (and numpy) loaded, with its threads.
"""
from __future__ import annotations

import os
import platform
import sys
from importlib import import_module
from typing import Any, Optional, TextIO

# _OPENMP dates -> the OpenMP version they name (the specification's table)
_OPENMP_VERSIONS = {200505: "2.5", 200805: "3.0", 201107: "3.1", 201307: "4.0",
                    201511: "4.5", 201811: "5.0", 202011: "5.1", 202111: "5.2", 202411: "6.0"}

_OPTIONAL = ("sklearn", "pandas", "pyarrow", "matplotlib", "tqdm")


def _version_of(module_name: str) -> Optional[str]:
    """The module's __version__, or None when it is not installed."""
    try:
        return getattr(import_module(module_name), "__version__", "unknown")
    except ImportError:
        return None


def _clone_targets(attribute: str) -> list[str]:
    """["avx2", "default"] from '__attribute__((target_clones("avx2", "default")))',
    ["avx512f", "fma"] from '__attribute__((target("avx512f,fma")))'; [] for ''."""
    for key in ("target_clones(", "target("):
        start = attribute.find(key)
        if start >= 0:
            inside = attribute[start + len(key):attribute.index(")", start)].replace('"', "")
            return [part.strip() for part in inside.split(",") if part.strip()]
    return []


def _kernels() -> dict[str, Any]:
    from ._core import _buildinfo
    omp = _buildinfo.openmp_version()
    clones = {name: _clone_targets(attr)
              for name, attr in _buildinfo.simd_clone_attributes().items()}
    return {
        "openmp": bool(omp),
        "openmp_version": _OPENMP_VERSIONS.get(omp, str(omp)) if omp else None,
        "openmp_max_threads": _buildinfo.openmp_max_threads(),
        "cpu_count": os.cpu_count() or 1,
        "simd_clones": clones,
        "cpu_simd": _buildinfo.cpu_simd(),
        "avx512_copy_runs": _buildinfo.avx512_copy_runs(),
        "newton_hessian_copy": _newton_hessian_copy(),
    }


def _newton_hessian_copy() -> str:
    """The copy of Newton's Hessian loops this CPU runs (csrc/fastml_gram.h): "avx512",
    "avx2+fma" or "plain"."""
    from .linear_model import _batch_fast
    return _batch_fast.GRAM_COPY


def _thread_pools() -> list[dict[str, Any]]:
    """threadpoolctl's view of the BLAS and OpenMP libraries scipy, numpy and fastml loaded."""
    import scipy.linalg  # noqa: F401  (loads scipy's BLAS, the one fastml's kernels call)
    from threadpoolctl import threadpool_info
    keys = ("user_api", "internal_api", "version", "num_threads", "architecture", "filepath")
    return [{k: info.get(k) for k in keys} for info in threadpool_info()]


def build_info() -> dict[str, Any]:
    """Everything `show_config` prints, as a dict (for programs and tests)."""
    from . import __version__
    from ._extras import DISTRIBUTION
    return {
        "fastml": __version__,
        "distribution": DISTRIBUTION,
        "python": platform.python_version(),
        "implementation": platform.python_implementation(),
        "executable": sys.executable,
        "platform": platform.platform(),
        "machine": platform.machine(),
        "numpy": _version_of("numpy"),
        "scipy": _version_of("scipy"),
        "threadpoolctl": _version_of("threadpoolctl"),
        "optional": {name: _version_of(name) for name in _OPTIONAL},
        "kernels": _kernels(),
        "thread_pools": _thread_pools(),
    }


def _format(info: dict[str, Any]) -> list[str]:
    k = info["kernels"]
    if k["openmp"]:
        omp = (f"on (OpenMP {k['openmp_version']}); n_jobs=-1 runs "
               f"{k['cpu_count']} threads, OpenMP's default is {k['openmp_max_threads']}")
    else:
        omp = "off (serial build: n_jobs is accepted and every kernel runs on one thread)"
    lines = [
        f"fastml {info['fastml']} (installed as {info['distribution']})",
        f"  python:        {info['python']} ({info['implementation']}) {info['executable']}",
        f"  platform:      {info['platform']}",
        f"  numpy:         {info['numpy']}",
        f"  scipy:         {info['scipy']}",
        f"  threadpoolctl: {info['threadpoolctl']}",
        "  optional:      " + ", ".join(f"{name} {v or 'not installed'}"
                                        for name, v in info["optional"].items()),
        "kernels:",
        f"  openmp:        {omp}",
    ]
    for macro, targets in k["simd_clones"].items():
        lines.append(f"  simd clones:   {macro}: " + (", ".join(targets) if targets
                                                     else "none (one portable copy)"))
    lines.append(f"  this cpu runs: {k['cpu_simd']} (where clones exist); the AVX-512 copies "
                 f"(kernel perceptron predict, the multinomial batch pass): "
                 f"{'yes' if k['avx512_copy_runs'] else 'no (FASTML_DISABLE_AVX512 or the CPU)'}")
    lines.append(f"  newton hessian: the {k['newton_hessian_copy']} copy (csrc/fastml_gram.h)")
    lines.append("thread pools (threadpoolctl):")
    for pool in info["thread_pools"] or [{"user_api": "none found"}]:
        detail = ", ".join(f"{key} {pool[key]}" for key in
                           ("version", "num_threads", "architecture") if pool.get(key))
        lines.append(f"  {pool['user_api']:<8} {pool.get('internal_api') or ''} {detail}"
                     f"  {pool.get('filepath') or ''}".rstrip())
    return lines


def show_config(file: Optional[TextIO] = None) -> None:
    """Print how this fastml was built and what it runs on; paste it into a bug report.

    Parameters
    ----------
    file : file-like, optional
        Where to write (default: standard output).

    Examples
    --------
    >>> import io, fastml
    >>> out = io.StringIO()
    >>> fastml.show_config(file=out)
    >>> first = out.getvalue().splitlines()[0]
    >>> first == f"fastml {fastml.__version__} (installed as fastml-classic)"
    True
    >>> "openmp:" in out.getvalue()
    True
    """
    stream = sys.stdout if file is None else file
    stream.write("\n".join(_format(build_info())) + "\n")
