package tenant

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestNamespaceOf: every name has its own namespace of fixed length, hex
// only; names crafted to run into each other (a prefix, a separator, the
// length prefix's digits, another's namespace) do not share one; the
// shared namespace ("" and no caller) is no authenticated caller's.
func TestNamespaceOf(t *testing.T) {
	names := []string{"", "a", "ab", "a:b", "1:a", "a\x00", "A", "alice", "alice ", "bob", NamespaceOf("alice"), NamespaceOf("alice") + ":x"}
	seen := map[string]string{}
	for _, n := range names {
		ns := NamespaceOf(n)
		if len(ns) != NamespaceLen || strings.Trim(ns, "0123456789abcdef") != "" {
			t.Errorf("NamespaceOf(%q) = %q: want %d hex digits", n, ns, NamespaceLen)
		}
		if other, dup := seen[ns]; dup {
			t.Errorf("NamespaceOf(%q) = NamespaceOf(%q)", n, other)
		}
		seen[ns] = n
		if again := NamespaceOf(n); again != ns {
			t.Errorf("NamespaceOf(%q) is not stable: %q then %q", n, ns, again)
		}
	}
}

func TestNamespaceFromContext(t *testing.T) {
	tests := []struct {
		name string
		ctx  context.Context
		want string
	}{
		{"no caller: the shared namespace", context.Background(), NamespaceOf("")},
		{"alice", WithCaller(context.Background(), "alice"), NamespaceOf("alice")},
		{"the innermost caller", WithCaller(WithCaller(context.Background(), "alice"), "bob"), NamespaceOf("bob")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, Namespace(tt.ctx)); diff != "" {
				t.Errorf("Namespace (-want +got):\n%s", diff)
			}
		})
	}
	if _, ok := Caller(context.Background()); ok {
		t.Error("Caller of a bare context: ok")
	}
	if name, ok := Caller(WithCaller(context.Background(), "alice")); !ok || name != "alice" {
		t.Errorf("Caller = %q, %v; want alice, true", name, ok)
	}
}
