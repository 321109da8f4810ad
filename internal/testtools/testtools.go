// Package testtools decides what a test does when an external program it
// needs (redis-server, grpcurl, curl, node and the npm clients, the Python
// stubs) is missing: under `make test`, which installs them, and in CI, the
// test fails naming what installs it; anywhere else it is skipped saying the
// same, so that `go test ./...` passes on a machine without them and says
// which tests it did not run and why.
package testtools

import (
	"os"
	"testing"
)

// Required says whether a missing program fails the test: in CI (CI=true)
// and under `make test` (CTXC_REQUIRE_TOOLS=1), nothing may be skipped.
func Required() bool {
	return os.Getenv("CI") == "true" || os.Getenv("CTXC_REQUIRE_TOOLS") == "1"
}

// Missing fails or skips t because what is missing; install is the command
// that provides it.
func Missing(t testing.TB, what, install string) {
	t.Helper()
	if Required() {
		t.Fatalf("%s: run `%s` (`make test` does)", what, install)
	}
	t.Skipf("skipped: %s: run `%s` (`make test` does, and fails instead of skipping)", what, install)
}
