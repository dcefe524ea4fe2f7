#!/usr/bin/env bash
# Container test: builds the image with ../shared/tools/container-smoke.sh (rootful podman, a local
# stand-in for node:24-bookworm-slim carrying the Node 24 binary of the npm registry's node@24
# package, health probe), then runs it again configured by environment variables alone and checks
# it as a partner would: Node 24, a create, a magic-AWB tracking call, the non-root user, a graceful
# stop on SIGTERM, and data that survives the restart in the /data volume. Last, the Testcontainers
# module (src/client/testcontainers.ts) starts the image through podman's Docker-compatible socket
# (test/container/, Ryuk disabled: nothing can be pulled), and fails a start the sandbox refuses at once.
# Usage: scripts/container-test.sh   (from anywhere; needs root for podman)
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
SMOKE=${CONTAINER_SMOKE:-$ROOT/../shared/tools/container-smoke.sh}
say() { echo "[container-test] $*"; }

if [ "$(id -u)" != 0 ]; then
  say "SKIPPED: needs root (rootful podman builds and runs the image); run .ci/run as root to include it."
  exit 0
fi
if [ ! -f "$SMOKE" ]; then
  say "SKIPPED: $SMOKE not found (the machine's container tooling)."
  exit 0
fi

WORK=${OCI_WORK:-/tmp/oci-ci}; HPORT=${HOST_PORT:-18080}; CALLER_KEEP=${KEEP:-0}
IMG=localhost/ci-smoke:latest; NAME=sandbox-ct-$$; VOL=sandbox-ct-data-$$; TOKEN=ct-token-$$
BASE=http://127.0.0.1:$HPORT

# 1. build + first run + health + HEALTHCHECK, keeping the image for the calls below
KEEP=1 OCI_WORK=$WORK HOST_PORT=$HPORT bash "$SMOKE" "$ROOT" 4010 /__sandbox/health
export CONTAINERS_CONF="$WORK/containers.conf" CONTAINERS_STORAGE_CONF="$WORK/storage.conf"

SERVICE=
cleanup() {
  [ -z "$SERVICE" ] || kill "$SERVICE" 2>/dev/null || true
  podman rm -f -t 5 "$NAME" >/dev/null 2>&1 || true
  podman volume rm -f "$VOL" >/dev/null 2>&1 || true
  if [ "$CALLER_KEEP" != 1 ]; then podman rmi -a -f >/dev/null 2>&1 || true; rm -rf "$WORK"; fi
}
trap cleanup EXIT
fail() { say "FAIL: $*"; podman logs "$NAME" 2>&1 | tail -20 || true; exit 1; }

start() {
  podman run -d --pull=never --name "$NAME" --hostname sandbox -p "127.0.0.1:$HPORT:4010" -v "$VOL:/data" \
    -e SANDBOX_TOKENS="$TOKEN" -e SANDBOX_AWB_DELAY=0 -e SANDBOX_LOG_LEVEL=warn "$IMG" \
    2> >(grep -v 'systemd connection' >&2) >/dev/null
  for _ in $(seq 1 100); do
    curl -fs --max-time 2 "$BASE/__sandbox/health" >/dev/null && return 0
    [ "$(podman inspect -f '{{.State.Running}}' "$NAME")" = true ] || break
    sleep 0.1
  done
  fail "the container did not answer /__sandbox/health"
}
# call METHOD PATH [BODY] -> prints "STATUS BODY"
call() {
  local args=(-s -o /tmp/ct-body.$$ -w '%{http_code}' -X "$1" "$BASE$2" -H "Authorization: Bearer $TOKEN")
  [ $# -ge 3 ] && args+=(-H 'Content-Type: application/json' --data-binary "$3")
  local status; status=$(curl "${args[@]}")
  echo "$status $(cat /tmp/ct-body.$$)"; rm -f /tmp/ct-body.$$
}
expect_status() { # expect_status WANT "STATUS BODY" what
  [ "${2%% *}" = "$1" ] || fail "$3: expected $1, got ${2:0:300}"
  say "ok: $3 -> $1"
}

start
NODE_V=$(podman exec "$NAME" node -v)
[ "${NODE_V%%.*}" = v24 ] || fail "the image runs Node $NODE_V, not 24"
say "ok: runs on Node $NODE_V"
[ "$(podman exec "$NAME" id -u)" != 0 ] || fail "the server runs as root"
say "ok: runs as user $(podman exec "$NAME" id -un)"

EXAMPLE=$(curl -fs "$BASE/__sandbox/openapi.json" | node -e '
  const spec = JSON.parse(require("fs").readFileSync(0, "utf8"));
  const examples = spec.paths["/v1/order"].post.requestBody.content["application/json"].examples;
  process.stdout.write(JSON.stringify(Object.values(examples)[0].value));')
CREATED=$(call POST /v1/order "$EXAMPLE")
expect_status 201 "$CREATED" "POST /v1/order with the spec example"
ORDER_NO=$(node -e 'console.log(JSON.parse(process.argv[1]).order_numbers[0])' "${CREATED#* }")

expect_status 200 "$(call GET /v1/order/tracking/SBXDLV00000001)" "GET /v1/order/tracking/SBXDLV00000001 (magic AWB)"
expect_status 401 "$(curl -s -o /dev/null -w '%{http_code}' "$BASE/v1/order/tracking/SBXDLV00000001") -" "tracking without a token"

podman stop -t 10 "$NAME" >/dev/null
CODE=$(podman inspect -f '{{.State.ExitCode}}' "$NAME")
[ "$CODE" = 0 ] || fail "SIGTERM: expected exit code 0, got $CODE"
say "ok: SIGTERM stops it gracefully (exit 0)"
podman rm "$NAME" >/dev/null

start
expect_status 200 "$(call GET "/__sandbox/orders/$ORDER_NO")" "order $ORDER_NO kept in the /data volume across a restart"

# A crash, then a new container on the same volume (as an upgrade does): the old lock is stale and taken over.
podman kill -s KILL "$NAME" >/dev/null
podman rm "$NAME" >/dev/null
start
expect_status 200 "$(call GET "/__sandbox/orders/$ORDER_NO")" "a new container after kill -9 takes the stale lock over (fixed --hostname) and keeps order $ORDER_NO"
podman rm -f -t 15 "$NAME" >/dev/null

# The Testcontainers module against the image just built, through podman's Docker-compatible
# socket (started with this test's own configuration: CONTAINERS_CONF, CONTAINERS_STORAGE_CONF).
SOCK=$WORK/podman.sock
rm -f "$SOCK"
podman system service --time=0 "unix://$SOCK" 2> >(grep -v 'systemd connection' >&2) & SERVICE=$!
for _ in $(seq 1 100); do [ -S "$SOCK" ] && break; sleep 0.1; done
[ -S "$SOCK" ] || fail "podman system service did not open $SOCK"
(cd "$ROOT" && DOCKER_HOST="unix://$SOCK" TESTCONTAINERS_RYUK_DISABLED=true SANDBOX_IMAGE="$IMG" \
  npx vitest run --config test/container/vitest.config.ts) || fail "the Testcontainers module's test (test/container/)"
say "ok: the Testcontainers module starts the image, gets a webhook on the test host, tracks, stops, and fails a refused start at once with its message"
say "OK"
