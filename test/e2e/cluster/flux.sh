# Flux (source-controller and kustomize-controller, Flux v2.7) and a Git server beside the e2e cluster, out of
# cluster, for the Flux GitOps test (docs/gitops.md). Sourced by cluster.sh (`cluster.sh flux up|down|status`);
# uses its helpers (start_component, wait_for, kubectl_, ...). Not part of `cluster.sh up`: only the test that
# needs Flux starts it, so the rest of the suite pays nothing.
#
# What `flux up` does, in order (each step idempotent, so `up` on a running stack only re-checks it):
#   1. builds (or reuses) source-controller and kustomize-controller into the cache (`cluster.sh build flux`);
#   2. applies their CRDs (the modules' config/crd/bases) and the flux-system namespace;
#   3. starts the Git server (test/e2e/cluster/git-server.ts: `git http-backend` behind Node) on loopback,
#      serving the bare repositories under <run dir>/flux/git; a test creates its own and pushes to it;
#   4. starts source-controller (its artifact storage in <run dir>/flux/storage, served on loopback) and
#      kustomize-controller, both with KUBECONFIG (no --kubeconfig flag) and no notification-controller
#      (`--events-addr=`: events still go to the apiserver).

flux_namespace=flux-system
source_metrics_port=$((port_base + 530))
source_health_port=$((port_base + 531))
source_storage_port=$((port_base + 532))
kustomize_metrics_port=$((port_base + 533))
kustomize_health_port=$((port_base + 534))
git_port=$((port_base + 535))
# Stopped in reverse by `flux down` (and by `cluster.sh down`, before the cluster).
flux_components=(git-server source-controller kustomize-controller)
# Deleted in reverse by `flux down`: the Kustomizations (pruning what they applied) before their sources.
flux_crds=(gitrepositories.source.toolkit.fluxcd.io kustomizations.kustomize.toolkit.fluxcd.io)

flux_dir() { echo "${run_dir}/flux"; }

flux_write_env() {
  cat >"$(flux_dir)/env" <<EOF
# Written by test/e2e/cluster/cluster.sh flux up
FLUX_NAMESPACE=${flux_namespace}
SOURCE_CONTROLLER=$(binary_path source-controller)
KUSTOMIZE_CONTROLLER=$(binary_path kustomize-controller)
SOURCE_CONTROLLER_VERSION=${source_controller_version}
KUSTOMIZE_CONTROLLER_VERSION=${kustomize_controller_version}
GIT_ROOT=$(flux_dir)/git
GIT_URL=http://127.0.0.1:${git_port}
EOF
}

flux_apply_crds() {
  kubectl_ apply --server-side --force-conflicts -f "$(artifact_dir source-controller)/crds/" \
    -f "$(artifact_dir kustomize-controller)/crds/" >/dev/null
  local crd
  for crd in "${flux_crds[@]}"; do
    wait_for kube-apiserver "CRD ${crd} Established" kubectl_ wait --for=condition=Established --timeout=5s "crd/${crd}"
  done
  wait_for kube-apiserver "namespace ${flux_namespace} Active" flux_namespace_active
}

# Creates the namespace unless it exists; true once it is Active. A namespace another test is deleting (phase
# Terminating) cannot be recreated until it is gone, and objects created in it meanwhile are refused.
flux_namespace_active() {
  local phase
  phase="$(kubectl_ get namespace "${flux_namespace}" --ignore-not-found -o 'jsonpath={.status.phase}')" || return 1
  if [[ -z "${phase}" ]]; then
    kubectl_ create namespace "${flux_namespace}" >/dev/null || return 1
    phase=Active
  fi
  [[ "${phase}" == Active ]]
}

start_git_server() {
  local node
  node="$(command -v node)" || die "node is not on PATH"
  mkdir -p "$(flux_dir)/git"
  (
    cd "${here}/../../.."
    start_component git-server "${node}" --import tsx test/e2e/cluster/git-server.ts "$(flux_dir)/git" "${git_port}"
  )
  wait_for git-server "git server port ${git_port}" bash -c "exec 3<>/dev/tcp/127.0.0.1/${git_port}"
}

# --requeue-dependency=2s: a Kustomization whose dependsOn is not Ready yet is looked at again after this
# (upstream's 30 s default would make the test wait for the platform's Kustomization in 30 s steps).
start_flux_controllers() {
  mkdir -p "$(flux_dir)/storage"
  KUBECONFIG="${run_dir}/kubeconfig" RUNTIME_NAMESPACE="${flux_namespace}" \
    start_component source-controller "$(binary_path source-controller)" \
    --storage-path="$(flux_dir)/storage" --storage-addr="127.0.0.1:${source_storage_port}" \
    --storage-adv-addr="127.0.0.1:${source_storage_port}" --events-addr= \
    --metrics-addr="127.0.0.1:${source_metrics_port}" --health-addr="127.0.0.1:${source_health_port}" \
    --log-level=info
  KUBECONFIG="${run_dir}/kubeconfig" RUNTIME_NAMESPACE="${flux_namespace}" \
    start_component kustomize-controller "$(binary_path kustomize-controller)" \
    --no-remote-bases=true --events-addr= --requeue-dependency=2s \
    --metrics-addr="127.0.0.1:${kustomize_metrics_port}" --health-addr="127.0.0.1:${kustomize_health_port}" \
    --log-level=info
  wait_for source-controller "source-controller /readyz" \
    curl -sf --max-time 5 "http://127.0.0.1:${source_health_port}/readyz"
  wait_for kustomize-controller "kustomize-controller /readyz" \
    curl -sf --max-time 5 "http://127.0.0.1:${kustomize_health_port}/readyz"
}

flux_healthy() {
  local c crd
  [[ -f "$(flux_dir)/env" ]] || return 1
  for c in "${flux_components[@]}"; do
    live_pid "${c}" >/dev/null || return 1
  done
  curl -sf --max-time 5 "http://127.0.0.1:${source_health_port}/readyz" >/dev/null 2>&1 || return 1
  curl -sf --max-time 5 "http://127.0.0.1:${kustomize_health_port}/readyz" >/dev/null 2>&1 || return 1
  # Its CRDs too: a test that deletes them (examples.test.ts does) leaves the processes running but idle.
  for crd in "${flux_crds[@]}"; do
    kubectl_ wait --for=condition=Established --timeout=1s "crd/${crd}" >/dev/null 2>&1 || return 1
  done
}

cmd_flux_up() {
  cluster_healthy || die "no cluster running in ${run_dir}: run \`cluster.sh up\` first"
  if flux_healthy; then
    log "flux already running"
    echo "$(flux_dir)/env"
    return 0
  fi
  cmd_flux_down
  [[ -x "$(binary_path source-controller)" && -x "$(binary_path kustomize-controller)" ]] || cmd_build flux
  local p
  for p in "${source_metrics_port}" "${source_health_port}" "${source_storage_port}" "${kustomize_metrics_port}" \
    "${kustomize_health_port}" "${git_port}"; do
    require_free_port "${p}"
  done
  mkdir -p "$(flux_dir)"
  trap 'flux_up_failed' EXIT
  trap 'exit 130' INT TERM HUP PIPE
  local t0=${SECONDS}
  flux_apply_crds
  start_git_server
  start_flux_controllers
  flux_write_env
  trap - EXIT INT TERM HUP PIPE
  log "flux up in $((SECONDS - t0))s"
  echo "$(flux_dir)/env"
}

flux_up_failed() {
  local rc=$?
  trap - EXIT INT TERM HUP PIPE
  cmd_flux_down
  log "flux up failed (exit ${rc}): its components stopped, logs kept in ${run_dir}/logs/"
  exit "${rc}"
}

# Deletes what is left of Flux's own objects while the controllers still run (they hold finalizers only the
# controllers remove: left behind, they would keep the namespace and the CRDs terminating forever), then stops
# the processes and deletes the namespace (with the events in it, so that the next run sees only its own). A
# Kustomization with `prune: true` deletes what it applied as it goes. The CRDs stay, as after uninstalling a
# controller.
cmd_flux_down() {
  local i kind
  if live_pid kustomize-controller >/dev/null && live_pid source-controller >/dev/null; then
    for ((i = ${#flux_crds[@]} - 1; i >= 0; i--)); do
      kind="${flux_crds[i]}"
      kubectl_ get crd "${kind}" >/dev/null 2>&1 || continue
      kubectl_ delete "${kind}" --all --all-namespaces --ignore-not-found --wait=true --timeout=60s \
        >/dev/null 2>&1 || log "could not delete every ${kind} (their finalizers may remain)"
    done
  fi
  for ((i = ${#flux_components[@]} - 1; i >= 0; i--)); do
    stop_component "${flux_components[i]}"
  done
  if [[ -d "$(flux_dir)" ]]; then
    kubectl_ delete namespace "${flux_namespace}" --ignore-not-found --wait=false >/dev/null 2>&1 || true
  fi
  rm -rf "$(flux_dir)"
}

cmd_flux_status() {
  print_status "${flux_components[@]}"
}
