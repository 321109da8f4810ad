package accounting

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/contextcompiler/ctxc/policies"
)

// prices knows one model at $2 in and $8 out per million tokens.
func prices(model string) (float64, float64, bool) {
	if model == "gpt-4.1" {
		return 2, 8, true
	}
	return 0, 0, false
}

func TestCost(t *testing.T) {
	tests := []struct {
		name    string
		prices  PriceLookup
		model   string
		in, out int
		want    float64
	}{
		{"priced", prices, "gpt-4.1", 1_000_000, 500_000, 2 + 4},
		{"unknown model costs nothing", prices, "local-llama", 1_000_000, 1_000_000, 0},
		{"no price list costs nothing", nil, "gpt-4.1", 1_000_000, 1_000_000, 0},
		{"no tokens", prices, "gpt-4.1", 0, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Cost(tt.prices, tt.model, tt.in, tt.out); got != tt.want {
				t.Errorf("Cost = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestUsageMergesByTaskAndModel(t *testing.T) {
	type call struct {
		task, model string
		in, out     int
	}
	tests := []struct {
		name  string
		calls []call
		want  []policies.ModelUsage
	}{
		{"none", nil, nil},
		{
			"same task and model merge",
			[]call{{"summarize", "gpt-4.1", 1000, 100}, {"summarize", "gpt-4.1", 3000, 300}},
			[]policies.ModelUsage{{Task: "summarize", Model: "gpt-4.1", Calls: 2, InputTokens: 4000, OutputTokens: 400, CostUSD: 0.0112}},
		},
		{
			"another task or model gets its own entry, in order of first call",
			[]call{{"plan", "gpt-4.1", 1000, 0}, {"summarize", "gpt-4.1", 1000, 0}, {"plan", "local-llama", 5, 5}, {"plan", "gpt-4.1", 1000, 0}},
			[]policies.ModelUsage{
				{Task: "plan", Model: "gpt-4.1", Calls: 2, InputTokens: 2000, CostUSD: 0.004},
				{Task: "summarize", Model: "gpt-4.1", Calls: 1, InputTokens: 1000, CostUSD: 0.002},
				{Task: "plan", Model: "local-llama", Calls: 1, InputTokens: 5, OutputTokens: 5},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := &policies.Work{}
			for _, c := range tt.calls {
				w.AddModelUsage(Usage(prices, c.task, c.model, c.in, c.out))
			}
			if diff := cmp.Diff(tt.want, w.Report().ModelUsage, cmp.Comparer(func(a, b float64) bool { return a-b < 1e-12 && b-a < 1e-12 })); diff != "" {
				t.Errorf("ModelUsage (-want +got):\n%s", diff)
			}
		})
	}
}
