#!/usr/bin/env bash
# CI stage "docs": build the documentation site from a clean install, warnings as errors.
#
# In a fresh venv under a temp dir: pip install '.[docs]', then the one documented command
#     sphinx-build -W --keep-going -n -b html docs docs/_build/html
# (-W: any warning fails; -n: every cross-reference must resolve). The gallery examples run
# during the build, so a broken example fails too. The build reads the *installed* fastml (the
# docs/ tree is copied next to a copy of the sources' top files it includes, so the source
# tree's uncompiled package is never imported). Prints the stage time; exits non-zero on failure.
#   bash .ci/docs.sh                 # HTML left in $DOCS_OUT when set (default: discarded)
set -euo pipefail
cd "$(dirname "$0")/.."
SRC=$PWD
START=$(date +%s)
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
export PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_INPUT=1 MPLBACKEND=Agg
PY=${PYTHON:-python3}

echo "== docs: install fastml with the docs extra into a fresh venv"
"$PY" -m venv "$WORK/venv"
"$WORK/venv/bin/pip" install -q "$SRC[docs]"

echo "== docs: sphinx-build -W --keep-going -n -b html docs docs/_build/html"
# the changelog page includes ../CHANGELOG.md: copy it beside docs/
mkdir -p "$WORK/site"
cp -r "$SRC/docs" "$WORK/site/docs"
rm -rf "$WORK/site/docs/_build" "$WORK/site/docs/api" "$WORK/site/docs/auto_examples"
cp "$SRC/CHANGELOG.md" "$WORK/site/"
(cd "$WORK/site" && "$WORK/venv/bin/sphinx-build" -W --keep-going -n -q -b html docs \
    docs/_build/html)
n_pages=$(find "$WORK/site/docs/_build/html" -name '*.html' | wc -l)
echo "   $n_pages HTML pages"
if [ -n "${DOCS_OUT:-}" ]; then
    rm -rf "$DOCS_OUT" && cp -r "$WORK/site/docs/_build/html" "$DOCS_OUT"
    echo "   site in $DOCS_OUT"
fi
echo "== docs stage time: $(( $(date +%s) - START )) s"
