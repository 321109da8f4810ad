//go:build integration

// Package integration tests the real ctxc binary end to end: it builds the
// binary once, starts it on a loopback port, and drives it with grpcurl (as a
// user following the README would) and with the generated Go client.
package integration

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	ctxcv1 "github.com/contextcompiler/ctxc/gen/ctxc/v1"
	"github.com/contextcompiler/ctxc/internal/testtools"
)

var (
	// repoRoot is the module root (examples/, README.md).
	repoRoot string
	// ctxcBinary is the binary built for this run.
	ctxcBinary string
	// grpcurlBinary is CTXC_GRPCURL (set by the Makefile), else bin/grpcurl.
	grpcurlBinary string
)

func TestMain(m *testing.M) {
	os.Exit(testMain(m))
}

// defaultParallel is how many of this package's parallel tests run at once
// unless -parallel is given. Go's default is GOMAXPROCS, but a test here
// spends most of its time waiting on another process (a server's timeout or
// drain delay, a helper model's deadline, Chromium, nginx): with two cores
// two at a time would leave the machine idle.
//
// Every test here starts its own server (its own process, on a port the
// kernel picks, with its files in t.TempDir), so most run in parallel. The
// tests without t.Parallel run first, one at a time: those whose bounds are
// on time under load (TestAbandonedCallsStopWorking,
// TestLargeCountTokensDoNotStarveSmallCalls,
// TestOneClientCannotTakeEveryConnection), TestReadmeCommands (the README's
// fixed ports), and the tests of the npm clients (TestProxyClaudeCode,
// TestProxyWithTheOfficialSDKs).
const defaultParallel = 8

func testMain(m *testing.M) int {
	flag.Parse()
	// The real binary end to end is the long tier: go test -short leaves the
	// package out (building the binary alone takes most of the short tier's
	// time); make test, and CI through it, pass no -short and run it all.
	if testing.Short() {
		fmt.Println("integration: skipped under -short (the real binary, end to end); make test runs it")
		return 0
	}
	explicit := false
	flag.Visit(func(f *flag.Flag) { explicit = explicit || f.Name == "test.parallel" })
	if !explicit {
		if err := flag.Set("test.parallel", strconv.Itoa(defaultParallel)); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
	}
	// go test runs a package's tests in its directory (and -trimpath, as
	// make test builds them, leaves no source paths to ask runtime.Caller).
	wd, err := os.Getwd()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	repoRoot = filepath.Dir(wd)
	dir, err := os.MkdirTemp("", "ctxc-integration-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	// The binary users get: built by `make build`, with its tags and flags.
	ctxcBinary = filepath.Join(dir, "ctxc")
	build := exec.Command("make", "--no-print-directory", "-s", "build", "BIN="+dir)
	build.Dir = repoRoot
	if out, err := build.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "building ctxc with make build: %v\n%s", err, out)
		return 1
	}
	grpcurlBinary = os.Getenv("CTXC_GRPCURL")
	if grpcurlBinary == "" {
		grpcurlBinary = filepath.Join(repoRoot, "bin", "grpcurl")
	}
	return m.Run()
}

// needProgram returns the path of an external program a test needs; without
// it the test fails under `make test` and in CI, and is skipped elsewhere,
// naming what installs it (testtools.Missing).
func needProgram(t *testing.T, name, install string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		testtools.Missing(t, name+" not found", install)
	}
	return p
}

// needGrpcurl stops a test when grpcurl is not built, as needProgram.
func needGrpcurl(t *testing.T) {
	t.Helper()
	if _, err := os.Stat(grpcurlBinary); err != nil {
		testtools.Missing(t, "grpcurl not found at "+grpcurlBinary+" (CTXC_GRPCURL)", "make grpcurl")
	}
}

// server is a running ctxc serve process.
type server struct {
	addr string
	cmd  *exec.Cmd
	logs *logLines
	conn *grpc.ClientConn
	// exited is closed once the process has exited; exitErr is then its Wait error.
	exited  chan struct{}
	exitErr error
}

// logLines collects the server's JSON log lines.
type logLines struct {
	mu    sync.Mutex
	lines []string
}

func (l *logLines) add(s string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lines = append(l.lines, s)
}

func (l *logLines) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Join(l.lines, "\n")
}

// startServer runs `ctxc serve` on a free loopback port with extra args and
// waits until health says SERVING.
func startServer(t testing.TB, args ...string) *server {
	t.Helper()
	return launch(t, launchOptions{args: args})
}

// startServerEnv is startServer with environment variables ("KEY=value") set
// over the test's own, in which tracing is off.
func startServerEnv(t *testing.T, env []string, args ...string) *server {
	t.Helper()
	return launch(t, launchOptions{args: args, env: env})
}

// launchOptions are how a test starts the server beyond its flags.
type launchOptions struct {
	args []string
	// env adds variables (KEY=value) to the server's environment.
	env []string
	// creds are the transport credentials of the test's connection; plaintext when nil.
	creds credentials.TransportCredentials
	// noListen leaves --listen to args.
	noListen bool
	// binary is the ctxc to run; the one TestMain built when empty.
	binary string
}

// launch runs `ctxc serve` with o and waits until health says SERVING.
func launch(t testing.TB, o launchOptions) *server {
	t.Helper()
	args := append([]string{"serve", "--log-format", "json"}, o.args...)
	if !o.noListen {
		args = append([]string{"serve", "--listen", "127.0.0.1:0", "--log-format", "json"}, o.args...)
	}
	binary := ctxcBinary
	if o.binary != "" {
		binary = o.binary
	}
	cmd := exec.Command(binary, args...)
	cmd.Dir = repoRoot
	cmd.Env = append(append(os.Environ(), "OTEL_TRACES_EXPORTER=", "OTEL_EXPORTER_OTLP_ENDPOINT="), o.env...)
	return start(t, cmd, servingLogged, o.creds)
}

// servingLogged finds the address in ctxc serve's JSON log line "serving".
func servingLogged(line string) (string, bool) {
	var entry struct {
		Msg  string `json:"msg"`
		Addr string `json:"addr"`
	}
	if json.Unmarshal([]byte(line), &entry) != nil || entry.Msg != "serving" {
		return "", false
	}
	return entry.Addr, true
}

// start runs cmd, a program that serves the API, keeping each line of its
// stdout and stderr in the server's logs; serving finds in one of them the
// address it serves on. It connects there (plaintext when creds is nil)
// and waits until health says SERVING.
func start(t testing.TB, cmd *exec.Cmd, serving func(line string) (addr string, ok bool), creds credentials.TransportCredentials) *server {
	t.Helper()
	var outputs []io.Reader
	for _, pipe := range []func() (io.ReadCloser, error){cmd.StdoutPipe, cmd.StderrPipe} {
		r, err := pipe()
		if err != nil {
			t.Fatal(err)
		}
		outputs = append(outputs, r)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	s := &server{cmd: cmd, logs: &logLines{}, exited: make(chan struct{})}
	addrCh := make(chan string, 1)
	var read sync.WaitGroup
	for _, r := range outputs {
		read.Go(func() {
			sc := bufio.NewScanner(r)
			sc.Buffer(make([]byte, 1<<20), 1<<20)
			for sc.Scan() {
				s.logs.add(sc.Text())
				if addr, ok := serving(sc.Text()); ok {
					select {
					case addrCh <- addr:
					default:
					}
				}
			}
			_, _ = io.Copy(io.Discard, r)
		})
	}
	go func() {
		read.Wait() // Wait closes the pipes: both are read to the end first
		s.exitErr = cmd.Wait()
		close(s.exited)
	}()
	t.Cleanup(s.kill)
	select {
	case s.addr = <-addrCh:
	case <-s.exited:
		t.Fatalf("%s exited before serving: %v\n%s", cmd.Path, s.exitErr, s.logs)
	case <-time.After(60 * time.Second):
		t.Fatalf("%s did not start\n%s", cmd.Path, s.logs)
	}
	target := "passthrough:///" + s.addr
	if strings.HasPrefix(s.addr, "unix:") {
		target = s.addr
	}
	if creds == nil {
		creds = insecure.NewCredentials()
	}
	conn, err := grpc.NewClient(target, grpc.WithTransportCredentials(creds))
	if err != nil {
		t.Fatal(err)
	}
	s.conn = conn
	t.Cleanup(func() { conn.Close() })
	s.waitServing(t)
	return s
}

// hasLog reports whether the server logs a line containing substr within a
// few seconds (its stderr is read on another goroutine).
func (s *server) hasLog(substr string) bool {
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if strings.Contains(s.logs.String(), substr) {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
	}
}

func (s *server) client() ctxcv1.ContextCompilerServiceClient {
	return ctxcv1.NewContextCompilerServiceClient(s.conn)
}

// waitServing polls health until SERVING.
func (s *server) waitServing(t testing.TB) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	hc := healthpb.NewHealthClient(s.conn)
	for {
		resp, err := hc.Check(ctx, &healthpb.HealthCheckRequest{}, grpc.WaitForReady(true))
		if err == nil && resp.GetStatus() == healthpb.HealthCheckResponse_SERVING {
			return
		}
		if ctx.Err() != nil {
			t.Fatalf("server not SERVING: %v %v\n%s", resp, err, s.logs)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// stop sends SIGTERM and returns the process's exit error (nil for exit 0).
func (s *server) stop(t *testing.T) error {
	t.Helper()
	if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case <-s.exited:
		return s.exitErr
	case <-time.After(30 * time.Second):
		t.Fatalf("ctxc serve did not stop after SIGTERM\n%s", s.logs)
		return nil
	}
}

func (s *server) kill() {
	select {
	case <-s.exited:
	default:
		_ = s.cmd.Process.Kill()
		<-s.exited
	}
}

// grpcurl runs grpcurl with args (the address is the caller's) and stdin.
func grpcurl(t *testing.T, stdin io.Reader, args ...string) (string, error) {
	t.Helper()
	needGrpcurl(t)
	cmd := exec.Command(grpcurlBinary, args...)
	cmd.Dir = repoRoot
	cmd.Stdin = stdin
	var out, errOut strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	if err != nil {
		return out.String() + errOut.String(), fmt.Errorf("grpcurl %s: %w\n%s%s", strings.Join(args, " "), err, out.String(), errOut.String())
	}
	return out.String(), nil
}

// writeConfig writes a config file for `ctxc serve --config` and returns its path.
func writeConfig(t *testing.T, text string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "ctxc.yaml")
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}
