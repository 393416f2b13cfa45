#!/usr/bin/env bash
# System packages the tests and `make run` need that PyPI does not ship. Installed only when
# missing and only where we may (root with apt); elsewhere we say what is missing and go on,
# and the tests that need it say so too.
set -euo pipefail
need=()
command -v redis-server >/dev/null || need+=(redis-server)
command -v chromium >/dev/null || need+=(chromium)  # browser tests (tests/browser), driven by Playwright
command -v promtool >/dev/null || need+=(prometheus)  # promtool checks and the stack test's real Prometheus
command -v docker-compose >/dev/null || need+=(docker-compose)  # validates docker-compose.yml (no engine needed)
command -v kubectl >/dev/null || need+=(kubernetes-client)
command -v npm >/dev/null || need+=(npm)  # openapi-typescript and tsc for the generated-client check (package.json)  # `kubectl kustomize deploy/k8s` for the image test
if [ ${#need[@]} -eq 0 ]; then exit 0; fi
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
  echo "installing system packages: ${need[*]}"
  apt-get update -qq >/dev/null
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null
else
  echo "note: missing system packages (${need[*]}); install them with your package manager" >&2
fi
