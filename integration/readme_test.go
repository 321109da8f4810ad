package integration

import (
	"bufio"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// readmeAddr and readmeHTTPAddr are the gRPC and HTTP addresses the README's commands use.
const (
	readmeAddr     = "127.0.0.1:50051"
	readmeHTTPAddr = "127.0.0.1:8080"
)

// readmeCommands returns the lines of the README's ```sh blocks.
func readmeCommands(t *testing.T) []string {
	t.Helper()
	f, err := os.Open(filepath.Join(repoRoot, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var cmds []string
	in := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		switch {
		case line == "```sh":
			in = true
		case line == "```":
			in = false
		case in && line != "":
			cmds = append(cmds, line)
		}
	}
	return cmds
}

// TestReadmeCommands runs every command of the README's ```sh blocks: the
// server with the README's serve command, then each grpcurl, curl and
// ./bin/ctxc command against it, with the addresses and binaries substituted.
// A grpcurl command ending in "# fails with CODE" must fail with that gRPC
// code; a curl command ending in "# fails with HTTP STATUS" with that status.
func TestReadmeCommands(t *testing.T) {
	needGrpcurl(t)
	cmds := readmeCommands(t)
	if len(cmds) < 10 {
		t.Fatalf("found only %d commands in README.md ```sh blocks", len(cmds))
	}
	serveCmd := cmds[0]
	serveArgs, ok := strings.CutPrefix(serveCmd, "./bin/ctxc serve")
	if !ok {
		t.Fatalf("the README's first command starts the server; got %q", serveCmd)
	}
	// The HTTP port too is picked by the system; the server logs which.
	s := startServer(t, strings.Fields(strings.ReplaceAll(serveArgs, readmeHTTPAddr, "127.0.0.1:0"))...)
	httpAddr := s.httpAddr(t)
	// The session commands chain their answers through /tmp files; each test
	// run gets its own directory instead.
	scratch := t.TempDir()

	for _, line := range cmds[1:] {
		t.Run(line, func(t *testing.T) {
			command, expectFailure, _ := strings.Cut(line, "# fails with ")
			command = strings.TrimSpace(command)
			isCurl := false
			switch {
			case strings.HasPrefix(command, "grpcurl "):
				command = grpcurlBinary + strings.TrimPrefix(command, "grpcurl")
			case strings.HasPrefix(command, "./bin/ctxc "):
				command = ctxcBinary + strings.TrimPrefix(command, "./bin/ctxc")
			case strings.HasPrefix(command, "jq ") && strings.Contains(command, "| grpcurl "):
				command = strings.Replace(command, "| grpcurl ", "| "+grpcurlBinary+" ", 1)
			case strings.HasPrefix(command, "curl ") || strings.HasPrefix(command, "jq ") && strings.Contains(command, "| curl "):
				needCurl(t)
				isCurl = true
			default:
				t.Fatalf("README command %q is neither grpcurl, curl, ./bin/ctxc nor jq piped into grpcurl or curl; teach this test to run it", line)
			}
			command = strings.ReplaceAll(command, readmeAddr, s.addr)
			command = strings.ReplaceAll(command, readmeHTTPAddr, httpAddr)
			command = strings.ReplaceAll(command, "/tmp/ctxc-session-", scratch+"/ctxc-session-")
			cmd := exec.Command("bash", "-o", "pipefail", "-c", command)
			cmd.Dir = repoRoot
			out, err := cmd.CombinedOutput()
			if httpStatus, ok := strings.CutPrefix(strings.TrimSpace(expectFailure), "HTTP "); ok && isCurl {
				// curl --fail-with-body prints the JSON status, then its own error naming the HTTP status.
				if err == nil || !strings.Contains(string(out), `"code":`) || !strings.Contains(string(out), "returned error: "+httpStatus) {
					t.Fatalf("want HTTP %s with a JSON status, got err=%v:\n%s", httpStatus, err, out)
				}
				return
			}
			if expectFailure != "" {
				if err == nil || !strings.Contains(string(out), "Code: "+strings.TrimSpace(expectFailure)) {
					t.Fatalf("want failure %s, got err=%v:\n%s", expectFailure, err, out)
				}
				return
			}
			if err != nil {
				t.Fatalf("%v:\n%s", err, out)
			}
			// Calls with a JSON answer must give valid JSON.
			grpcurlJSON := strings.Contains(command, "ctxc.v1.") && strings.Contains(command, grpcurlBinary) && !strings.Contains(command, " describe ") && !strings.Contains(command, " > ")
			if grpcurlJSON || isCurl {
				var v map[string]any
				if err := json.Unmarshal(out, &v); err != nil {
					t.Fatalf("not JSON: %v\n%s", err, out)
				}
			}
		})
	}
	s.waitServing(t)
}
