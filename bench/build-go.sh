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

ghz_version=$(awk '$1 == "github.com/bojand/ghz" { print $2 }' "$here/ghz/go.mod" | head -1)
sdk_version=$(awk '$1 == "require" && $2 == "github.com/crossplane/function-sdk-go" { print $3 }' "$here/go-peer/go.mod")
build ghz "$ghz_version" "$here/ghz" github.com/bojand/ghz/cmd/ghz
build go-peer "$sdk_version" "$here/go-peer" .
