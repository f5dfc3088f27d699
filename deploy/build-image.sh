#!/usr/bin/env bash
# Builds the troco container image from deploy/Containerfile without any network access beyond
# what `go build` needs (none when the module cache is filled). Usage: deploy/build-image.sh [tag]
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
tag=${1:-troco:latest}
engine=${CONTAINER_ENGINE:-}
if [[ -z $engine ]]; then
	if command -v podman >/dev/null 2>&1; then engine=podman; else engine=docker; fi
fi
ctx=$(mktemp -d)
trap 'rm -rf "$ctx"' EXIT
CGO_ENABLED=0 go build -trimpath -ldflags='-s -w' -o "$ctx/troco" .
ca=/etc/ssl/certs/ca-certificates.crt
[[ -f $ca ]] || ca=/etc/pki/tls/certs/ca-bundle.crt
cp "$ca" "$ctx/ca-certificates.crt"
mkdir -p "$ctx/data"
cp deploy/Containerfile "$ctx/Containerfile"
"$engine" build --pull=false -f "$ctx/Containerfile" -t "$tag" "$ctx"
echo "built $tag with $engine"
