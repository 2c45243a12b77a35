#!/usr/bin/env bash
# Builds the function benchmark's Go tools from the committed modules, once, into the cache outside the
# clone: ghz (the load generator, bench/ghz/go.mod) and the Go SDK peer (bench/go-peer/). Prints the two
# binaries' paths. Re-running with the binaries present does nothing.
#   bash bench/build-go.sh
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cache="${NODEROTATION_CACHE:-$HOME/.cache/noderotation}/bin"
export GOTOOLCHAIN=local

# build NAME VERSION MODULE_DIR PACKAGE: go build PACKAGE inside MODULE_DIR into $cache/NAME-VERSION/NAME.
build() {
  local name=$1 version=$2 dir=$3 pkg=$4
  local out="$cache/$name-$version/$name"
  if [[ ! -x "$out" ]]; then
    mkdir -p "$(dirname "$out")"
    echo "building $name $version (first use only; about a minute on 2 cores)" >&2
    # A temporary name and a rename: an interrupted build never leaves a half-written binary behind.
    (cd "$dir" && go build -trimpath -buildvcs=false -ldflags '-s -w' -o "$out.tmp.$$" "$pkg")
    mv "$out.tmp.$$" "$out"
  fi
  echo "$out"
}

# version_of MODULE GO_MOD: the version GO_MOD requires (in a require block or on a require line).
version_of() {
  local v
  v=$(awk -v m="$1" '$1 == m { print $2 } $1 == "require" && $2 == m { print $3 }' "$2" | head -1)
  [[ -n "$v" ]] || { echo "build-go.sh: $2 does not require $1" >&2; exit 1; }
  echo "$v"
}

build ghz "$(version_of github.com/bojand/ghz "$here/ghz/go.mod")" "$here/ghz" github.com/bojand/ghz/cmd/ghz
# The peer's own code changes too: its cache directory names the SDK version and a hash of its sources.
peer_hash=$(cat "$here/go-peer/main.go" "$here/go-peer/go.sum" | sha256sum | cut -c1-8)
build go-peer "$(version_of github.com/crossplane/function-sdk-go "$here/go-peer/go.mod")-$peer_hash" \
  "$here/go-peer" .
