//go:build integration

package integration

import (
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/genproto/googleapis/rpc/status"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/testing/protocmp"
	"google.golang.org/protobuf/types/known/timestamppb"

	ctxcv1 "github.com/contextcompiler/ctxc/gen/ctxc/v1"
)

// TestHTTPGatewayReadsShortEnumNames sends each example over HTTP/JSON twice,
// with its enum values as the examples write them (ROLE_USER) and by their
// short lower-case names (user, as the providers' APIs write roles; event,
// running, anthropic): the answers are the same. "developer" is a system
// message. A value it cannot read is HTTP 400 naming the field and the
// names it takes; it once was protojson's `invalid value for enum field
// role: "user"`.
func TestHTTPGatewayReadsShortEnumNames(t *testing.T) {
	t.Parallel()
	s := startServer(t, "--http-listen", "127.0.0.1:0")
	addr := s.httpAddr(t)
	// Only what two equal calls may differ in: the state reference is hashed
	// from the bytes the state came in, which differ here.
	same := cmp.Options{protocmp.Transform(),
		protocmp.IgnoreMessages(&timestamppb.Timestamp{}, &ctxcv1.CacheStats{}),
		protocmp.IgnoreFields(&ctxcv1.CompileResponse{}, "state_ref"),
		protocmp.IgnoreFields(&ctxcv1.StageReport{}, "duration_micros"),
		protocmp.IgnoreFields(&ctxcv1.ArtifactUsage{}, "cache_hit")}
	full := regexp.MustCompile(`"(ROLE|MESSAGE_KIND|EXECUTION_STATUS)_([A-Z_]+)"`)
	for _, example := range []string{"chat.json", "coding-agent.json"} {
		t.Run(example, func(t *testing.T) {
			canonical, err := os.ReadFile(filepath.Join(repoRoot, "examples", example))
			if err != nil {
				t.Fatal(err)
			}
			short := full.ReplaceAllStringFunc(string(canonical), func(name string) string {
				return `"` + strings.ToLower(full.FindStringSubmatch(name)[2]) + `"`
			})
			// Rendered for Anthropic, named as its short name.
			short = strings.Replace(short, "{", `{"options": {"render": "anthropic"}, `, 1)
			withRender := strings.Replace(string(canonical), "{", `{"options": {"render": "RENDER_FORMAT_ANTHROPIC"}, `, 1)
			if short == withRender || strings.Contains(short, `"ROLE_`) {
				t.Fatalf("the short-name body still has the full names:\n%s", short)
			}
			var answers [2]ctxcv1.CompileResponse
			for i, body := range []string{withRender, short} {
				code, answer := post(t, addr, rpcPath("Compile"), []byte(body), int64(len(body)))
				if code != http.StatusOK {
					t.Fatalf("HTTP %d: %s", code, answer)
				}
				if err := protojson.Unmarshal(answer, &answers[i]); err != nil {
					t.Fatal(err)
				}
			}
			if answers[0].GetRendered() == "" {
				t.Fatal("the compile rendered nothing")
			}
			if diff := cmp.Diff(&answers[0], &answers[1], same); diff != "" {
				t.Errorf("short names compile otherwise (-full names +short names):\n%s", diff)
			}
		})
	}

	t.Run("developer is a system message", func(t *testing.T) {
		body := `{"state": {"model": {"name": "gpt-4o"}, "context": {"messages": [
			{"id": "d1", "role": "developer", "parts": [{"text": "Answer in one line."}]},
			{"id": "u1", "role": "user", "parts": [{"text": "Which port?"}]}]}}}`
		code, answer := post(t, addr, rpcPath("Compile"), []byte(body), int64(len(body)))
		if code != http.StatusOK {
			t.Fatalf("HTTP %d: %s", code, answer)
		}
		var got ctxcv1.CompileResponse
		if err := protojson.Unmarshal(answer, &got); err != nil {
			t.Fatal(err)
		}
		roles := map[string]ctxcv1.Role{}
		for _, m := range got.GetMessages() {
			roles[m.GetId()] = m.GetRole()
		}
		if diff := cmp.Diff(map[string]ctxcv1.Role{"d1": ctxcv1.Role_ROLE_SYSTEM, "u1": ctxcv1.Role_ROLE_USER}, roles); diff != "" {
			t.Errorf("roles compiled (-want +got):\n%s", diff)
		}
	})

	t.Run("an unknown name", func(t *testing.T) {
		body := `{"state": {"model": {"name": "gpt-4o"}, "context": {"messages": [{"id": "u1", "role": "usr", "parts": [{"text": "Hi"}]}]}}}`
		code, answer := post(t, addr, rpcPath("Compile"), []byte(body), int64(len(body)))
		var st status.Status
		if err := protojson.Unmarshal(answer, &st); err != nil {
			t.Fatalf("HTTP %d, not a JSON status: %v\n%s", code, err, answer)
		}
		want := `state.context.messages[0].role: "usr" is not a Role; want one of system, user, assistant, tool, developer (= system), or their full names ROLE_SYSTEM, ROLE_USER, ROLE_ASSISTANT, ROLE_TOOL`
		if code != http.StatusBadRequest || st.GetCode() != 3 || st.GetMessage() != want {
			t.Errorf("HTTP %d, code %d, message %q; want HTTP 400, code 3 (InvalidArgument), %q", code, st.GetCode(), st.GetMessage(), want)
		}
	})
}
