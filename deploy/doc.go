// Package deploy checks the Kubernetes deployment files without a cluster:
// the Helm chart (helm/ctxc) linted and rendered by the pinned helm's own
// packages for its default values and every example values file (the helm
// CLI itself under -tags helmcli: make test-helm-cli), and the sidecar
// manifests (kubernetes/sidecar), each object decoded strictly against the
// Kubernetes and Prometheus Operator API types of the versions this module
// pins.
//
// It is a module of its own so that the Kubernetes API types stay out of the
// service binary's module; `make test` runs it (docs/deploying.md).
package deploy
