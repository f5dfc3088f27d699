#!/usr/bin/env bash
# OpenAPI checks against a running troco (called by .ci/run step g):
#   check.sh BASE_URL CA_PEM TEST_KEY
# Lints both served documents with Redocly CLI, generates TypeScript clients with
# openapi-typescript (default options), type-checks a payment flow with tsc --strict (bodies the
# server refuses must not type-check) and runs it against the server.
set -euo pipefail
url=$1 ca=$2 key=$3
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp "$here/package.json" "$here/flow.ts" "$here/tsconfig.json" "$work/"
cd "$work"
npm install --no-audit --no-fund --silent >/dev/null
curl -sSf --cacert "$ca" "$url/v1/openapi.json" -o v1.json
curl -sSf --cacert "$ca" "$url/api/v1/openapi.json" -o api.json
npx --no-install redocly lint v1.json api.json --format=summary
npx --no-install openapi-typescript v1.json -o v1.ts
npx --no-install openapi-typescript api.json -o api.ts
npx --no-install tsc -p tsconfig.json
NODE_EXTRA_CA_CERTS=$ca TROCO_URL=$url TROCO_KEY=$key node out/flow.js
