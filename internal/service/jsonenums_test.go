package service

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/grpc-ecosystem/grpc-gateway/v2/runtime"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/testing/protocmp"

	ctxcv1 "github.com/contextcompiler/ctxc/gen/ctxc/v1"
)

// TestEnumJSONReadsShortNames: the gateway's decoder reads an enum value
// by its short name in any case, its full name in any case, and developer
// for the system role, into what the canonical body reads into; what it
// cannot read is an error naming the field and the values it takes.
func TestEnumJSONReadsShortNames(t *testing.T) {
	m := enumJSON{&runtime.JSONPb{}}
	tests := []struct {
		name      string
		body      string
		canonical string // "" when the body must fail
		wantErr   []string
	}{
		{name: "canonical names", body: `{"state": {"context": {"messages": [{"id": "u1", "role": "ROLE_USER", "parts": [{"text": "hi"}]}]}}}`,
			canonical: `{"state": {"context": {"messages": [{"id": "u1", "role": "ROLE_USER", "parts": [{"text": "hi"}]}]}}}`},
		{name: "the providers' role names", body: `{"state": {"context": {"messages": [
				{"id": "s1", "role": "developer", "parts": [{"text": "be brief"}]},
				{"id": "u1", "role": "user", "parts": [{"text": "hi"}]},
				{"id": "a1", "role": "Assistant", "parts": [{"text": "hello"}]},
				{"id": "x1", "role": "system", "kind": "summary", "parts": [{"text": "earlier"}]}]}}}`,
			canonical: `{"state": {"context": {"messages": [
				{"id": "s1", "role": "ROLE_SYSTEM", "parts": [{"text": "be brief"}]},
				{"id": "u1", "role": "ROLE_USER", "parts": [{"text": "hi"}]},
				{"id": "a1", "role": "ROLE_ASSISTANT", "parts": [{"text": "hello"}]},
				{"id": "x1", "role": "ROLE_SYSTEM", "kind": "MESSAGE_KIND_SUMMARY", "parts": [{"text": "earlier"}]}]}}}`},
		{name: "full names in any case, snake_case keys, other enums", body: `{"options": {"render": "render_format_anthropic", "view": "conversation"}, "input_format": "openai"}`,
			canonical: `{"options": {"render": "RENDER_FORMAT_ANTHROPIC", "view": "VIEW_CONVERSATION"}, "inputFormat": "INPUT_FORMAT_OPENAI"}`},
		{name: "numbers as protojson reads them", body: `{"state": {"context": {"messages": [{"id": "u1", "role": 2, "parts": [{"text": "hi"}]}]}}}`,
			canonical: `{"state": {"context": {"messages": [{"id": "u1", "role": "ROLE_USER", "parts": [{"text": "hi"}]}]}}}`},
		{name: "an unknown name", body: `{"state": {"context": {"messages": [{"id": "u1", "role": "usr"}]}}}`,
			wantErr: []string{`state.context.messages[0].role: "usr" is not a Role`, "want one of system, user, assistant, tool, developer (= system), or their full names ROLE_SYSTEM, ROLE_USER, ROLE_ASSISTANT, ROLE_TOOL"}},
		{name: "the zero value has no short name", body: `{"options": {"view": "unspecified"}}`,
			wantErr: []string{`options.view: "unspecified" is not a View`, "want one of reasoning, conversation, or their full names VIEW_REASONING, VIEW_CONVERSATION"}},
		{name: "other errors are protojson's", body: `{"state": {"context": {"messages": [{"id": "u1", "role": "user", "colour": 1}]}}}`,
			wantErr: []string{`unknown field "colour"`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var got ctxcv1.CompileRequest
			err := m.NewDecoder(strings.NewReader(tc.body)).Decode(&got)
			if tc.canonical == "" {
				if err == nil {
					t.Fatalf("read %q without an error", tc.body)
				}
				for _, w := range tc.wantErr {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("error %q does not say %q", err, w)
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var want ctxcv1.CompileRequest
			if err := protojson.Unmarshal([]byte(tc.canonical), &want); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(&want, &got, protocmp.Transform()); diff != "" {
				t.Errorf("(-canonical +read):\n%s", diff)
			}
		})
	}
}

// TestCanonicalEnumsEditsOnlyTheNames: the body is rewritten only where an
// enum value was named otherwise; every other byte stays.
func TestCanonicalEnumsEditsOnlyTheNames(t *testing.T) {
	body := `{ "state" : {"context": {"messages": [{"id": "u1",  "role":"user", "parts": [{"text": "role: \"user\" <b>"}]}]}},
	"options": {"render" :  "anthropic"} }`
	want := `{ "state" : {"context": {"messages": [{"id": "u1",  "role":"ROLE_USER", "parts": [{"text": "role: \"user\" <b>"}]}]}},
	"options": {"render" :  "RENDER_FORMAT_ANTHROPIC"} }`
	got, changed, err := canonicalEnums([]byte(body), (&ctxcv1.CompileRequest{}).ProtoReflect().Descriptor())
	if err != nil || !changed {
		t.Fatalf("changed %v, err %v", changed, err)
	}
	if diff := cmp.Diff(want, string(got)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}
