// Package estimate owns the estimate stage's "estimate" policy: it counts
// every entry of the view not yet counted, and the preamble (system prompt
// and tools), with the model's counter that the runner resolved from the
// token service (package tokens) before the first stage. From this stage on
// the runner recounts whatever a later stage changes, so every stage after it
// sees true token counts. When the model is not in the registry and was
// resolved with its provider's defaults (agentstate.ModelInfo.Assumption), the
// policy adds that to the report's warnings: every count is then an estimate.
package estimate
