#!/usr/bin/env bash
# Records the `kubernetes` family: kubectl with no cluster to talk to.
#
# Needs: kubectl (v1.32 here; its built-in kustomize), openssl, python3 (standard library).
# Run:   bash internal/eval/corpus/record/kubernetes.sh
# No API server can run here (kind/k3s are not available, etcd + kube-apiserver too heavy),
# so the server-side errors (admission, unknown fields rejected by the server, RBAC) are not
# recorded: these are what kubectl prints offline, against closed ports, and against a
# TLS endpoint on 127.0.0.1:39421 (a python3 ssl server with a self-signed certificate,
# started here and stopped on exit) whose CA the kubeconfig lacks. KUBECONFIG points to a
# file that does not exist, as on a machine never given a cluster.
source "$(dirname "$0")/lib.sh"


export KUBECONFIG="$CTXC_CORPUS_WORKDIR/no-such-kubeconfig"
PIDS=()
cleanup() {
  for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
}
trap cleanup EXIT
port_free() { ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
wait_port() {
  for _ in $(seq 1 100); do (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null && return 0; sleep 0.1; done
  echo "port $1 did not open" >&2; return 1
}
for p in 6443 8080 39421; do
  port_free "$p" || { echo "port $p is in use" >&2; exit 1; }
done

TLS="$CTXC_CORPUS_WORKDIR/k8s-tls-endpoint"
rm -rf "$TLS" && mkdir -p "$TLS"
openssl req -x509 -newkey rsa:2048 -nodes -subj /CN=dev-apiserver -addext subjectAltName=IP:127.0.0.1 -days 30 \
  -keyout "$TLS/key.pem" -out "$TLS/cert.pem" 2>/dev/null
cat >"$TLS/serve.py" <<'PY'
import http.server, ssl, sys
server = http.server.HTTPServer(("127.0.0.1", int(sys.argv[1])), http.server.SimpleHTTPRequestHandler)
ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
ctx.load_cert_chain("cert.pem", "key.pem")
server.socket = ctx.wrap_socket(server.socket, server_side=True)
server.serve_forever()
PY
(cd "$TLS" && exec python3 serve.py 39421 2>serve.log) &
PIDS+=($!)
wait_port 39421

V="kubectl version --client | sed -n 1p"
P=k8s-shop

# Failures
record kubernetes no-cluster-get-pods $P kubectl "$V" -- kubectl get pods -n shop
record kubernetes kubeconfig-refused $P kubectl "$V" -- kubectl --kubeconfig deploy/kubeconfig-staging.yaml rollout status deployment/orders-api
record kubernetes tls-unknown-authority $P kubectl "$V" -- kubectl --kubeconfig deploy/kubeconfig-dev.yaml get pods
record kubernetes context-not-found $P kubectl "$V" -- kubectl --kubeconfig deploy/kubeconfig-staging.yaml --context prod get pods
record kubernetes apply-yaml-error $P kubectl "$V" -- kubectl apply --dry-run=client -f deploy/jobs/migrate.yaml
record kubernetes apply-validate-offline $P kubectl "$V" -- kubectl apply --dry-run=client -f deploy/worker.yaml
record kubernetes apply-no-validate-offline $P kubectl "$V" -- kubectl apply --dry-run=client --validate=false -f deploy/worker.yaml
record kubernetes kustomize-missing-resource $P kubectl "$V" -- kubectl kustomize deploy/overlays/prod
record kubernetes configmap-invalid-key $P kubectl "$V" -- kubectl create configmap orders-config --from-env-file=config/orders.env --dry-run=client -o yaml

# Successes
record kubernetes kustomize-ok $P kubectl "$V" -- kubectl kustomize deploy/overlays/staging
record kubernetes create-dry-run-ok $P kubectl "$V" -- kubectl create deployment orders-web --image=registry.shop.local/orders-web:1.2.0 --replicas=3 --port=8080 -n shop --dry-run=client -o yaml

refresh_labels kubernetes
