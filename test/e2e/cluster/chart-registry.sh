# A local OCI registry for Helm charts beside the e2e cluster (`cluster.sh registry up|down|status`): the
# install test packages the chart, pushes it with `helm push` and installs it with `helm install oci://…`, as a
# user installs a released chart. go-containerregistry's registry (the one crossplane-core.sh uses for the
# function's package), plain HTTP on loopback, in memory: a restart forgets the charts. Sourced by cluster.sh.

chart_registry_port=$((port_base + 540))

cmd_registry_up() {
  cluster_healthy || die "no cluster running in ${run_dir}: run \`cluster.sh up\` first"
  if ! live_pid chart-registry >/dev/null; then
    [[ -x "$(binary_path oci-registry)" ]] || cmd_build crossplane-core
    require_free_port "${chart_registry_port}"
    start_component chart-registry "$(binary_path oci-registry)" -port "${chart_registry_port}"
  fi
  wait_for chart-registry "registry /v2/" curl -sf --max-time 5 "http://127.0.0.1:${chart_registry_port}/v2/"
  echo "127.0.0.1:${chart_registry_port}"
}

cmd_registry_down() { stop_component chart-registry; }

cmd_registry_status() { print_status chart-registry; }
