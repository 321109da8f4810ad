//go:build integration

package integration

import (
	"bytes"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestSidecarAgentExample runs the sidecar shape of
// deploy/kubernetes/sidecar/agent.yaml on this machine: ctxc serving a Unix
// socket, and the example agent (examples/sidecar/agent.py, with Debian's
// python3-grpcio and the Python package) reaching it there. The agent is
// ready once ctxc answers, and a turn comes back compiled, in OpenAI's format.
func TestSidecarAgentExample(t *testing.T) {
	t.Parallel()
	python := needProgram(t, "/usr/bin/python3", "make deps")
	socket := "unix://" + filepath.Join(t.TempDir(), "ctxc.sock")
	launch(t, launchOptions{args: []string{"--listen", socket}, noListen: true})

	addr := freeAddr(t)
	_, port, _ := strings.Cut(addr, ":")
	cmd := exec.Command(python, "examples/sidecar/agent.py")
	cmd.Dir = repoRoot
	cmd.Env = append(os.Environ(), "PYTHONPATH=clients/python/src", "CTXC_TARGET="+socket, "MODEL=gpt-4o", "PORT="+port, "MAX_CONTEXT_TOKENS=8000")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	base := "http://" + addr
	for i := 0; ; i++ {
		resp, err := http.Get(base + "/healthz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				break
			}
		}
		if i == 300 {
			t.Fatalf("the agent never became ready: %v\n%s", err, out.String())
		}
		time.Sleep(20 * time.Millisecond)
	}

	turn := func(messages []map[string]any) (int, map[string]any) {
		t.Helper()
		body, _ := json.Marshal(map[string]any{"messages": messages})
		resp, err := http.Post(base+"/turn", "application/json", bytes.NewReader(body))
		if err != nil {
			t.Fatalf("%v\n%s", err, out.String())
		}
		defer resp.Body.Close()
		var reply map[string]any
		if err := json.NewDecoder(resp.Body).Decode(&reply); err != nil {
			t.Fatal(err)
		}
		return resp.StatusCode, reply
	}
	// A conversation over the agent's 8,000-token window: the old tool output
	// is masked, the question and the system prompt kept.
	big := strings.Repeat("2026-11-01T10:00:00Z GET /api/items 200 12ms\n", 2500)
	status, reply := turn([]map[string]any{
		{"role": "system", "content": "You are an SRE assistant."},
		{"role": "user", "content": "Why is the API slow?"},
		{"role": "assistant", "content": nil, "tool_calls": []map[string]any{{"id": "call_1", "type": "function",
			"function": map[string]any{"name": "read_logs", "arguments": `{"service":"api"}`}}}},
		{"role": "tool", "tool_call_id": "call_1", "content": big},
		{"role": "assistant", "content": "The logs show nothing slow."},
		{"role": "user", "content": "Look at the database then."},
	})
	if status != http.StatusOK {
		t.Fatalf("turn: %d %v\n%s", status, reply, out.String())
	}
	raw, _ := json.Marshal(reply["messages"])
	compiled := string(raw)
	if !strings.Contains(compiled, "You are an SRE assistant.") || !strings.Contains(compiled, "Look at the database then.") {
		t.Errorf("the compiled turn lost the system prompt or the question: %s", compiled[:min(len(compiled), 2000)])
	}
	if len(compiled) >= len(big) {
		t.Errorf("the compiled turn is %d bytes, the tool output alone %d: nothing was compacted to fit 8,000 tokens", len(compiled), len(big))
	}

	// A malformed conversation is the caller's error, named.
	status, reply = turn([]map[string]any{{"role": "tool", "tool_call_id": "", "content": "x"}, {"role": "user", "content": ""}})
	if status != http.StatusBadRequest || reply["error"] == "" {
		t.Errorf("a malformed turn: %d %v, want 400 with the error", status, reply)
	}
}

// TestReadmeDeploying: the service config the README's "Deploying" tells
// clients to copy is the one the multi-replica test uses, and its nginx
// configuration holds the location blocks the test runs nginx with.
func TestReadmeDeploying(t *testing.T) {
	t.Parallel()
	r := readReadme(t)
	var serviceConfig, nginxConf []string
	for _, b := range r.blocks {
		switch {
		case b.lang == "json" && strings.Contains(strings.Join(b.lines, "\n"), "retryPolicy"):
			serviceConfig = b.lines
		case b.lang == "nginx":
			nginxConf = b.lines
		}
	}
	var quoted, file any
	if err := json.Unmarshal([]byte(strings.Join(serviceConfig, "\n")), &quoted); err != nil {
		t.Fatalf("the README's service config: %v", err)
	}
	if err := json.Unmarshal([]byte(readServiceConfig(t)), &file); err != nil {
		t.Fatalf("%s: %v", serviceConfigFile, err)
	}
	if diff := cmp.Diff(file, quoted); diff != "" {
		t.Errorf("the README's service config differs from %s (-file +README):\n%s", serviceConfigFile, diff)
	}
	if !strings.Contains(strings.Join(nginxConf, "\n"), nginxLocation) {
		t.Errorf("the README's nginx configuration lacks the location blocks the test runs:\n%s", nginxLocation)
	}
}
