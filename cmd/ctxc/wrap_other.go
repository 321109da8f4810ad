//go:build !unix

package main

import (
	"errors"
	"os"
	"os/exec"
)

// relaySignals does nothing where there are no signals to pass on.
func relaySignals() (attach func(*os.Process), stop func()) { return func(*os.Process) {}, func() {} }

// exitCode is the CLI's exit code.
func exitCode(waitErr error) (int, error) {
	var exit *exec.ExitError
	if !errors.As(waitErr, &exit) {
		return 0, waitErr
	}
	return exit.ExitCode(), nil
}
