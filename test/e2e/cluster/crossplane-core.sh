# Real Crossplane core beside the e2e cluster, out of cluster, for the GitOps tests (docs/gitops.md).
# Sourced by cluster.sh (`cluster.sh crossplane up|down|status`); uses its helpers (start_component,
# wait_for, kubectl_, ...). Not part of `cluster.sh up`: only the tests that need Crossplane start it, so the
# rest of the suite pays nothing.
#
# What `crossplane up` does, in order (each step idempotent, so `up` on a running stack only re-checks it):
#   1. builds (or reuses) crossplane-core and oci-registry into the cache;
#   2. starts go-containerregistry's registry on localhost (plain HTTP, in memory: a restart forgets the package);
#   3. `crossplane core init`: Crossplane's CRDs, its CA and its client certificate (fresh Secrets), webhooks off;
#   4. reads init's certificates out of their Secrets and signs the function's server certificate (for
#      127.0.0.1: Crossplane verifies the endpoint's host) with init's CA;
#   5. starts our function (`noderotation function` from the sources), requiring client certificates;
#   6. `crossplane core start --package-runtime=External`, dialling functions with the client certificate;
#   7. builds functions/package with `crossplane xpkg build` and pushes it with `crossplane xpkg push`;
#   8. applies a Function pointing at the pushed tag, and stands in for the External runtime: a TLS Secret
#      with the function's server certificate and the FunctionRevision's status.endpoint (127.0.0.1:port)
#      and status.tlsServerSecretName; then waits for the revision to be RevisionHealthy (nothing sets the
#      Function's Healthy: that needs RuntimeHealthy, which only a real runtime reports).

crossplane_namespace=crossplane-system
registry_port=$((port_base + 520))
crossplane_metrics_port=$((port_base + 521))
crossplane_health_port=$((port_base + 522))
crossplane_webhook_port=$((port_base + 523))
function_port=$((port_base + 524))
# The tag the package is pushed as and the Function that installs it.
function_name=function-noderotation
function_package="127.0.0.1:${registry_port}/${function_name}:v0.1.0"
# Stopped in reverse by `crossplane down` (and by `cluster.sh down`, before the cluster).
crossplane_components=(oci-registry crossplane-function crossplane-core)

crossplane_dir() { echo "${run_dir}/crossplane"; }

crossplane_write_env() {
  cat >"$(crossplane_dir)/env" <<EOF
# Written by test/e2e/cluster/cluster.sh crossplane up
CROSSPLANE_CORE=$(binary_path crossplane-core)
CROSSPLANE_NAMESPACE=${crossplane_namespace}
CROSSPLANE_METRICS_PORT=${crossplane_metrics_port}
CROSSPLANE_HEALTH_PORT=${crossplane_health_port}
REGISTRY_PORT=${registry_port}
FUNCTION_NAME=${function_name}
FUNCTION_PACKAGE=${function_package}
FUNCTION_PORT=${function_port}
EOF
}

# Crossplane's init applies its CRDs and then uses them at once (e.g. "no matches for kind Lock") before
# the apiserver serves them: retried until it passes or up_timeout runs out. The TLS Secrets are deleted
# first, so that init issues the CA and client certificate itself (it keeps complete Secrets), as on a
# fresh install.
crossplane_init() {
  local deadline=$((SECONDS + up_timeout)) log
  log="$(log_file crossplane-init)"
  kubectl_ delete secret crossplane-root-ca crossplane-tls-client -n "${crossplane_namespace}" --ignore-not-found \
    >/dev/null
  until KUBECONFIG="${run_dir}/kubeconfig" POD_NAMESPACE="${crossplane_namespace}" \
    CRDS_PATH="$(artifact_dir crossplane)/crds" ENABLE_WEBHOOKS=false \
    TLS_CA_SECRET_NAME=crossplane-root-ca TLS_CLIENT_SECRET_NAME=crossplane-tls-client \
    "$(binary_path crossplane-core)" core init >>"${log}" 2>&1; do
    if ((SECONDS >= deadline)); then
      tail -n 20 "${log}" >&2
      die "crossplane core init did not succeed within ${up_timeout}s (log: ${log})"
    fi
    sleep 1
  done
  log "crossplane core init: ok"
}

# The certificates `crossplane core init` made, as a real cluster has them: init's CA (Secret
# crossplane-root-ca) and Crossplane's client certificate (crossplane-tls-client: its CA's own subject and no
# authority key identifier, which OpenSSL alone takes for a self-signed certificate; functions/tls.ts verifies
# it as Go does). The function's server certificate is what Crossplane's Deployment runtime would make, signed
# by the same CA in the same style (the CA's subject, no key identifiers), but for 127.0.0.1: Crossplane
# verifies the endpoint's host, and the External runtime here serves on loopback.
secret_file() {
  kubectl_ get secret "$1" -n "${crossplane_namespace}" -o "go-template={{index .data \"$2\" | base64decode}}" >"$3" ||
    die "cannot read $2 of Secret ${crossplane_namespace}/$1"
}

crossplane_certs() {
  local dir client function
  dir="$(crossplane_dir)/pki" client="$(crossplane_dir)/client" function="$(crossplane_dir)/function"
  mkdir -p "${dir}" "${client}" "${function}"
  secret_file crossplane-root-ca tls.crt "${dir}/ca.crt"
  secret_file crossplane-root-ca tls.key "${dir}/ca.key"
  secret_file crossplane-tls-client tls.crt "${client}/tls.crt"
  secret_file crossplane-tls-client tls.key "${client}/tls.key"
  secret_file crossplane-tls-client ca.crt "${client}/ca.crt"
  chmod 600 "${dir}/ca.key" "${client}/tls.key"
  (
    cd "${dir}"
    openssl genrsa -out function.key 2048 2>/dev/null
    # The CA's name copied as it is: `-subj` would refuse init's C=Earth (a country code is two letters).
    openssl x509 -x509toreq -in ca.crt -signkey function.key -out function.csr 2>/dev/null
    printf '%s\n' 'basicConstraints = critical, CA:FALSE' \
      'keyUsage = critical, digitalSignature, keyEncipherment, dataEncipherment' 'extendedKeyUsage = serverAuth' \
      "subjectAltName = DNS:${function_name}, IP:127.0.0.1" 'subjectKeyIdentifier = none' \
      'authorityKeyIdentifier = none' >function.ext
    openssl x509 -req -sha256 -days 365 -in function.csr -CA ca.crt -CAkey ca.key -set_serial 2022 \
      -extfile function.ext -out function.crt 2>/dev/null || die "cannot sign the function's server certificate"
    chmod 600 function.key
    cp ca.crt "${function}/ca.crt" && cp function.crt "${function}/tls.crt" && cp function.key "${function}/tls.key"
  )
}

start_registry() {
  start_component oci-registry "$(binary_path oci-registry)" -port "${registry_port}"
  wait_for oci-registry "registry /v2/" curl -sf --max-time 5 "http://127.0.0.1:${registry_port}/v2/"
}

# Our function as Crossplane's External runtime would run it, from this checkout's sources. The response TTL is
# 10 s instead of the default 60 s, so a new NodePool is picked up within seconds and the tests stay short
# (docs/gitops.md, "The response TTL").
start_function() {
  local node
  node="$(command -v node)" || die "node is not on PATH"
  (
    cd "${here}/../../.."
    start_component crossplane-function "${node}" --import tsx cli/from-source.ts function \
      --tls-certs-dir "$(crossplane_dir)/function" --address "127.0.0.1:${function_port}" --metrics-address '' \
      --response-ttl 10s
  )
  wait_for crossplane-function "function gRPC port ${function_port}" bash -c "exec 3<>/dev/tcp/127.0.0.1/${function_port}"
}

start_crossplane_core() {
  mkdir -p "$(crossplane_dir)/xpkg-cache"
  KUBECONFIG="${run_dir}/kubeconfig" POD_NAMESPACE="${crossplane_namespace}" \
    start_component crossplane-core "$(binary_path crossplane-core)" core start \
    --package-runtime=External --enable-webhooks=false \
    --xpkg-cache-dir="$(crossplane_dir)/xpkg-cache" --tls-client-certs-dir="$(crossplane_dir)/client" \
    --metrics-port="${crossplane_metrics_port}" --health-probe-port="${crossplane_health_port}" \
    --webhook-port="${crossplane_webhook_port}"
  wait_for crossplane-core "crossplane /readyz" curl -sf --max-time 5 "http://127.0.0.1:${crossplane_health_port}/readyz"
}

# Built and pushed the way a user publishes a function package (without a runtime image: the External
# runtime needs none).
push_package() {
  local xpkg
  xpkg="$(crossplane_dir)/${function_name}.xpkg"
  "$(binary_path crossplane)" xpkg build --package-root="${here}/../../../functions/package" -o "${xpkg}" \
    >>"$(log_file crossplane-xpkg)" 2>&1 || die "crossplane xpkg build failed (log: $(log_file crossplane-xpkg))"
  "$(binary_path crossplane)" xpkg push -f "${xpkg}" "${function_package}" \
    >>"$(log_file crossplane-xpkg)" 2>&1 || die "crossplane xpkg push failed (log: $(log_file crossplane-xpkg))"
  log "pushed ${function_package}"
}

revision_name() {
  kubectl_ get functionrevisions.pkg.crossplane.io -l "pkg.crossplane.io/package=${function_name}" \
    -o 'go-template={{range .items}}{{if eq .spec.desiredState "Active"}}{{.metadata.name}}{{end}}{{end}}'
}

has_revision() { [[ -n "$(revision_name)" ]]; }

# The External runtime's job, done by hand: the server certificate's Secret and the revision's endpoint.
install_function() {
  kubectl_ apply -f - >/dev/null <<EOF
apiVersion: pkg.crossplane.io/v1
kind: Function
metadata:
  name: ${function_name}
spec:
  package: ${function_package}
EOF
  kubectl_ create secret tls "${function_name}-tls-server" -n "${crossplane_namespace}" \
    --cert="$(crossplane_dir)/function/tls.crt" --key="$(crossplane_dir)/function/tls.key" \
    --dry-run=client -o yaml | kubectl_ apply -f - >/dev/null
  wait_for crossplane-core "FunctionRevision of ${function_name}" has_revision
  local rev
  rev="$(revision_name)"
  kubectl_ patch functionrevisions.pkg.crossplane.io "${rev}" --subresource=status --type=merge \
    -p "{\"status\":{\"endpoint\":\"127.0.0.1:${function_port}\",\"tlsServerSecretName\":\"${function_name}-tls-server\"}}" >/dev/null
  wait_for crossplane-core "FunctionRevision ${rev} RevisionHealthy" kubectl_ wait --for=condition=RevisionHealthy --timeout=5s \
    "functionrevisions.pkg.crossplane.io/${rev}"
}

crossplane_healthy() {
  local c
  [[ -f "$(crossplane_dir)/env" ]] || return 1
  for c in "${crossplane_components[@]}"; do
    live_pid "${c}" >/dev/null || return 1
  done
  curl -sf --max-time 5 "http://127.0.0.1:${crossplane_health_port}/readyz" >/dev/null 2>&1 || return 1
  # Its objects too: a test that deletes Crossplane's CRDs (examples.test.ts does) leaves the processes
  # running but the Function gone, and `up` must then start over.
  local rev
  rev="$(revision_name 2>/dev/null)" && [[ -n "${rev}" ]] || return 1
  kubectl_ wait --for=condition=RevisionHealthy --timeout=1s "functionrevisions.pkg.crossplane.io/${rev}" >/dev/null 2>&1
}

cmd_crossplane_up() {
  cluster_healthy || die "no cluster running in ${run_dir}: run \`cluster.sh up\` first"
  if crossplane_healthy; then
    log "crossplane already running"
    echo "$(crossplane_dir)/env"
    return 0
  fi
  cmd_crossplane_down
  [[ -x "$(binary_path crossplane-core)" && -x "$(binary_path oci-registry)" ]] || cmd_build crossplane-core
  [[ -x "$(binary_path crossplane)" && -d "$(artifact_dir crossplane)/crds" ]] || cmd_build crossplane
  local p
  for p in "${registry_port}" "${crossplane_metrics_port}" "${crossplane_health_port}" \
    "${crossplane_webhook_port}" "${function_port}"; do
    require_free_port "${p}"
  done
  mkdir -p "$(crossplane_dir)"
  trap 'crossplane_up_failed' EXIT
  trap 'exit 130' INT TERM HUP PIPE
  local t0=${SECONDS}
  start_registry
  kubectl_ create namespace "${crossplane_namespace}" --dry-run=client -o yaml | kubectl_ apply -f - >/dev/null
  crossplane_init
  crossplane_certs
  start_function
  start_crossplane_core
  push_package
  install_function
  crossplane_write_env
  trap - EXIT INT TERM HUP PIPE
  log "crossplane up in $((SECONDS - t0))s"
  echo "$(crossplane_dir)/env"
}

crossplane_up_failed() {
  local rc=$?
  trap - EXIT INT TERM HUP PIPE
  cmd_crossplane_down
  log "crossplane up failed (exit ${rc}): its components stopped, logs kept in ${run_dir}/logs/"
  exit "${rc}"
}

# Uninstalls the Function while Crossplane still runs (it holds finalizers only Crossplane removes: left
# behind, they would keep anyone's `kubectl delete crd functions.pkg.crossplane.io` terminating forever), then
# stops the processes. Crossplane's CRDs and Secrets stay, as after uninstalling a controller.
cmd_crossplane_down() {
  local i
  if live_pid crossplane-core >/dev/null; then
    kubectl_ delete functions.pkg.crossplane.io "${function_name}" --ignore-not-found --wait=true --timeout=60s \
      >/dev/null 2>&1 || log "could not delete Function ${function_name} (its finalizers may remain)"
    kubectl_ delete functionrevisions.pkg.crossplane.io -l "pkg.crossplane.io/package=${function_name}" \
      --ignore-not-found --wait=true --timeout=60s >/dev/null 2>&1 ||
      log "could not delete the FunctionRevisions of ${function_name} (their finalizers may remain)"
  fi
  for ((i = ${#crossplane_components[@]} - 1; i >= 0; i--)); do
    stop_component "${crossplane_components[i]}"
  done
  rm -rf "$(crossplane_dir)"
}

cmd_crossplane_status() {
  print_status "${crossplane_components[@]}"
}
