#!/usr/bin/env bash
# A real Kubernetes control plane with real Karpenter (kwok provider) for the end-to-end tests.
#
# Everything is built from published Go modules (no Docker, no downloads other than the Go module proxy):
# etcd, kube-apiserver, kube-controller-manager, kube-scheduler, kubectl, the KWOK controller (marks
# Karpenter's fake Nodes Ready and runs their pods) and Karpenter with its kwok cloud provider. See
# docs/cluster.md for versions, measured costs and troubleshooting.
#
#   cluster.sh build    build (or reuse) every binary in the cache; `build crossplane` (etcd, kubernetes,
#                       kwok, karpenter, crossplane, kubeconform, argocd-crds, flux; crossplane-core on
#                       request) builds only the ones named
#   cluster.sh up       build if needed, start everything on 127.0.0.1, print the kubeconfig path
#   cluster.sh status   per-component running/dead, and the kubeconfig path
#   cluster.sh down     stop every component by its recorded PID, remove the run directory
#   cluster.sh env      print the run directory's env file (ports, kubeconfig, binaries)
#   cluster.sh restart <component> [seconds]
#                       stop one running component (kube-apiserver, kwok or karpenter-kwok) by its PID, wait the
#                       seconds given (default 0) and start it again with the same flags (the soak's chaos)
#   cluster.sh crossplane up|down|status
#                       real Crossplane core, a local OCI registry and our function beside a running cluster
#                       (crossplane-core.sh; started only by the tests that need it; down stops it with the rest)
#   cluster.sh flux up|down|status
#                       Flux's source-controller and kustomize-controller and a local Git server beside a running
#                       cluster (flux.sh; started only by the test that needs it; down stops it with the rest)
#   cluster.sh registry up|down|status
#                       a local OCI registry for Helm charts (chart-registry.sh; prints host:port; started by
#                       install-paths.test.ts; down stops it with the rest)
#
# Environment:
#   NODEROTATION_CACHE      binary cache (default ${XDG_CACHE_HOME:-$HOME/.cache}/noderotation),
#                           one directory per component and version: bin/<component>-<version>/
#   NODEROTATION_RUN_DIR    run directory with logs, PIDs, PKI, kubeconfig, etcd data
#                           (default /tmp/noderotation-cluster)
#   NODEROTATION_PORT_BASE  ports are base+offset (default 24000: etcd 24379/24380, apiserver 24443,
#                           controller-manager 24257, scheduler 24259, kwok 24247, karpenter 24080/24081)
#   NODEROTATION_UP_TIMEOUT seconds to wait for each component to become ready (default 120)
#   NODEROTATION_AUDIT_USERS opt-in (the controller benchmark): comma-separated user names whose requests the
#                           apiserver records at Metadata level in ${run_dir}/logs/audit.log. Always recorded
#                           there, at Request level (bodies, for the parity test): the writes of ServiceAccounts
#                           (the controller processes of the tests) to Nodes, Pods, NodeClaims, NodePools and
#                           RotationPolicies; nothing else
#   NODEROTATION_FLEET_SCALE=1 opt-in (the controller benchmark's thousands of kwok Nodes): KWOK renews node
#                           Leases every 150 s (duration 600 s) with 16 workers and logs warnings only, and
#                           kube-controller-manager waits 20 min before it marks a silent Node unknown; unset,
#                           the defaults below (40 s Leases) apply
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
modules="${here}/modules"
cache_root="${NODEROTATION_CACHE:-${XDG_CACHE_HOME:-${HOME}/.cache}/noderotation}"
bin_root="${cache_root}/bin"
run_dir="${NODEROTATION_RUN_DIR:-/tmp/noderotation-cluster}"
port_base="${NODEROTATION_PORT_BASE:-24000}"
up_timeout="${NODEROTATION_UP_TIMEOUT:-120}"
audit_users="${NODEROTATION_AUDIT_USERS:-}"
fleet_scale="${NODEROTATION_FLEET_SCALE:-}"

# Start order; `down` stops them in reverse.
components=(etcd kube-apiserver kube-controller-manager kube-scheduler kwok karpenter-kwok)

# Ports, all on 127.0.0.1.
etcd_port=$((port_base + 379))
etcd_peer_port=$((port_base + 380))
apiserver_port=$((port_base + 443))
kcm_port=$((port_base + 257))
scheduler_port=$((port_base + 259))
kwok_port=$((port_base + 247))
karpenter_metrics_port=$((port_base + 80))
karpenter_health_port=$((port_base + 81))

log() { printf '[cluster %s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }

# ---------------------------------------------------------------------------------------------------------
# Versions: the committed wrapper go.mod files are the single source of truth (gen-modules.sh writes them).
# ---------------------------------------------------------------------------------------------------------
module_version() { # <wrapper dir> <module path>
  awk -v m="$2" '($1 == "require" && $2 == m) {print $3; exit} ($1 == m && $2 ~ /^v/) {print $2; exit}' "${modules}/$1/go.mod"
}
k8s_version="$(module_version kubernetes k8s.io/kubernetes)"
etcd_version="$(module_version etcd go.etcd.io/etcd/server/v3)"
kwok_version="$(module_version kwok sigs.k8s.io/kwok)"
karpenter_version="$(module_version karpenter sigs.k8s.io/karpenter)"
crossplane_version="$(module_version crossplane github.com/crossplane/crossplane/v2)"
ggcr_version="$(module_version crossplane github.com/google/go-containerregistry)"
kubeconform_version="$(sed -n 's/^KUBECONFORM_VERSION=//p' "${here}/versions.env")"
argocd_version="$(sed -n 's/^ARGOCD_VERSION=//p' "${here}/versions.env")"
source_controller_version="$(module_version flux-source-controller github.com/fluxcd/source-controller)"
kustomize_controller_version="$(module_version flux-kustomize-controller github.com/fluxcd/kustomize-controller)"

# <binary> -> its version, cached path
component_version() {
  case "$1" in
    etcd) echo "${etcd_version}" ;;
    kube-apiserver | kube-controller-manager | kube-scheduler | kubectl) echo "${k8s_version}" ;;
    kwok) echo "${kwok_version}" ;;
    karpenter-kwok) echo "${karpenter_version}" ;;
    crossplane | crossplane-core) echo "${crossplane_version}" ;;
    oci-registry) echo "${ggcr_version}" ;;
    source-controller) echo "${source_controller_version}" ;;
    kustomize-controller) echo "${kustomize_controller_version}" ;;
    *) die "unknown component $1" ;;
  esac
}
artifact_dir() { echo "${bin_root}/$1-$(component_version "$1")"; }
binary_path() { echo "$(artifact_dir "$1")/$1"; }

# ---------------------------------------------------------------------------------------------------------
# build
# ---------------------------------------------------------------------------------------------------------

# Release time of a module version, from the module cache's .info file: used as the reproducible build date.
module_time() { # <wrapper dir> <module path>
  (cd "${modules}/$1" && go list -m -f '{{if .Time}}{{.Time.UTC.Format "2006-01-02T15:04:05Z"}}{{end}}' "$2")
}

# shellcheck source=go-build.sh
source "${here}/go-build.sh"

# go_build <binary> <wrapper dir> <package> <ldflags>: builds a component into the cache (go-build.sh).
go_build() {
  build_module "$(binary_path "$1")" "${modules}/$2" "$3" "$4" "$1 $(component_version "$1")"
}

build_kubernetes() {
  local v="${k8s_version}" minor date ldflags pkgpath
  minor="${v#v1.}"
  minor="${minor%%.*}"
  date="$(module_time kubernetes k8s.io/kubernetes)"
  # Without these, /version reports v0.0.0 and clients warn about skew (k8s hack/lib/version.sh sets the
  # same variables in both packages).
  ldflags=""
  for pkgpath in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
    ldflags+=" -X ${pkgpath}.gitVersion=${v} -X ${pkgpath}.gitMajor=1 -X ${pkgpath}.gitMinor=${minor}"
    ldflags+=" -X ${pkgpath}.gitTreeState=clean -X ${pkgpath}.buildDate=${date}"
  done
  local b
  for b in kube-apiserver kube-controller-manager kube-scheduler kubectl; do
    go_build "${b}" kubernetes "k8s.io/kubernetes/cmd/${b}" "${ldflags}"
  done
}

build_etcd() {
  # The version itself is a constant in go.etcd.io/etcd/api/v3/version; only the git SHA is injectable.
  go_build etcd etcd go.etcd.io/etcd/server/v3 "-X go.etcd.io/etcd/api/v3/version.GitSHA=module-${etcd_version}"
}

build_kwok() {
  local dir
  go_build kwok kwok sigs.k8s.io/kwok/cmd/kwok "-X sigs.k8s.io/kwok/pkg/consts.Version=${kwok_version}"
  # Stage files (what makes Nodes Ready and pods Running). v0.8.0 has no built-in stages: take the "fast"
  # set from the module itself (kustomize/stage/fast = node/fast + node/heartbeat-with-lease + pod/fast).
  dir="$(artifact_dir kwok)"
  if [[ ! -s "${dir}/stages.yaml" ]]; then
    local src f
    src="$(module_dir kwok sigs.k8s.io/kwok)/kustomize/stage"
    for f in node/fast/node-initialize.yaml node/heartbeat-with-lease/node-heartbeat-with-lease.yaml \
      pod/fast/pod-ready.yaml pod/fast/pod-complete.yaml pod/fast/pod-delete.yaml; do
      echo "---"
      cat "${src}/${f}"
    done >"${dir}/stages.yaml.tmp"
    mv -f "${dir}/stages.yaml.tmp" "${dir}/stages.yaml"
  fi
}

build_karpenter() {
  local dir src
  go_build karpenter-kwok karpenter sigs.k8s.io/karpenter/kwok "-X sigs.k8s.io/karpenter/pkg/operator.Version=${karpenter_version}"
  # The CRDs belong to the version: keep a copy beside the binary so `up` needs no Go module cache.
  dir="$(artifact_dir karpenter-kwok)"
  if [[ ! -d "${dir}/crds" ]]; then
    src="$(module_dir karpenter sigs.k8s.io/karpenter)"
    rm -rf "${dir}/crds.tmp"
    mkdir -p "${dir}/crds.tmp"
    cp "${src}"/kwok/charts/crds/*.yaml "${src}"/kwok/apis/crds/*.yaml "${dir}/crds.tmp/"
    chmod u+w "${dir}"/crds.tmp/*.yaml
    mv "${dir}/crds.tmp" "${dir}/crds"
  fi
}

# Tools that are no cluster component, built with a plain `go install pkg@version` into
# <cache>/bin/<name>-<version>/<name> (reused when present).
#   go_install_tool <name> <version> <package> <ldflags>
go_install_tool() {
  local name="$1" version="$2" pkg="$3" ldflags="$4" dir gobin built
  dir="${bin_root}/${name}-${version}"
  if [[ -x "${dir}/${name}" ]]; then
    log "reuse ${dir}/${name}"
    return 0
  fi
  lock_build "${dir}" "${dir}/${name}" || return 0
  gobin="$(mktemp -d "${dir}/gobin.XXXXXX")"
  log "building ${name} ${version} (go install ${pkg}@${version})"
  local timer=()
  [[ -x /usr/bin/time ]] && timer=(/usr/bin/time -v -o "${dir}/build-stats.txt")
  if (cd "${dir}" && GOBIN="${gobin}" CGO_ENABLED=0 GOTOOLCHAIN=local GOFLAGS=-buildvcs=false \
    "${timer[@]}" go install -p 2 -trimpath -ldflags "-s -w ${ldflags}" "${pkg}@${version}") >"${dir}/build.log" 2>&1; then
    built="$(find "${gobin}" -type f | head -n 1)"
    mv -f "${built}" "${dir}/${name}"
    rm -rf "${gobin}" "${dir}/build.log"
    exec 9>&-
    return 0
  fi
  rm -rf "${gobin}"
  sed 's/^/    /' "${dir}/build.log" | head -n 5 >&2
  die "${name} ${version} did not build (${dir}/build.log)"
}

# The Crossplane CLI (cmd/crank, named crossplane as upstream ships it) for the `crossplane render` tests,
# from its wrapper module. The version variable is the one upstream's own build sets (nix/build.nix);
# without it `crossplane version` prints an empty client version. Crossplane's CRDs are kept beside it so
# the e2e suite can dry-run the Composition, XRD and Function examples against the apiserver.
build_crossplane() {
  local dir src
  go_build crossplane crossplane github.com/crossplane/crossplane/v2/cmd/crank \
    "-X github.com/crossplane/crossplane/v2/internal/version.version=${crossplane_version}"
  dir="$(artifact_dir crossplane)"
  if [[ ! -d "${dir}/crds" ]]; then
    src="$(module_dir crossplane github.com/crossplane/crossplane/v2)"
    rm -rf "${dir}/crds.tmp"
    mkdir -p "${dir}/crds.tmp"
    cp "${src}"/cluster/crds/*.yaml "${dir}/crds.tmp/"
    chmod u+w "${dir}"/crds.tmp/*.yaml
    mv "${dir}/crds.tmp" "${dir}/crds"
  fi
}

# Crossplane core (cmd/crossplane, the controllers) and go-containerregistry's small OCI registry, for the
# GitOps tests that run real Crossplane against the cluster (test/e2e/cluster/crossplane-core.sh). Same
# wrapper module as the CLI, so both share one dependency graph. Not part of `up`: built on first use.
build_crossplane_core() {
  go_build crossplane-core crossplane github.com/crossplane/crossplane/v2/cmd/crossplane \
    "-X github.com/crossplane/crossplane/v2/internal/version.version=${crossplane_version}"
  go_build oci-registry crossplane github.com/google/go-containerregistry/cmd/registry ""
}

# Flux's source-controller and kustomize-controller for the Flux GitOps test (test/e2e/cluster/flux.sh), each
# from its own wrapper module, with its CRDs (the module's config/crd/bases) kept beside the binary. Upstream
# sets no version variable at link time. Built with the rest (`cluster.sh build`, which `up` runs when anything
# is missing), because the examples' tests need the CRDs and the Flux test has no time for a cold build.
build_flux() {
  local c dir src
  for c in source-controller kustomize-controller; do
    go_build "${c}" "flux-${c}" "github.com/fluxcd/${c}" ""
    dir="$(artifact_dir "${c}")"
    if [[ ! -d "${dir}/crds" ]]; then
      src="$(module_dir "flux-${c}" "github.com/fluxcd/${c}")"
      rm -rf "${dir}/crds.tmp"
      mkdir -p "${dir}/crds.tmp"
      cp "${src}"/config/crd/bases/*.yaml "${dir}/crds.tmp/"
      chmod u+w "${dir}"/crds.tmp/*.yaml
      mv "${dir}/crds.tmp" "${dir}/crds"
    fi
  done
}

# kubeconform checks our published schemas the way users run it (test/e2e/kubeconform.test.ts). It has no
# replace directives, and its go.sum pins its dependencies.
build_kubeconform() {
  go_install_tool kubeconform "${kubeconform_version}" github.com/yannh/kubeconform/cmd/kubeconform \
    "-X main.version=${kubeconform_version}"
}

# Argo CD's CRDs from its Go module (downloaded, not built) into <cache>/bin/argocd-crds-<version>/, for the
# examples tests (examples/argocd). The module is not a dependency of any wrapper module, so it is fetched
# by path@version; the checksum database still verifies it.
build_argocd_crds() {
  local dir="${bin_root}/argocd-crds-${argocd_version}" src
  if [[ -d "${dir}" && -s "${dir}/application-crd.yaml" ]]; then
    log "reuse ${dir}"
    return 0
  fi
  lock_build "${dir}" "${dir}/application-crd.yaml" || return 0
  src="$(cd "${dir}" && GOTOOLCHAIN=local GOFLAGS=-mod=mod go mod download -json "github.com/argoproj/argo-cd/v3@${argocd_version}" |
    sed -n 's/^[[:space:]]*"Dir": "\(.*\)",\{0,1\}$/\1/p')"
  [[ -n "${src}" && -d "${src}/manifests/crds" ]] || die "argo-cd ${argocd_version}: no manifests/crds in the module"
  cp "${src}"/manifests/crds/*-crd.yaml "${dir}/"
  chmod u+w "${dir}"/*.yaml
  exec 9>&-
  log "argo-cd ${argocd_version} CRDs in ${dir}"
}

# Source directory of a module in the Go module cache (downloads it if needed).
module_dir() { # <wrapper dir> <module path>
  (cd "${modules}/$1" && GOTOOLCHAIN=local GOFLAGS=-mod=readonly go mod download -json "$2" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",\{0,1\}$/\1/p')
}

all_built() {
  local b
  for b in "${components[@]}" kubectl; do
    [[ -x "$(binary_path "${b}")" ]] || return 1
  done
  [[ -s "$(artifact_dir kwok)/stages.yaml" && -d "$(artifact_dir karpenter-kwok)/crds" ]] \
    && [[ -x "$(binary_path crossplane)" && -d "$(artifact_dir crossplane)/crds" ]] \
    && [[ -x "${bin_root}/kubeconform-${kubeconform_version}/kubeconform" ]] \
    && [[ -s "${bin_root}/argocd-crds-${argocd_version}/application-crd.yaml" ]] \
    && [[ -x "$(binary_path source-controller)" && -d "$(artifact_dir source-controller)/crds" ]] \
    && [[ -x "$(binary_path kustomize-controller)" && -d "$(artifact_dir kustomize-controller)/crds" ]]
}

cmd_build() {
  command -v go >/dev/null || die "go is not on PATH (needed to build the cluster binaries)"
  local all=(etcd kubernetes kwok karpenter crossplane kubeconform argocd-crds flux) c
  (($# > 0)) || set -- "${all[@]}"
  for c in "$@"; do
    [[ " ${all[*]} crossplane-core " == *" ${c} "* ]] ||
      die "unknown component to build: ${c} (one of: ${all[*]} crossplane-core)"
  done
  # Sequential on purpose: one k8s build already uses both cores and several GB of memory.
  for c in "$@"; do
    "build_${c//-/_}"
  done
  log "binaries in ${bin_root}"
  local b
  for b in etcd kube-apiserver kubectl kwok karpenter-kwok crossplane source-controller kustomize-controller; do
    if [[ -x "$(binary_path "${b}")" ]]; then log "  $(binary_path "${b}")"; fi
  done
}

# ---------------------------------------------------------------------------------------------------------
# Process management: every component runs detached (own session), its PID in ${run_dir}/pids/<name>.pid.
# ---------------------------------------------------------------------------------------------------------

pid_file() { echo "${run_dir}/pids/$1.pid"; }
log_file() { echo "${run_dir}/logs/$1.log"; }

# Prints the recorded PID of a component if that process is alive AND still runs the expected binary
# (argv[0] is the absolute binary path we started): a recycled PID is never signalled.
live_pid() {
  local name="$1" pf pid argv0 expected
  pf="$(pid_file "${name}")"
  [[ -s "${pf}" ]] || return 1
  read -r pid expected <"${pf}"
  [[ "${pid}" =~ ^[0-9]+$ ]] || return 1
  [[ -r "/proc/${pid}/cmdline" ]] || return 1
  argv0="$(tr '\0' '\n' <"/proc/${pid}/cmdline" | head -n1)" || return 1
  [[ -n "${expected}" && "${argv0}" == "${expected}" ]] || return 1
  echo "${pid}"
}

# start_component <name> <binary> [args...]; environment comes from the caller (env VAR=... is fine).
# setsid: the component must outlive the shell (and the test runner) that started it, and must not get
# its terminal's or process group's signals. The inner shell records its own PID and then execs the
# binary, so the recorded PID is the component's (setsid may fork when called from a group leader).
start_component() {
  local name="$1" bin="$2"
  shift 2
  log "starting ${name}"
  setsid bash -c 'echo "$$ $1" >"$0"; exec "$@"' "$(pid_file "${name}")" "${bin}" "$@" \
    </dev/null >>"$(log_file "${name}")" 2>&1 &
  local i
  for i in $(seq 50); do
    [[ -s "$(pid_file "${name}")" ]] && return 0
    sleep 0.1
  done
  die "${name} did not start"
}

# stop_component <name>: TERM, then KILL after a timeout.
stop_component() {
  local name="$1" pid i
  pid="$(live_pid "${name}")" || {
    rm -f "$(pid_file "${name}")"
    return 0
  }
  log "stopping ${name} (pid ${pid})"
  kill -TERM "${pid}" 2>/dev/null || true
  for i in $(seq 100); do # 10 s
    live_pid "${name}" >/dev/null || break
    sleep 0.1
  done
  if pid="$(live_pid "${name}")"; then
    log "${name} (pid ${pid}) ignored TERM: KILL"
    kill -KILL "${pid}" 2>/dev/null || true
    for i in $(seq 50); do
      live_pid "${name}" >/dev/null || break
      sleep 0.1
    done
  fi
  rm -f "$(pid_file "${name}")"
}

# wait_for <name> <description> <command...>: polls the command until it succeeds, failing early (with the
# component's log tail) if the component dies, or after ${up_timeout}s.
wait_for() {
  local name="$1" what="$2"
  shift 2
  local deadline=$((SECONDS + up_timeout))
  until "$@" >/dev/null 2>&1; do
    if ! live_pid "${name}" >/dev/null; then
      tail -n 40 "$(log_file "${name}")" >&2 || true
      die "${name} exited while waiting for ${what} (log: $(log_file "${name}"))"
    fi
    if ((SECONDS >= deadline)); then
      tail -n 40 "$(log_file "${name}")" >&2 || true
      die "timed out after ${up_timeout}s waiting for ${what} (log: $(log_file "${name}"))"
    fi
    sleep 0.5
  done
  log "${what}: ok"
}

# Fails if something already listens on a port we are about to use (a foreign process or another cluster).
require_free_port() {
  if (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; then
    die "port $1 on 127.0.0.1 is in use (set NODEROTATION_PORT_BASE to move every port)"
  fi
}

# ---------------------------------------------------------------------------------------------------------
# up
# ---------------------------------------------------------------------------------------------------------

# One CA and one key pair with O=system:masters and the apiserver's SANs; it serves the apiserver and
# authenticates every component and the tests (as kwokctl does). A separate key signs ServiceAccount tokens.
make_pki() {
  local pki="${run_dir}/pki"
  mkdir -p "${pki}"
  (
    cd "${pki}"
    openssl req -x509 -newkey rsa:2048 -nodes -sha256 -days 3650 -subj "/CN=noderotation-e2e-ca" \
      -keyout ca.key -out ca.crt 2>/dev/null
    cat >admin.ext <<'EOF'
basicConstraints = critical, CA:FALSE
keyUsage = critical, digitalSignature, keyEncipherment
extendedKeyUsage = serverAuth, clientAuth
subjectAltName = DNS:localhost, DNS:kubernetes, DNS:kubernetes.default, DNS:kubernetes.default.svc, DNS:kubernetes.default.svc.cluster.local, IP:127.0.0.1, IP:10.96.0.1
EOF
    openssl req -newkey rsa:2048 -nodes -sha256 -subj "/O=system:masters/CN=kubernetes-admin" \
      -keyout admin.key -out admin.csr 2>/dev/null
    openssl x509 -req -sha256 -days 3650 -in admin.csr -CA ca.crt -CAkey ca.key -CAcreateserial \
      -extfile admin.ext -out admin.crt 2>/dev/null
    openssl genrsa -out sa.key 2048 2>/dev/null
    openssl rsa -in sa.key -pubout -out sa.pub 2>/dev/null
    chmod 600 ./*.key
  )
}

make_kubeconfig() {
  local pki="${run_dir}/pki"
  cat >"${run_dir}/kubeconfig" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: noderotation-e2e
  cluster:
    server: https://127.0.0.1:${apiserver_port}
    certificate-authority: ${pki}/ca.crt
users:
- name: admin
  user:
    client-certificate: ${pki}/admin.crt
    client-key: ${pki}/admin.key
contexts:
- name: noderotation-e2e
  context:
    cluster: noderotation-e2e
    user: admin
current-context: noderotation-e2e
EOF
}

# The env file is how `status`, the tests and humans find this cluster.
write_env() {
  cat >"${run_dir}/env" <<EOF
# Written by test/e2e/cluster/cluster.sh up
RUN_DIR=${run_dir}
KUBECONFIG=${run_dir}/kubeconfig
KUBECTL=$(binary_path kubectl)
COMPONENTS="${components[*]}"
K8S_VERSION=${k8s_version}
ETCD_VERSION=${etcd_version}
KWOK_VERSION=${kwok_version}
KARPENTER_VERSION=${karpenter_version}
CROSSPLANE=$(binary_path crossplane)
CROSSPLANE_VERSION=${crossplane_version}
CROSSPLANE_CRDS=$(artifact_dir crossplane)/crds
ARGOCD_CRDS=${bin_root}/argocd-crds-${argocd_version}
KARPENTER_CRDS=$(artifact_dir karpenter-kwok)/crds
ETCD_PORT=${etcd_port}
APISERVER_PORT=${apiserver_port}
KCM_PORT=${kcm_port}
SCHEDULER_PORT=${scheduler_port}
KWOK_PORT=${kwok_port}
KARPENTER_METRICS_PORT=${karpenter_metrics_port}
KARPENTER_HEALTH_PORT=${karpenter_health_port}
AUDIT_LOG=${run_dir}/logs/audit.log
AUDIT_USERS=${audit_users}
EOF
}

# The apiserver's audit flags. Always: the writes of ServiceAccounts to the kinds the controller writes, at Request
# level (the request body: a patch as sent, a created Pod, a delete's options), so that test/e2e/parity.test.ts
# reads the controller's writes from the apiserver, not from the controller. In the e2e cluster only the tests'
# controller processes authenticate as ServiceAccounts (everything else uses the admin kubeconfig), so this is a
# few hundred lines a suite. With NODEROTATION_AUDIT_USERS, first: the named users' requests at Metadata level
# (verb, resource, user agent, response code, timestamps; never bodies), so the fleet benchmark counts one
# controller's requests without logging KWOK's thousands of heartbeats. Nothing else is recorded.
audit_flags() {
  local policy="${run_dir}/audit-policy.yaml" u
  {
    echo "apiVersion: audit.k8s.io/v1"
    echo "kind: Policy"
    echo "omitStages: [RequestReceived]"
    echo "rules:"
    if [[ -n "${audit_users}" ]]; then
      echo "  - level: Metadata"
      echo "    users:"
      for u in ${audit_users//,/ }; do echo "      - \"${u}\""; done
    fi
    echo "  - level: Request"
    echo "    userGroups: [system:serviceaccounts]"
    echo "    verbs: [create, update, patch, delete, deletecollection]"
    echo "    resources:"
    echo "      - {group: \"\", resources: [nodes, pods]}"
    echo "      - {group: karpenter.sh, resources: [nodeclaims, nodepools]}"
    echo "      - {group: noderotation.io, resources: [rotationpolicies, rotationpolicies/status]}"
    echo "      - {group: coordination.k8s.io, resources: [leases]}"
    echo "  - level: None"
  } >"${policy}"
  echo "--audit-policy-file=${policy}"
  echo "--audit-log-path=${run_dir}/logs/audit.log"
  echo "--audit-log-format=json"
  echo "--audit-log-maxsize=0"
}

kubectl_() { "$(binary_path kubectl)" --kubeconfig "${run_dir}/kubeconfig" "$@"; }
curl_api() { curl -sf --max-time 5 --cacert "${run_dir}/pki/ca.crt" --cert "${run_dir}/pki/admin.crt" --key "${run_dir}/pki/admin.key" "$@"; }
# KCM and scheduler serve a self-signed certificate; /healthz is in --authorization-always-allow-paths.
curl_insecure() { curl -sfk --max-time 5 "$@"; }

start_etcd() {
  mkdir -p "${run_dir}/etcd"
  # --unsafe-no-fsync: test data, and fsync on a shared disk is what makes etcd slow.
  start_component etcd "$(binary_path etcd)" \
    --name=e2e --data-dir="${run_dir}/etcd" \
    --listen-client-urls="http://127.0.0.1:${etcd_port}" --advertise-client-urls="http://127.0.0.1:${etcd_port}" \
    --listen-peer-urls="http://127.0.0.1:${etcd_peer_port}" --initial-advertise-peer-urls="http://127.0.0.1:${etcd_peer_port}" \
    --initial-cluster="e2e=http://127.0.0.1:${etcd_peer_port}" \
    --unsafe-no-fsync=true --quota-backend-bytes=2147483648 --log-level=warn
  wait_for etcd "etcd /health" curl -sf --max-time 5 "http://127.0.0.1:${etcd_port}/health"
}

start_apiserver() {
  local pki="${run_dir}/pki" audit=()
  mapfile -t audit < <(audit_flags)
  # --advertise-address: otherwise the kubernetes Service points at the machine's external address.
  start_component kube-apiserver "$(binary_path kube-apiserver)" \
    --etcd-servers="http://127.0.0.1:${etcd_port}" \
    --bind-address=127.0.0.1 --advertise-address=127.0.0.1 --secure-port="${apiserver_port}" \
    --tls-cert-file="${pki}/admin.crt" --tls-private-key-file="${pki}/admin.key" --client-ca-file="${pki}/ca.crt" \
    --service-account-issuer=https://kubernetes.default.svc.cluster.local \
    --service-account-key-file="${pki}/sa.pub" --service-account-signing-key-file="${pki}/sa.key" \
    --authorization-mode=RBAC --service-cluster-ip-range=10.96.0.0/16 --allow-privileged=true \
    --endpoint-reconciler-type=none --profiling=false "${audit[@]}"
  wait_for kube-apiserver "kube-apiserver /readyz" curl_api "https://127.0.0.1:${apiserver_port}/readyz"
}

start_controller_manager() {
  local kc="${run_dir}/kubeconfig" pki="${run_dir}/pki" scale=()
  # At fleet scale on 2 shared cores the apiserver answers slowly enough that Lease renewals every 10 s fall
  # behind and Nodes flap to Unknown (tainted, their pods evicted); Leases every 150 s need a longer grace.
  if [[ -n "${fleet_scale}" ]]; then scale=(--node-monitor-grace-period=20m); fi
  # KCM: ReplicaSets, garbage collection, PDB status (the Eviction API reads disruptionsAllowed), node
  # lifecycle (the node.kubernetes.io/unschedulable taint), the default ServiceAccount.
  start_component kube-controller-manager "$(binary_path kube-controller-manager)" \
    --kubeconfig="${kc}" --authentication-kubeconfig="${kc}" --authorization-kubeconfig="${kc}" \
    --bind-address=127.0.0.1 --secure-port="${kcm_port}" --leader-elect=false \
    --authorization-always-allow-paths=/healthz,/readyz,/livez,/metrics \
    --root-ca-file="${pki}/ca.crt" --service-account-private-key-file="${pki}/sa.key" \
    --service-cluster-ip-range=10.96.0.0/16 --profiling=false "${scale[@]}"
  wait_for kube-controller-manager "kube-controller-manager /healthz" curl_insecure "https://127.0.0.1:${kcm_port}/healthz"
}

start_scheduler() {
  local kc="${run_dir}/kubeconfig"
  start_component kube-scheduler "$(binary_path kube-scheduler)" \
    --kubeconfig="${kc}" --authentication-kubeconfig="${kc}" --authorization-kubeconfig="${kc}" \
    --bind-address=127.0.0.1 --secure-port="${scheduler_port}" --leader-elect=false \
    --authorization-always-allow-paths=/healthz,/readyz,/livez,/metrics --profiling=false
  wait_for kube-scheduler "kube-scheduler /healthz" curl_insecure "https://127.0.0.1:${scheduler_port}/healthz"
  wait_for kube-controller-manager "ServiceAccount default/default" kubectl_ get serviceaccount default -n default
}

start_kwok() {
  local lease=40 scale=()
  if [[ -n "${fleet_scale}" ]]; then
    lease=600
    cat >"${run_dir}/kwok-fleet.yaml" <<'EOF'
apiVersion: config.kwok.x-k8s.io/v1alpha1
kind: KwokConfiguration
options:
  nodeLeaseParallelism: 16
  nodePlayStageParallelism: 16
  podPlayStageParallelism: 16
EOF
    scale=(--config="${run_dir}/kwok-fleet.yaml" -v=WARN)
  fi
  # Only the Nodes Karpenter's kwok provider creates (annotation kwok.x-k8s.io/node=fake) are managed; their
  # pods get fake IPs, so never exec or port-forward into them.
  start_component kwok "$(binary_path kwok)" \
    --kubeconfig="${run_dir}/kubeconfig" --config="$(artifact_dir kwok)/stages.yaml" \
    --manage-all-nodes=false --manage-nodes-with-annotation-selector=kwok.x-k8s.io/node=fake \
    --node-ip=127.0.0.1 --node-lease-duration-seconds="${lease}" "${scale[@]}" \
    --server-address="127.0.0.1:${kwok_port}"
  wait_for kwok "kwok /healthz" curl -sf --max-time 5 "http://127.0.0.1:${kwok_port}/healthz"
}

apply_crds() {
  kubectl_ apply --server-side -f "$(artifact_dir karpenter-kwok)/crds/" >/dev/null
  local crd
  for crd in nodepools.karpenter.sh nodeclaims.karpenter.sh kwoknodeclasses.karpenter.kwok.sh; do
    wait_for kube-apiserver "CRD ${crd} Established" kubectl_ wait --for=condition=Established --timeout=5s "crd/${crd}"
  done
}

start_karpenter() {
  # Out-of-cluster Karpenter: no leader election, fast batching so tests do not wait 10 s per provisioning.
  KUBECONFIG="${run_dir}/kubeconfig" DISABLE_LEADER_ELECTION=true \
    METRICS_PORT="${karpenter_metrics_port}" HEALTH_PROBE_PORT="${karpenter_health_port}" \
    BATCH_IDLE_DURATION=1s BATCH_MAX_DURATION=5s LOG_LEVEL=debug \
    start_component karpenter-kwok "$(binary_path karpenter-kwok)"
  wait_for karpenter-kwok "karpenter /readyz" curl -sf --max-time 5 "http://127.0.0.1:${karpenter_health_port}/readyz"
}

# A KWOKNodeClass `default` and a NodePool `default`; tests create their own NodePools beside it and pin
# their pods with a karpenter.sh/nodepool nodeSelector.
apply_defaults() {
  kubectl_ apply -f - >/dev/null <<'EOF'
apiVersion: karpenter.kwok.sh/v1alpha1
kind: KWOKNodeClass
metadata:
  name: default
---
apiVersion: karpenter.sh/v1
kind: NodePool
metadata:
  name: default
spec:
  disruption:
    consolidationPolicy: WhenEmptyOrUnderutilized
    consolidateAfter: 30s
  limits:
    cpu: "1000"
  template:
    spec:
      expireAfter: Never
      requirements:
        - {key: kubernetes.io/os, operator: In, values: [linux]}
        - {key: kubernetes.io/arch, operator: In, values: [amd64]}
        - {key: karpenter.sh/capacity-type, operator: In, values: [on-demand]}
      nodeClassRef: {group: karpenter.kwok.sh, kind: KWOKNodeClass, name: default}
EOF
  wait_for karpenter-kwok "NodePool default Ready" kubectl_ wait --for=condition=Ready --timeout=5s nodepool/default
}

# True when the run directory belongs to a cluster whose components all run and whose apiserver is ready.
cluster_healthy() {
  [[ -f "${run_dir}/env" ]] || return 1
  local c
  for c in "${components[@]}"; do
    live_pid "${c}" >/dev/null || return 1
  done
  curl_api "https://127.0.0.1:${apiserver_port}/readyz" >/dev/null 2>&1
}

up_failed() {
  local rc=$?
  trap - EXIT INT TERM HUP PIPE
  local i
  for ((i = ${#components[@]} - 1; i >= 0; i--)); do
    stop_component "${components[i]}" || true
  done
  log "up failed (exit ${rc}): components stopped, logs kept in ${run_dir}/logs/"
  exit "${rc}"
}

cmd_up() {
  if cluster_healthy; then
    log "cluster already running in ${run_dir}"
    echo "${run_dir}/kubeconfig"
    return 0
  fi
  local previous_logs=""
  if [[ -e "${run_dir}" ]]; then
    log "stale run directory ${run_dir} (a crash or a partial start): cleaning it up"
    # Keep the crashed run's logs (they say why it died) in the new run directory, logs/previous/.
    if [[ -d "${run_dir}/logs" ]]; then
      previous_logs="$(mktemp -d "${TMPDIR:-/tmp}/noderotation-previous-logs.XXXXXX")"
      cp -r "${run_dir}/logs/." "${previous_logs}/" 2>/dev/null || true
      rm -rf "${previous_logs}/previous"
    fi
    cmd_down
  fi
  all_built || cmd_build
  local p
  for p in "${etcd_port}" "${etcd_peer_port}" "${apiserver_port}" "${kcm_port}" "${scheduler_port}" \
    "${kwok_port}" "${karpenter_metrics_port}" "${karpenter_health_port}"; do
    require_free_port "${p}"
  done
  mkdir -p "${run_dir}/pids" "${run_dir}/logs"
  # A failed or interrupted start stops what it started, but keeps the run directory and its logs for
  # diagnosis (the next `up` treats it as stale and removes it).
  trap 'up_failed' EXIT
  trap 'exit 130' INT TERM HUP PIPE
  if [[ -n "${previous_logs}" ]]; then
    mv "${previous_logs}" "${run_dir}/logs/previous"
  fi
  local t0=${SECONDS}
  make_pki
  make_kubeconfig
  write_env
  start_etcd
  start_apiserver
  start_controller_manager
  start_scheduler
  start_kwok
  apply_crds
  start_karpenter
  apply_defaults
  trap - EXIT INT TERM HUP PIPE
  log "cluster up in $((SECONDS - t0))s; run directory ${run_dir}"
  log "kubectl: $(binary_path kubectl) --kubeconfig ${run_dir}/kubeconfig"
  echo "${run_dir}/kubeconfig"
}

# ---------------------------------------------------------------------------------------------------------
# down / status
# ---------------------------------------------------------------------------------------------------------

cmd_down() {
  local i
  # Flux and Crossplane (cluster.sh flux|crossplane up) first: they talk to the apiserver. Flux before
  # Crossplane: pruning what Flux applied may need Crossplane to remove its finalizers.
  cmd_flux_down
  cmd_crossplane_down
  cmd_registry_down
  for ((i = ${#components[@]} - 1; i >= 0; i--)); do
    stop_component "${components[i]}"
  done
  # Refuse to delete anything that does not look like our run directory.
  if [[ -d "${run_dir}" ]]; then
    if [[ -d "${run_dir}/pids" || -f "${run_dir}/env" || -z "$(ls -A "${run_dir}")" ]]; then
      rm -rf "${run_dir}"
      log "removed ${run_dir}"
    else
      die "${run_dir} does not look like a cluster run directory: not removing it"
    fi
  fi
}

# print_status <component>...: one line each, running (with its PID) or dead; returns 1 if any is dead.
print_status() {
  local c pid rc=0
  for c in "$@"; do
    if pid="$(live_pid "${c}")"; then
      printf '%-24s running (pid %s)\n' "${c}" "${pid}"
    else
      printf '%-24s dead\n' "${c}"
      rc=1
    fi
  done
  return "${rc}"
}

cmd_status() {
  local rc=0
  if [[ ! -d "${run_dir}" ]]; then
    echo "no cluster (run directory ${run_dir} does not exist)"
    return 3
  fi
  print_status "${components[@]}" || rc=1
  echo "kubeconfig: ${run_dir}/kubeconfig"
  echo "kubectl:    $(binary_path kubectl)"
  echo "logs:       ${run_dir}/logs/"
  return "${rc}"
}

# shellcheck source=crossplane-core.sh
source "${here}/crossplane-core.sh"
# shellcheck source=flux.sh
source "${here}/flux.sh"
# shellcheck source=chart-registry.sh
source "${here}/chart-registry.sh"

# restart <component> [seconds]: what a crash and the kubelet's restart do to one component, on a running cluster.
cmd_restart() {
  local name="${1:-}" down="${2:-0}"
  cluster_healthy || die "no healthy cluster in ${run_dir} (cluster.sh up first)"
  case "${name}" in
    kube-apiserver | kwok | karpenter-kwok) ;;
    *) die "restart: unknown or unsupported component '${name}' (kube-apiserver, kwok, karpenter-kwok)" ;;
  esac
  [[ "${down}" =~ ^[0-9]+$ ]] || die "restart: seconds must be a whole number, not '${down}'"
  stop_component "${name}"
  sleep "${down}"
  case "${name}" in
    kube-apiserver) start_apiserver ;;
    kwok) start_kwok ;;
    karpenter-kwok) start_karpenter ;;
  esac
}

case "${1:-}" in
  build)
    shift
    cmd_build "$@"
    ;;
  up) cmd_up ;;
  down) cmd_down ;;
  restart)
    shift
    cmd_restart "$@"
    ;;
  status) cmd_status ;;
  env) cat "${run_dir}/env" ;;
  crossplane)
    case "${2:-}" in
      up) cmd_crossplane_up ;;
      down) cmd_crossplane_down ;;
      status) cmd_crossplane_status ;;
      *)
        echo "usage: $0 crossplane up|down|status" >&2
        exit 2
        ;;
    esac
    ;;
  registry)
    case "${2:-}" in
      up) cmd_registry_up ;;
      down) cmd_registry_down ;;
      status) cmd_registry_status ;;
      *)
        echo "usage: $0 registry up|down|status" >&2
        exit 2
        ;;
    esac
    ;;
  flux)
    case "${2:-}" in
      up) cmd_flux_up ;;
      down) cmd_flux_down ;;
      status) cmd_flux_status ;;
      *)
        echo "usage: $0 flux up|down|status" >&2
        exit 2
        ;;
    esac
    ;;
  *)
    echo "usage: $0 build [component...]|up|down|status|env|restart <component> [seconds]|crossplane up|down|status|flux up|down|status|registry up|down|status" >&2
    exit 2
    ;;
esac
