"""Build the compiled core: every .pyx under fastml/ becomes an extension module.

Compiler flags: -O3 always; OpenMP when the compiler accepts it (probed, never required).
FASTML_DEBUG=1 builds with bounds checks, wraparound and initialization checks on, so the
test suite can run the kernels where an out-of-bounds access raises instead of corrupting memory.
FASTML_BUILD_ONLY=name1,name2 compiles only the modules whose name contains one of those
strings (a developer convenience for a fast in-place rebuild of the kernel being edited).
"""
import os
import sys
import glob
import shutil
import tempfile
import subprocess
import sysconfig

import numpy
from Cython.Build import cythonize
from setuptools import Extension, setup

HERE = os.path.dirname(os.path.abspath(__file__))
DEBUG = os.environ.get("FASTML_DEBUG", "0") not in ("", "0")


def compiler_accepts(flag):
    """True when the C compiler builds and links a tiny OpenMP program with `flag`."""
    cc = os.environ.get("CC") or sysconfig.get_config_var("CC") or "cc"
    src = "#include <omp.h>\nint main(void){return omp_get_max_threads() > 0 ? 0 : 1;}\n"
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "probe.c")
        with open(path, "w") as f:
            f.write(src)
        cmd = cc.split() + [flag, path, "-o", os.path.join(tmp, "probe")]
        try:
            return subprocess.run(cmd, capture_output=True).returncode == 0
        except OSError:
            return False


def openmp_flags():
    if sys.platform == "win32":
        return ["/openmp"], []
    if os.environ.get("FASTML_NO_OPENMP"):
        return [], []
    if compiler_accepts("-fopenmp"):
        return ["-fopenmp"], ["-fopenmp"]
    print("fastml: the compiler has no OpenMP; building the kernels serial", file=sys.stderr)
    return [], []


def extensions():
    omp_compile, omp_link = openmp_flags()
    compile_args = ["-O0", "-g"] if DEBUG else ["-O3"]
    if sys.platform != "win32":
        # -fno-math-errno: sqrt never sets errno here, and without it gcc cannot vectorize sqrt.
        compile_args += ["-fno-strict-aliasing", "-fno-math-errno", "-Wno-unused-function",
                         "-Wno-unreachable-code"]
    only = [s for s in os.environ.get("FASTML_BUILD_ONLY", "").split(",") if s]
    exts = []
    for pyx in sorted(glob.glob(os.path.join("fastml", "**", "*.pyx"), recursive=True)):
        name = os.path.splitext(pyx)[0].replace(os.sep, ".")
        if only and not any(s in name for s in only):
            continue
        exts.append(Extension(
            name, [pyx],
            include_dirs=[numpy.get_include(), os.path.join(HERE, "csrc"), "csrc"],
            define_macros=[("NPY_NO_DEPRECATED_API", "NPY_1_7_API_VERSION")]
                          + ([("FASTML_DEBUG", "1")] if DEBUG else []),  # csrc/fastml_debug.h
            extra_compile_args=compile_args + omp_compile,
            extra_link_args=omp_link,
        ))
    directives = {
        "language_level": 3,
        "boundscheck": DEBUG,
        "wraparound": DEBUG,
        "initializedcheck": DEBUG,
        "cdivision": True,    # the same in both builds: debug must run the code release runs
        "nonecheck": DEBUG,
        "embedsignature": True,
    }
    return cythonize(exts, compiler_directives=directives, nthreads=os.cpu_count() or 1,
                     quiet=True, force=True)  # force: a debug and a release build never share stale C


setup(ext_modules=extensions())
