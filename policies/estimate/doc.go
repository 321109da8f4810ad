// Package estimate owns the estimate stage's "estimate" policy: it counts
// every entry of the view not yet counted, and the preamble (system prompt
// and tools), with the model's counter that the runner resolved from the
// token service (package tokens) before the first stage. From this stage on
// the runner recounts whatever a later stage changes, so every stage after it
// sees true token counts.
package estimate
