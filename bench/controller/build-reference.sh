#!/usr/bin/env bash
# Builds the reference controller (AkashiSN/node-rotation-controller) from its tagged source for the fleet
# benchmark, into ${NODEROTATION_CACHE:-~/.cache/noderotation}/bin/reference-<tag>/, with its own CRD beside it.
#
#   bash bench/controller/build-reference.sh SOURCE_DIR [TAG]     # TAG defaults to v0.6.1
#
# SOURCE_DIR is a git clone of the reference repository. The Go module proxy answers 403 ("This module version
# is not available") for github.com/AkashiSN/node-rotation-controller at every version tried (v0.5.0,
# v0.6.0–v0.6.5, @latest, @main) and for its version list, so `go install …@v0.6.1` and a wrapper module that
# requires it cannot work; the tag's tree is taken from the clone instead (git archive, nothing else of the
# clone is used) and built with `go build` of its main package, `./cmd` (from the module's file list),
# with its dependencies from the module proxy as pinned by its own go.sum.
set -euo pipefail
src="${1:?usage: build-reference.sh SOURCE_DIR [TAG]}"
tag="${2:-v0.6.1}"
cache_root="${NODEROTATION_CACHE:-${XDG_CACHE_HOME:-${HOME}/.cache}/noderotation}"
dir="${cache_root}/bin/reference-${tag}"
bin="${dir}/node-rotation-controller"
if [[ -x "${bin}" ]]; then
  echo "reuse ${bin}"
  exit 0
fi
mkdir -p "${dir}"
tree="$(mktemp -d)"
trap 'rm -rf "${tree}"' EXIT
git -C "${src}" archive "${tag}" | tar -x -C "${tree}"
cp "${tree}/config/crd/bases/noderotation.io_rotationpolicies.yaml" "${dir}/"
git -C "${src}" rev-parse "${tag}^{commit}" >"${dir}/commit.txt"
echo "building ${tag} ($(cat "${dir}/commit.txt")) into ${bin}; a few minutes on 2 cores"
(cd "${tree}" && CGO_ENABLED=0 GOTOOLCHAIN=local GOFLAGS=-mod=readonly \
  /usr/bin/time -v -o "${dir}/build-stats.txt" \
  go build -p 2 -trimpath -buildvcs=false -ldflags "-s -w" -o "${bin}.tmp" ./cmd)
mv -f "${bin}.tmp" "${bin}"
echo "built ${bin}"
