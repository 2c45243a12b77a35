#!/usr/bin/env bash
# The end-to-end suite in three phases on one cluster (`npm run test:e2e`; .ci/run).
#
# Most files must run one at a time: a controller a file starts acts cluster-wide (its start-up sweep, every
# governed pool) and a MaintenancePlan governs every NodePool its selector matches. Some files do neither: they
# start no controller, apply no plan, and read only the NodePools, NodeClaims and Pods they created. Phase 1 runs
# the longest of those, placeholder-identity (about 2.5 min, most of it waiting out Karpenter's 2-minute
# de-duplication of DisruptionBlocked events), beside the others of that kind, one after the other; phase 2 runs
# every remaining file, one at a time. The suite takes the same tests in about 1.5 min less. Tests delete what
# they made without waiting for it to go (TestResources.cleanup): phase 3 checks that all of it is gone.
# parity.test.ts (about 45 s) starts a controller, so it runs in phase 2: beside placeholder-identity, which
# applies RotationPolicies to its pools and runs the engine's passes itself, the controller would act on them too.
#
# Usage: bash test/e2e/run.sh [--report-dir DIR]   (writes DIR/e2e-{solo,alongside,serial,soak,leftovers}.json)
# Extra arguments after -- go to every vitest run. Brings the cluster up if none is running, and then takes it
# down at the end (like the suite's globalSetup), unless NODEROTATION_E2E_KEEP_CLUSTER=1.
set -uo pipefail
cd "$(dirname "$0")/../.."

report_dir=""
if [ "${1:-}" = "--report-dir" ]; then
  report_dir="$2"
  shift 2
fi
[ "${1:-}" = "--" ] && shift

# Phase 1, beside each other: SOLO alone in one process, ALONGSIDE one after the other in a second.
SOLO=(test/e2e/placeholder-identity.test.ts)
ALONGSIDE=(
  test/e2e/crds.test.ts
  test/e2e/crossplane-render.test.ts
  test/e2e/drain-pdb.test.ts
  test/e2e/examples.test.ts
  test/e2e/expiry.test.ts
  test/e2e/gitops-examples.test.ts
  test/e2e/install.test.ts
  test/e2e/kubeconform.test.ts
  test/e2e/preemption.test.ts
  test/e2e/provisioning.test.ts
)

cluster() { bash test/e2e/cluster/cluster.sh "$@"; }
started=0
if ! cluster status >/dev/null 2>&1; then
  cluster up || exit 1
  started=1
fi
stop() { [ "${started}" = 1 ] && [ "${NODEROTATION_E2E_KEEP_CLUSTER:-}" != 1 ] && cluster down; }
trap stop EXIT

# vitest <report name> <files…>: one run with the e2e config, its JSON report in report_dir when given.
vitest() {
  local name="$1"
  shift
  local report=()
  [ -n "${report_dir}" ] && report=(--reporter=default --reporter=json "--outputFile.json=${report_dir}/e2e-${name}.json")
  npx vitest run --config vitest.e2e.config.ts "${report[@]}" "$@"
}

status=0
solo_log="$(mktemp)"
echo "e2e phase 1: ${SOLO[*]} beside ${#ALONGSIDE[@]} files (its output follows theirs)"
vitest solo "$@" "${SOLO[@]}" >"${solo_log}" 2>&1 &
solo_pid=$!
vitest alongside "$@" "${ALONGSIDE[@]}" || status=1
wait "${solo_pid}" || status=1
cat "${solo_log}"
rm -f "${solo_log}"

# Phase 3, last: nothing the tests deleted without waiting (TestResources.cleanup) is left.
LAST=(test/e2e/leftovers.test.ts)
# Beside phase 2: the soak's short variant on a cluster of its own (its run directory and ports), so its
# controllers never meet the other files' pools.
SOAK=(test/e2e/soak.test.ts)

excludes=()
for f in "${SOLO[@]}" "${ALONGSIDE[@]}" "${LAST[@]}" "${SOAK[@]}"; do excludes+=(--exclude "${f}"); done
echo "e2e phase 2: every other file, one at a time, beside ${SOAK[*]} (its output follows theirs)"
soak_log="$(mktemp)"
vitest soak "$@" "${SOAK[@]}" >"${soak_log}" 2>&1 &
soak_pid=$!
vitest serial "$@" "${excludes[@]}" || status=1
wait "${soak_pid}" || status=1
cat "${soak_log}"
rm -f "${soak_log}"
echo "e2e phase 3: ${LAST[*]}"
vitest leftovers "$@" "${LAST[@]}" || status=1
exit "${status}"
