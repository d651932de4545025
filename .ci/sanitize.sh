#!/usr/bin/env bash
# CI stage: AddressSanitizer + UndefinedBehaviorSanitizer over the compiled kernels.
# Builds a clean copy of the tree in a fresh venv (under a temp dir) with
# -fsanitize=address,undefined, preloads libasan into the Python process (Python itself is not
# instrumented, so the ASan runtime must be loaded first), and runs the kernel tests
# (pytest -m kernel) and the property and model-file-fuzz suites under it. Every sanitizer
# finding aborts the process, so pytest, and this script, exit non-zero.
# Budget: about 10 minutes on 2 cores; prints its stage time.
#   usage: .ci/sanitize.sh          (PYTHON=python3.x and CC=gcc-N to choose the tools)
set -euo pipefail
cd "$(dirname "$0")/.."
START=$(date +%s)
PY=${PYTHON:-python3}
CC_=${CC:-gcc}
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"; echo "== sanitize stage: $(( $(date +%s) - START )) s"' EXIT

LIBASAN=$($CC_ -print-file-name=libasan.so)
if [ ! -e "$LIBASAN" ]; then
  echo "sanitize: $CC_ has no libasan.so (got '$LIBASAN'); install its sanitizer runtime" >&2
  exit 1
fi

echo "== sanitizer build (-fsanitize=address,undefined)"
$PY -m venv "$WORK/venv"
. "$WORK/venv/bin/activate"
pip install -q --upgrade pip
# The dependencies from pyproject.toml (build requirements + the test extra), then the kernels
# built in place on 2 cores (pip would compile them one by one).
python - > "$WORK/requirements.txt" <<'PYEOF'
import sys
try:
    import tomllib
except ImportError:  # Python < 3.11
    import subprocess
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", "tomli"], check=True)
    import tomli as tomllib
with open("pyproject.toml", "rb") as f:
    meta = tomllib.load(f)
print("\n".join(meta["build-system"]["requires"] + meta["project"]["dependencies"]
                + meta["project"]["optional-dependencies"]["test"]))
PYEOF
pip install -q -r "$WORK/requirements.txt"
mkdir "$WORK/src"
# The tracked and new files, without built artifacts (.so / generated C / build/).
git ls-files -co --exclude-standard | grep -vE '\.(so|c)$|^build/' \
  | tar -cf - -T - | tar -xf - -C "$WORK/src"
# -fno-sanitize-recover=all makes every UBSan finding fatal instead of a printed warning.
SAN="-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer -g"
# setup.py puts -O3 after CFLAGS; a compiler wrapper turns it into -O1, which compiles
# several times faster under the sanitizers and still runs the tests quickly.
printf '#!/usr/bin/env bash\nexec %s "${@/#-O3/-O1}"\n' "$CC_" > "$WORK/cc-san"
chmod +x "$WORK/cc-san"
(cd "$WORK/src" && CC="$WORK/cc-san" CFLAGS="$SAN" LDFLAGS="$SAN" \
   python setup.py -q build_ext --inplace -j 2 > "$WORK/build.log" 2>&1) \
  || { tail -50 "$WORK/build.log"; exit 1; }
echo "== build done: $(( $(date +%s) - START )) s"

echo "== kernel tests, property tests and the model-file fuzzer under ASan + UBSan"
cd "$WORK/src"
export PYTHONPATH="$WORK/src"
export LD_PRELOAD="$LIBASAN"
# detect_leaks=0: CPython does not free everything at exit. abort_on_error: a report kills
# the process (no try/except can swallow it). allocator_may_return_null: a huge allocation
# is a MemoryError (which the tests judge), not an ASan abort.
export ASAN_OPTIONS="detect_leaks=0:abort_on_error=1:halt_on_error=1:allocator_may_return_null=1"
export UBSAN_OPTIONS="halt_on_error=1:abort_on_error=1:print_stacktrace=1"
python -c "import fastml.linear_model._sgd_fast as m; print('sanitized build:', m.__file__)"
# "not plot": importing matplotlib's C++ extensions under the preloaded ASan runtime aborts the
# interpreter (seen here, no report from fastml's code); plotting runs no fastml kernel.
pytest -q -p no:cacheprovider -m kernel -k "not plot" tests
pytest -q -p no:cacheprovider tests/test_properties*.py tests/test_model_file_fuzz.py
