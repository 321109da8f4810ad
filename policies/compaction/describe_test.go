package compaction

import (
	"testing"

	"github.com/contextcompiler/ctxc/policies/agentstate"
)

func TestDescribeCallShowsKeyArgumentsNotBodies(t *testing.T) {
	tests := []struct{ args, want string }{
		{`{"path":"a.go"}`, "write_file(path=a.go)"},
		{`{"path":"a.go","content":"package a\n\nfunc A() {}\n"}`, "write_file(path=a.go)"},
		{`{"content":"package a\n\nfunc A() {}\n"}`, "write_file(content=<4 lines>)"},
		{`{"n":3,"force":true,"opts":{"x":1}}`, "write_file(force=true)"},
		{`not json`, "write_file(not json)"},
		{``, "write_file()"},
	}
	for _, tt := range tests {
		if got := describeCall(agentstate.ToolCall{Name: "write_file", ArgumentsJSON: tt.args}, ""); got != tt.want {
			t.Errorf("describeCall(%s) = %q, want %q", tt.args, got, tt.want)
		}
	}
}
