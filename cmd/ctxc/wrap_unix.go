//go:build unix

package main

import (
	"errors"
	"os"
	"os/exec"
	"os/signal"
	"syscall"
	"unsafe"
)

// relaySignals passes SIGTERM and SIGHUP on to the CLI once attach gives
// it, and SIGINT and SIGQUIT when they did not come from the terminal: a
// terminal sends those to its whole foreground process group, the CLI
// included, and a second Ctrl-C would read to it as the user's second. It
// catches them from the start, so that none ends ctxc while the CLI starts;
// stop ends the relay.
func relaySignals() (attach func(*os.Process), stop func()) {
	ch := make(chan os.Signal, 8)
	signal.Notify(ch, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGINT, syscall.SIGQUIT)
	proc := make(chan *os.Process, 1)
	done := make(chan struct{})
	go func() {
		defer close(done)
		p := <-proc
		for s := range ch {
			if p == nil || (s == syscall.SIGINT || s == syscall.SIGQUIT) && inTerminalForeground() {
				continue
			}
			_ = p.Signal(s)
		}
	}()
	attached := false
	return func(p *os.Process) {
			attached = true
			proc <- p
		}, func() {
			if !attached {
				proc <- nil
			}
			signal.Stop(ch)
			close(ch)
			<-done
		}
}

// inTerminalForeground reports whether this process's group is the
// foreground one of the terminal on stdin.
func inTerminalForeground() bool {
	var pgrp int32
	if _, _, errno := syscall.Syscall(syscall.SYS_IOCTL, os.Stdin.Fd(), uintptr(syscall.TIOCGPGRP), uintptr(unsafe.Pointer(&pgrp))); errno != 0 {
		return false
	}
	return int(pgrp) == syscall.Getpgrp()
}

// exitCode is the CLI's exit code as a shell gives it: its own, or 128 plus
// the signal that ended it.
func exitCode(waitErr error) (int, error) {
	var exit *exec.ExitError
	if !errors.As(waitErr, &exit) {
		return 0, waitErr // nil: exit 0
	}
	if ws, ok := exit.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal()), nil
	}
	return exit.ExitCode(), nil
}
