// Package accounting owns the accounting of the helper-model calls a run
// makes (llm_plan, llm_summarize): what one call cost at the model registry's
// prices, as the record that policies.Work adds up per task and model into the
// report's model_usage (the pipeline sums them into total_cost_usd). It is apart from
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

// Usage is the record of one call of model for task, priced; the Work adds
// it to an earlier record of the same task and model (Work.AddModelUsage).
func Usage(prices PriceLookup, task, model string, inputTokens, outputTokens int) policies.ModelUsage {
	return policies.ModelUsage{Task: task, Model: model, Calls: 1, InputTokens: inputTokens, OutputTokens: outputTokens,
		CostUSD: Cost(prices, model, inputTokens, outputTokens)}
}
