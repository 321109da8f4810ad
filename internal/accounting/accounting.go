// Package accounting owns the accounting of the helper-model calls a run
// makes (llm_plan, llm_summarize): what one call cost at the model registry's
// prices, and the per-task, per-model totals that the report carries as
// model_usage (the pipeline sums them into total_cost_usd). It is apart from
// package llm so that the model client knows nothing of the domain.
package accounting

import "github.com/contextcompiler/ctxc/policies"

// PriceLookup gives a model's prices in US dollars per million input and
// output tokens; ok is false for a model it does not know (cost 0). cmd/ctxc
// passes the model registry's.
type PriceLookup func(model string) (inPerMTok, outPerMTok float64, ok bool)

// Cost is what a call of model with these token counts cost.
func Cost(prices PriceLookup, model string, inputTokens, outputTokens int) float64 {
	if prices == nil {
		return 0
	}
	in, out, ok := prices(model)
	if !ok {
		return 0
	}
	return (float64(inputTokens)*in + float64(outputTokens)*out) / 1e6
}

// Add records one call of model for task in w.ModelUsage, merging with an
// earlier entry of the same task and model.
func Add(w *policies.Work, prices PriceLookup, task, model string, inputTokens, outputTokens int) {
	cost := Cost(prices, model, inputTokens, outputTokens)
	for i := range w.ModelUsage {
		u := &w.ModelUsage[i]
		if u.Task == task && u.Model == model {
			u.Calls++
			u.InputTokens += inputTokens
			u.OutputTokens += outputTokens
			u.CostUSD += cost
			return
		}
	}
	w.ModelUsage = append(w.ModelUsage, policies.ModelUsage{
		Task: task, Model: model, Calls: 1, InputTokens: inputTokens, OutputTokens: outputTokens, CostUSD: cost,
	})
}
