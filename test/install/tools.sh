#!/usr/bin/env bash
# The installation tools the install tests run: helm, kustomize, promtool and actionlint (the GitHub Actions
# workflows' linter), built from Go modules into the same cache as the cluster binaries (docs/cluster.md), one
# directory per tool and version: <cache>/bin/<tool>-<version>/<tool>. kubeconform and the Crossplane CLI are
# built by test/e2e/cluster/cluster.sh from its own wrapper modules.
#
#   tools.sh build [helm|kustomize|promtool|actionlint|kubeconform|schemas|crossplane]...
#                                                             build (or reuse) the named tools; default all but
#                                                             crossplane (the release workflow's, not the tests')
#   tools.sh path <tool>                                      print the cached binary's (or directory's) path
#   tools.sh gen [helm|kustomize|promtool|actionlint]...      rewrite the wrapper modules (after a version bump)
#
# Each tool has a committed wrapper module (modules/<tool>/go.mod + go.sum) that only requires the upstream
# module and names the command as a `tool`: the version lives there, builds are reproducible and need nothing
# but the Go module proxy. A per-directory lock makes two checkouts building at once share the work.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
modules="${here}/modules"
cache_root="${NODEROTATION_CACHE:-${XDG_CACHE_HOME:-${HOME}/.cache}/noderotation}"
bin_root="${cache_root}/bin"

log() { printf '[tools %s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }
# shellcheck source=../e2e/cluster/go-build.sh
source "${here}/../e2e/cluster/go-build.sh"

# The upstream module and command of each tool, and the -X flag that sets its reported version.
upstream() {
  case "$1" in
    helm) echo "helm.sh/helm/v3 helm.sh/helm/v3/cmd/helm helm.sh/helm/v3/internal/version.version" ;;
    kustomize) echo "sigs.k8s.io/kustomize/kustomize/v5 sigs.k8s.io/kustomize/kustomize/v5 sigs.k8s.io/kustomize/api/provenance.version" ;;
    promtool) echo "github.com/prometheus/prometheus github.com/prometheus/prometheus/cmd/promtool github.com/prometheus/common/version.Version" ;;
    actionlint) echo "github.com/rhysd/actionlint github.com/rhysd/actionlint/cmd/actionlint github.com/rhysd/actionlint.version" ;;
    *) die "unknown tool $1 (helm, kustomize, promtool, actionlint)" ;;
  esac
}

# The version pinned by the wrapper module's go.mod.
tool_version() {
  local mod
  read -r mod _ _ < <(upstream "$1")
  awk -v m="${mod}" '$1 == "require" && $2 == m {print $3; exit} $1 == m && $2 ~ /^v/ {print $2; exit}' \
    "${modules}/$1/go.mod"
}

# The kubeconform schemas of the built-in and third-party kinds (test/install/kube-schemas.ts), made from the
# Kubernetes version of the e2e cluster, prometheus-operator's CRDs and Crossplane's: a directory, not a binary.
# prometheus-operator v0.88.0: the proxy here refuses v0.86.0, v0.87.0 and v0.95.2.
PROMETHEUS_OPERATOR_VERSION=v0.88.0
k8s_version() {
  awk '$1 == "require" && $2 == "k8s.io/kubernetes" {print $3; exit} $1 == "k8s.io/kubernetes" {print $2; exit}' \
    "${here}/../e2e/cluster/modules/kubernetes/go.mod"
}
crossplane_version() {
  awk '$1 == "require" && $2 ~ /crossplane\/v2$/ {print $3; exit} $1 ~ /crossplane\/v2$/ {print $2; exit}' \
    "${here}/../e2e/cluster/modules/crossplane/go.mod"
}
schemas_dir() {
  echo "${bin_root}/kube-schemas-$(k8s_version)-po${PROMETHEUS_OPERATOR_VERSION}-xp$(crossplane_version)"
}
# Directory of a module version in the Go module cache, downloaded if needed (run inside a wrapper module, so
# that the go.sum there is used where it lists the module).
module_dir() { # <dir to run in> <module@version>
  (cd "$1" && GOTOOLCHAIN=local GOFLAGS=-mod=mod go mod download -json "$2" |
    sed -n 's/^[[:space:]]*"Dir": "\(.*\)",\{0,1\}$/\1/p')
}
build_schemas() {
  local dir k8s po xp
  dir="$(schemas_dir)"
  if [[ -f "${dir}/apps/deployment_v1.json" ]]; then
    log "reuse ${dir}"
    return 0
  fi
  mkdir -p "$(dirname "${dir}")"
  exec 8>"${dir}.lock"
  flock 8
  if [[ -f "${dir}/apps/deployment_v1.json" ]]; then
    exec 8>&-
    return 0
  fi
  log "making kubeconform schemas in ${dir}"
  k8s="$(module_dir "${here}/../e2e/cluster/modules/kubernetes" "k8s.io/kubernetes@$(k8s_version)")"
  xp="$(module_dir "${here}/../e2e/cluster/modules/crossplane" "github.com/crossplane/crossplane/v2@$(crossplane_version)")"
  po="$(module_dir /tmp "github.com/prometheus-operator/prometheus-operator@${PROMETHEUS_OPERATOR_VERSION}")"
  [[ -n "${k8s}" && -n "${xp}" && -n "${po}" ]] || die "could not download the modules the schemas come from"
  local crds=("${po}/example/prometheus-operator-crd/monitoring.coreos.com_servicemonitors.yaml"
    "${po}/example/prometheus-operator-crd/monitoring.coreos.com_prometheusrules.yaml"
    "${xp}/cluster/crds/pkg.crossplane.io_functions.yaml"
    "${xp}/cluster/crds/pkg.crossplane.io_deploymentruntimeconfigs.yaml")
  rm -rf "${dir}"
  (cd "${here}/../.." && node --import tsx test/install/kube-schemas.ts "${dir}" "${k8s}/api/openapi-spec/swagger.json" "${crds[@]}")
  # The CRDs themselves, for the e2e suite's server-side dry-run of the ServiceMonitor and PrometheusRule.
  mkdir -p "${dir}/crds"
  cp "${crds[@]:0:2}" "${dir}/crds/"
  exec 8>&-
}

tool_path() {
  if [[ "$1" == schemas ]]; then
    schemas_dir
    return
  fi
  if [[ "$1" == kubeconform ]]; then
    local v
    v="$(sed -n 's/^KUBECONFORM_VERSION=//p' "${here}/../e2e/cluster/versions.env")"
    echo "${bin_root}/kubeconform-${v}/kubeconform"
    return
  fi
  if [[ "$1" == crossplane ]]; then
    echo "${bin_root}/crossplane-$(crossplane_version)/crossplane"
    return
  fi
  echo "${bin_root}/$1-$(tool_version "$1")$(flavour "$1")/$1"
}

# Build flags of a tool, and the cache directory's suffix that keeps a binary built with them apart. promtool
# without Prometheus' service discovery plugins (`remove_all_sd`; rule checks and tests need none): a cold
# build took 1:59 instead of 41 min (docs/operations.md).
build_flags() { [[ "$1" == promtool ]] && echo "-tags=remove_all_sd"; return 0; }
flavour() { [[ "$1" == promtool ]] && echo "-nosd"; return 0; }

build() {
  local name="$1" mod pkg xflag version
  if [[ "${name}" == schemas ]]; then
    build_schemas
    return
  fi
  if [[ "${name}" == kubeconform || "${name}" == crossplane ]]; then
    bash "${here}/../e2e/cluster/cluster.sh" build "${name}"
    return
  fi
  read -r mod pkg xflag < <(upstream "${name}")
  version="$(tool_version "${name}")"
  build_module "$(tool_path "${name}")" "${modules}/${name}" "${pkg}" "-X ${xflag}=${version}" "${name} ${version}" \
    "$(build_flags "${name}")"
}

# gen <tool> <version>: a main module that requires the upstream module at <version> and lists its command as
# a tool; the upstream `go` line is copied so the binary gets upstream's default GODEBUG settings.
gen() {
  local name="$1" version="$2" mod pkg gomod dir="${modules}/$1"
  read -r mod pkg _ < <(upstream "${name}")
  gomod="$(GOTOOLCHAIN=local GOFLAGS=-mod=mod go mod download -json "${mod}@${version}" |
    sed -n 's/^[[:space:]]*"GoMod": "\(.*\)",\{0,1\}$/\1/p')"
  mkdir -p "${dir}"
  rm -f "${dir}/go.sum"
  {
    echo "// Generated by test/install/tools.sh gen from ${mod}@${version}: do not edit by hand."
    echo "module noderotation.test/install-tools/${name}"
    echo
    grep -E '^go [0-9.]+$' "${gomod}"
    grep -E '^godebug ' "${gomod}" || true
    echo
    echo "require ${mod} ${version}"
  } >"${dir}/go.mod"
  # None of the four upstream go.mod files has replace or exclude directives (which would not apply to a
  # dependency), so requiring the module is all it takes.
  (cd "${dir}" && GOTOOLCHAIN=local GOFLAGS=-mod=mod go mod edit -tool="${pkg}" && GOTOOLCHAIN=local GOFLAGS=-mod=mod go mod tidy)
}

# The versions `gen` writes. helm v3.22.0 is the newest v3 the proxy serves; kustomize v5.8.2 is the newest
# that builds on Go 1.26 (v5.8.3 needs Go 1.27); prometheus v0.316.0 is the newest served; actionlint v1.7.12 is
# the newest the proxy lists (it lists only some of actionlint's releases).
declare -A PINNED=([helm]=v3.22.0 [kustomize]=v5.8.2 [promtool]=v0.316.0 [actionlint]=v1.7.12)

cmd="${1:-build}"
shift || true
case "${cmd}" in
  build)
    tools=("$@")
    [[ ${#tools[@]} -gt 0 ]] || tools=(kubeconform helm kustomize promtool actionlint schemas)
    for t in "${tools[@]}"; do build "${t}"; done
    ;;
  path) tool_path "${1:?tools.sh path <tool>}" ;;
  gen)
    tools=("$@")
    [[ ${#tools[@]} -gt 0 ]] || tools=(helm kustomize promtool actionlint)
    for t in "${tools[@]}"; do gen "${t}" "${PINNED[${t}]:?no pinned version for ${t}}"; done
    ;;
  *) die "usage: tools.sh build|path|gen [tool]..." ;;
esac
