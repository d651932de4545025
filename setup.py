"""Build the compiled core: every .pyx under fastml/ becomes an extension module.

How a build runs (docs/developers/building.rst has the measured times):
- Cython translates the .pyx files only when `build_ext` runs (pip's metadata steps never
  translate), into build/cython/<release|debug>/, and only those whose .pyx, .pxd or included
  csrc/ header changed: a rebuild after touching one .pyx translates and compiles that one only.
  Debug and release keep separate C, so switching builds never reuses the other's C.
- Extensions compile in parallel, one job per core (`build_ext -j N` or FASTML_BUILD_JOBS=N to
  choose); the generated C never lands in the package, so wheels carry no .c files.
- Release builds: -O3, no debug info, symbols stripped at link (small wheels).
  FASTML_DEBUG=1 builds with bounds checks, wraparound and initialization checks on and -O0 -g,
  so the test suite can run the kernels where an out-of-bounds access raises.
- OpenMP when the compiler accepts it (probed, never required).
- FASTML_BUILD_ONLY=name1,name2 compiles only the modules whose name contains one of those
  strings (a developer convenience for a fast in-place rebuild of the kernel being edited).
"""
import os
import sys
import glob
import tempfile
import subprocess
import sysconfig

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext as _build_ext

HERE = os.path.dirname(os.path.abspath(__file__))
DEBUG = os.environ.get("FASTML_DEBUG", "0") not in ("", "0")
LINUX = sys.platform.startswith("linux")


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


def compiler_flags():
    """(compile args, link args) for this build kind, OpenMP included."""
    omp_compile, omp_link = openmp_flags()
    if sys.platform == "win32":
        return ["/O2"] + omp_compile, omp_link
    # -fno-math-errno: sqrt never sets errno here, and without it gcc cannot vectorize sqrt.
    common = ["-fno-strict-aliasing", "-fno-math-errno", "-Wno-unused-function",
              "-Wno-unreachable-code"]
    if DEBUG:
        return ["-O0", "-g"] + common + omp_compile, omp_link
    # -g0 overrides the -g in Python's own CFLAGS; -s strips the symbol table at link (the
    # module's PyInit_ entry stays in the dynamic symbol table, which is all import needs).
    strip = ["-Wl,-s"] if LINUX else []
    return ["-O3", "-g0"] + common + omp_compile, omp_link + strip


def extensions():
    """One Extension per .pyx (not yet translated: build_ext translates them)."""
    only = [s for s in os.environ.get("FASTML_BUILD_ONLY", "").split(",") if s]
    headers = sorted(glob.glob(os.path.join("csrc", "*.h")))
    exts = []
    for pyx in sorted(glob.glob(os.path.join("fastml", "**", "*.pyx"), recursive=True)):
        name = os.path.splitext(pyx)[0].replace(os.sep, ".")
        if only and not any(s in name for s in only):
            continue
        exts.append(Extension(
            name, [pyx],
            include_dirs=[os.path.join(HERE, "csrc"), "csrc"],
            define_macros=[("NPY_NO_DEPRECATED_API", "NPY_1_7_API_VERSION")]
                          + ([("FASTML_DEBUG", "1")] if DEBUG else []),  # csrc/fastml_debug.h
            depends=headers,
        ))
    return exts


def switched_build_kind():
    """True when the last build here was of the other kind (debug / release): its modules are
    newer than this kind's C, so only a forced compile replaces them."""
    stamp = os.path.join("build", "cython", "last-build-kind")
    kind = "debug" if DEBUG else "release"
    last = open(stamp).read() if os.path.exists(stamp) else kind
    os.makedirs(os.path.dirname(stamp), exist_ok=True)
    with open(stamp, "w") as f:
        f.write(kind)
    return last != kind


class build_ext(_build_ext):
    """Translate with Cython when (and only when) extensions are built, then compile them in
    parallel."""

    def finalize_options(self):
        super().finalize_options()
        if not self.parallel:
            self.parallel = int(os.environ.get("FASTML_BUILD_JOBS", os.cpu_count() or 1))

    def run(self):
        import numpy
        from Cython.Build import cythonize

        compile_args, link_args = compiler_flags()
        for ext in self.extensions:
            ext.include_dirs.insert(0, numpy.get_include())
            ext.extra_compile_args = compile_args
            ext.extra_link_args = link_args
        directives = {
            "language_level": 3,
            "boundscheck": DEBUG,
            "wraparound": DEBUG,
            "initializedcheck": DEBUG,
            "cdivision": True,    # the same in both builds: debug must run the code release runs
            "nonecheck": DEBUG,
            "embedsignature": True,
        }
        build_dir = os.path.join("build", "cython", "debug" if DEBUG else "release")
        self.force = self.force or switched_build_kind()
        translated = cythonize(
            self.extensions, compiler_directives=directives, build_dir=build_dir,
            nthreads=self.parallel, quiet=True, force=self.force)
        c_sources = {ext.name: ext.sources for ext in translated}
        for ext in self.extensions:  # setuptools' own Extension objects, now pointing at the C
            ext.sources = c_sources[ext.name]
        super().run()


setup(ext_modules=extensions(), cmdclass={"build_ext": build_ext})
