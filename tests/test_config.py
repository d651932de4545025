"""fastml.show_config() and `fastml --version --verbose`: the build report for bug reports."""
import io
import os
import platform
import re

import numpy as np
import pytest
import scipy

import fastml
from fastml import cli
from fastml._config import _clone_targets, build_info
from fastml._core import _buildinfo


def test_versions_are_the_running_ones():
    info = build_info()
    assert info["fastml"] == fastml.__version__
    assert info["python"] == platform.python_version()
    assert info["numpy"] == np.__version__
    assert info["scipy"] == scipy.__version__


def test_version_is_defined_once():
    """pyproject.toml reads the version from fastml.__version__ instead of repeating it."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    pyproject = os.path.join(root, "pyproject.toml")
    if not os.path.exists(pyproject):
        pytest.skip("run from an installed copy of the tests")
    text = open(pyproject).read()
    assert re.search(r'dynamic\s*=\s*\[[^\]]*"version"', text)
    assert 'attr = "fastml.__version__"' in text
    assert not re.search(r'(?m)^version\s*=\s*"', text)


@pytest.mark.kernel
def test_openmp_report_matches_the_kernels():
    kernels = build_info()["kernels"]
    assert kernels["openmp"] == (_buildinfo.openmp_version() > 0)
    if kernels["openmp"]:
        assert kernels["openmp_max_threads"] >= 1
        assert kernels["openmp_version"] is not None
    else:
        assert kernels["openmp_max_threads"] == 1


@pytest.mark.kernel
def test_simd_clones_follow_the_headers():
    clones = build_info()["kernels"]["simd_clones"]
    assert set(clones) == {"FASTML_CLONES", "FASTML_AVX512"}
    x86_linux_gcc = (platform.machine() in ("x86_64", "AMD64") and platform.system() == "Linux"
                     and platform.libc_ver()[0] == "glibc")
    if x86_linux_gcc:
        assert clones["FASTML_CLONES"] == ["avx2", "default"]
        assert clones["FASTML_AVX512"] == ["avx512f", "fma"]
    else:
        assert clones["FASTML_AVX512"] == []
    kernels = build_info()["kernels"]
    assert kernels["cpu_simd"] in ("avx512f", "avx2", "default")
    from fastml.linear_model import _kernel_perceptron_fast as kpf
    assert kernels["avx512_copy_runs"] == kpf.WIDE_DECIDE
    assert kernels["avx512_copy_runs"] <= (kernels["cpu_simd"] == "avx512f")
    assert kernels["newton_hessian_copy"] == ("avx512" if kernels["avx512_copy_runs"] else
                                              "avx2+fma" if kernels["cpu_simd"] != "default"
                                              else "plain")


@pytest.mark.kernel
@pytest.mark.parametrize("module, hints", [("linear_model._sgd_fast", ["t0"]),
                                           ("linear_model._batch_fast", ["t1", "t0"])])
def test_software_prefetches_survive_the_optimizer(module, hints):
    """The SGD loop and the batch kernel read rows ahead with prefetch instructions
    (csrc/fastml_prefetch.h, fastml_simd.h); GCC once deleted every one of _sgd_fast's as
    calls to a side-effect-free function, with no error and no wrong result, only a slower
    fit. So look for them in the machine code: the batch kernel's paced requests into L2
    (prefetcht1) and its near requests into L1 (prefetcht0), the SGD loop's into L1."""
    import importlib
    import shutil
    import subprocess
    if platform.machine() not in ("x86_64", "AMD64") or shutil.which("objdump") is None:
        pytest.skip("needs x86-64 and binutils' objdump")
    path = importlib.import_module(f"fastml.{module}").__file__
    code = subprocess.run(["objdump", "-d", "--no-show-raw-insn", path], check=True,
                          capture_output=True, text=True).stdout
    for hint in hints:
        assert re.search(rf"\bprefetch{hint}\b", code), f"no prefetch{hint} in {path}"


def test_clone_attribute_parsing():
    assert _clone_targets('__attribute__((target_clones("avx2", "default")))') == ["avx2",
                                                                                   "default"]
    assert _clone_targets("") == []


def test_blas_of_scipy_is_reported():
    pools = build_info()["thread_pools"]
    blas = [p for p in pools if p["user_api"] == "blas"]
    assert blas, pools
    assert all(p["num_threads"] >= 1 for p in blas)


def test_show_config_prints_the_report():
    out = io.StringIO()
    fastml.show_config(file=out)
    text = out.getvalue()
    assert text.splitlines()[0] == f"fastml {fastml.__version__} (installed as fastml-classic)"
    assert f"numpy:         {np.__version__}" in text
    assert f"scipy:         {scipy.__version__}" in text
    assert re.search(r"openmp:\s+(on \(OpenMP [0-9.]+\)|off)", text)
    assert "blas" in text


def test_cli_version(capsys):
    assert cli.main(["--version"]) == 0
    assert capsys.readouterr().out.strip() == f"fastml {fastml.__version__}"
    assert cli.main(["--version", "--verbose"]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[0] == f"fastml {fastml.__version__} (installed as fastml-classic)"
    assert "simd clones:" in out and "thread pools" in out


def test_install_hints_name_the_published_distribution():
    # pyproject.toml publishes the name fastml/_extras.py puts in every install hint
    from fastml import _extras
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    pyproject = os.path.join(root, "pyproject.toml")
    if os.path.exists(pyproject):  # a source checkout
        with open(pyproject, encoding="utf-8") as f:
            assert re.search(r'^name = "fastml-classic"$', f.read(), re.M)
    else:  # the tests run against an installed wheel: its metadata carries the name
        from importlib import metadata
        try:
            assert metadata.metadata("fastml-classic")["Name"] == "fastml-classic"
        except metadata.PackageNotFoundError:
            pytest.skip("tests copied away from a checkout of an uninstalled fastml")
    assert _extras.DISTRIBUTION == "fastml-classic"
    assert _extras.install_hint("dask") == "pip install 'fastml-classic[dask]'"
    with pytest.raises(ImportError, match=r"fastml\.plot needs no_such_module: "
                                          r"pip install 'fastml-classic\[plot\]'"):
        _extras.require("no_such_module.sub", "plot", "fastml.plot")
    assert _extras.require("numpy", "plot", "x") is np
