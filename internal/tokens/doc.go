// Package tokens owns the process-wide token service: the tokenizers
// (cl100k_base, o200k_base and p50k_base from github.com/pkoukk/tiktoken-go's
// embedded BPE data), the model registry (embedded models.yaml, extended by
// the config file), the per-model agentstate.TokenCounter (exact, calibrated
// estimate, or character heuristic), the token-count cache, and counting a
// whole view at once (CountEntries, cache first, then in parallel). One
// Service is built at start and shared by every request; the estimate stage
// (package policies/estimate) only calls the counter the runner resolved.
//
// Counting is linear in the input (up to a log factor): text is split into
// pieces by a hand-written equivalent of each encoding's pre-tokenizer regex
// (pretokenize.go; the tests hold it to regexp2 running the regex itself, as
// tiktoken-go does, and it is many times faster), and pieces longer than
// a few hundred bytes are merged with a heap-ordered BPE that applies exactly
// the merges of tiktoken's quadratic reference loop, so counts stay exact for
// any piece length.
package tokens
