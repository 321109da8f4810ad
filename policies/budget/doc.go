// Package budget owns the budget stage: the "token_budget" policy computes
// the context's token accounting (ContextTokenBudget) from the
// estimate stage's counts, anchored on provider-reported usage when the view's
// prefix is exactly what the provider saw.
package budget
