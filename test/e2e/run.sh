#!/usr/bin/env bash
# The end-to-end suite as two vitest runs at once on the one cluster: the files that wait on Karpenter's clocks
# and hold nothing a controller acts on (vitest.e2e-waits.config.ts) beside all the others (vitest.e2e.config.ts). Exits non-zero when either
# fails. `--json-dir DIR` writes DIR/e2e.json and DIR/e2e-waits.json (vitest's JSON reports, for .ci/run);
# other arguments go to both runs (e.g. a test name filter with -t).
set -uo pipefail
cd "$(dirname "$0")/../.."
json_dir=""
if [ "${1:-}" = "--json-dir" ]; then json_dir="$2"; shift 2; fi
# Both runs' globalSetup reuse a running cluster and leave it running; so the cluster is brought up here first
# (and taken down at the end if it was started here, unless NODEROTATION_E2E_KEEP_CLUSTER=1).
started=""
if ! bash test/e2e/cluster/cluster.sh status >/dev/null 2>&1; then
  bash test/e2e/cluster/cluster.sh up || exit 1
  started=1
fi
if [ -n "${started}" ] && [ "${NODEROTATION_E2E_KEEP_CLUSTER:-}" != "1" ]; then
  trap 'bash test/e2e/cluster/cluster.sh down || true' EXIT
fi
report() { [ -n "${json_dir}" ] && echo "--reporter=default --reporter=json --outputFile.json=${json_dir}/$1.json"; }
waits_log="$(mktemp)"
# shellcheck disable=SC2046 # report's words are separate arguments
npx vitest run --config vitest.e2e-waits.config.ts $(report e2e-waits) "$@" >"${waits_log}" 2>&1 &
waits_pid=$!
# shellcheck disable=SC2046
npx vitest run --config vitest.e2e.config.ts $(report e2e) "$@"
main_rc=$?
wait "${waits_pid}"
waits_rc=$?
echo
echo "==> the long waits ($(sed -n 's/^.*\(Test Files.*\)$/\1/p' "${waits_log}" | tail -1)), run alongside:"
cat "${waits_log}"
rm -f "${waits_log}"
[ "${main_rc}" -eq 0 ] && [ "${waits_rc}" -eq 0 ]
