package testtools

import "testing"

func TestRequired(t *testing.T) {
	for _, tt := range []struct {
		ci, require string
		want        bool
	}{{"", "", false}, {"true", "", true}, {"", "1", true}, {"false", "0", false}} {
		t.Setenv("CI", tt.ci)
		t.Setenv("CTXC_REQUIRE_TOOLS", tt.require)
		if got := Required(); got != tt.want {
			t.Errorf("CI=%q CTXC_REQUIRE_TOOLS=%q: Required() = %v", tt.ci, tt.require, got)
		}
	}
}
