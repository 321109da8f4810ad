//go:build integration

package integration

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// scripts/deps.sh with one package missing, as root, on a machine where
// another apt holds the package lists' lock at first: it waits for that lock
// (trying again, since apt does not wait for it), passes apt its timeout for
// dpkg's lock, and frames the update and the install as phases with their
// time. dpkg-query, id and apt-get are stand-ins on PATH that record what
// they were asked: the real ones would install packages on this machine
// (the lock waits were tried by hand against a real held lock).
func TestDepsWaitsForAptLocks(t *testing.T) {
	t.Parallel()
	fake := t.TempDir()
	log := filepath.Join(fake, "apt-get.log")
	for name, script := range map[string]string{
		// Every package is installed but jq.
		"dpkg-query": `for last; do :; done; [ "$last" = jq ] && exit 1; printf 'install ok installed'`,
		"id":         `echo 0`,
		// The first update finds the lists locked, as another apt-get update would leave them.
		"apt-get": `echo "$DEBIAN_FRONTEND $*" >> "` + log + `"
if [ "$3" = update ] && [ ! -e "` + log + `.locked" ]; then
  touch "` + log + `.locked"
  echo 'E: Could not get lock /var/lib/apt/lists/lock. It is held by process 42 (apt-get)'
  echo 'E: Unable to lock directory /var/lib/apt/lists/'
  exit 100
fi`,
	} {
		if err := os.WriteFile(filepath.Join(fake, name), []byte("#!/bin/sh\n"+script+"\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command(filepath.Join(repoRoot, "scripts", "deps.sh"))
	cmd.Env = append(os.Environ(), "PATH="+fake+string(os.PathListSeparator)+os.Getenv("PATH"), "DEBIAN_FRONTEND=")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("scripts/deps.sh: %v\n%s", err, out)
	}
	calls, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		" -o DPkg::Lock::Timeout=600 update -qq",
		" -o DPkg::Lock::Timeout=600 update -qq",
		"noninteractive -o DPkg::Lock::Timeout=600 install -y --no-install-recommends jq",
	}
	if diff := cmp.Diff(want, strings.Split(strings.TrimSuffix(string(calls), "\n"), "\n")); diff != "" {
		t.Errorf("apt-get calls ($DEBIAN_FRONTEND and arguments; -want +got):\n%s", diff)
	}
	for _, line := range []string{
		"==> apt-get update, for the missing Debian packages: jq",
		"waiting for the lock on the package lists: E: Could not get lock /var/lib/apt/lists/lock. It is held by process 42 (apt-get)",
		"<== apt-get update, for the missing Debian packages: jq: ",
		"==> apt-get install: jq",
		"<== apt-get install: jq: ",
	} {
		if !strings.Contains(string(out), "\n"+line) && !strings.HasPrefix(string(out), line) {
			t.Errorf("scripts/deps.sh printed no line %q:\n%s", line, out)
		}
	}
}
