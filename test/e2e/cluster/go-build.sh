# The cache builds shared by test/e2e/cluster/cluster.sh and test/install/tools.sh (sourced; the caller defines
# log and die). One cache directory per binary and version, a lock per directory, an atomic rename.

# lock_build <dir> <dest>: takes the build lock of a cache directory, waiting while another run (another
# clone or engineer sharing the cache) builds the same binary; two builds at once only double the time on 2
# cores. Returns 1 when the binary appeared meanwhile. The lock is released when the caller closes fd 9 or
# exits (a failed build dies).
lock_build() {
  local dir="$1" dest="$2"
  mkdir -p "${dir}"
  exec 9>"${dir}/.build.lock"
  if ! flock -n 9; then
    log "another build of ${dest} is running: waiting for it (${dir}/.build.lock)"
    flock 9
  fi
  if [[ -x "${dest}" ]]; then
    exec 9>&-
    log "reuse ${dest} (built meanwhile)"
    return 1
  fi
}

# build_module <dest> <wrapper module dir> <package> <ldflags> <label> [build flags]: builds <package> inside its wrapper module
# into <dest> unless it is already there. Builds to a temporary name and renames, so an interrupted build never
# leaves a half-written binary that a later run would trust. Peak memory and time go to build-stats.txt (from
# /usr/bin/time -v) beside it.
build_module() {
  local dest="$1" mod="$2" pkg="$3" ldflags="$4" label="$5" flags="${6:-}"
  local dir tmp
  dir="$(dirname "${dest}")"
  if [[ -x "${dest}" ]]; then
    log "reuse ${dest}"
    return 0
  fi
  lock_build "${dir}" "${dest}" || return 0
  tmp="${dest}.tmp.$$"
  log "building ${label} from ${pkg} (this can take minutes)"
  local timer=()
  [[ -x /usr/bin/time ]] && timer=(/usr/bin/time -v -o "${dir}/build-stats.txt")
  # CGO off: static binaries, no C toolchain needed. -p 2: the machines have 2 cores, and more parallel
  # compiles of k8s packages only raise peak memory. -mod=readonly: go.sum must already be complete.
  if ! (cd "${mod}" && CGO_ENABLED=0 GOTOOLCHAIN=local GOFLAGS=-mod=readonly \
    "${timer[@]}" go build -p 2 -trimpath -buildvcs=false ${flags:+"${flags}"} -ldflags "-s -w ${ldflags}" \
      -o "${tmp}" "${pkg}"); then
    rm -f "${tmp}"
    die "build of ${label} failed"
  fi
  mv -f "${tmp}" "${dest}"
  exec 9>&-
  if [[ -f "${dir}/build-stats.txt" ]]; then
    log "built ${label}: $(awk -F': ' '/Elapsed \(wall clock\)/{e=$2} /Maximum resident set size/{m=$2} END{printf "wall %s, peak RSS %.0f MiB", e, m/1024}' "${dir}/build-stats.txt")"
  fi
}
