#!/bin/sh
# Build the Tumult Analytics environment of the validate gallery and validate Tumult's per-user bounded
# SUM against wilson2020.sum (docs/validate.md, "Tumult Analytics, in an environment of its own").
#
#   examples/tumult/run.sh [VENV] [validate options...]     (from the repository's root; VENV defaults to
#                                                             .venv-tumult; about 1.1 GB, Java on PATH)
#
# The venv is created and filled from examples/tumult/requirements.txt only when VENV/bin/python is absent.
# Then: the noise-scale stage alone (stages only, exit 4 on a pass), the full validate of the batched release
# (--quick unless other options are given), and the fixed-truncation measurement (gallery_tumult.main).
set -eu
VENV=${1:-.venv-tumult}
[ $# -gt 0 ] && shift
if [ ! -x "$VENV/bin/python" ]; then
    python3 -m venv "$VENV"
    "$VENV/bin/pip" install -q -r examples/tumult/requirements.txt
    "$VENV/bin/pip" install -q --no-deps -e .
fi
export PYSPARK_PYTHON="$VENV/bin/python" PYSPARK_DRIVER_PYTHON="$VENV/bin/python"
[ $# -eq 0 ] && set -- --quick
status=0
"$VENV/bin/python" -m userdp.audits.cli.main validate wilson2020.sum examples.tumult.gallery_tumult:TUMULT_NOISE \
    || status=$?
echo "noise-scale stage: exit $status (4: pass on the stages only)"
status=0
"$VENV/bin/python" -m userdp.audits.cli.main validate wilson2020.sum examples.tumult.gallery_tumult:TUMULT "$@" \
    || status=$?
echo "release: exit $status"
"$VENV/bin/python" -m examples.tumult.gallery_tumult
