// Package isolate owns tool-trace isolation (the isolate stage): keeping the
// raw tool trace of finished executions from crowding the context. It offers
// three policies: transparent (no change), boundary (a finished execution's
// trace becomes one compact record) and observation_masking (old tool outputs
// become placeholders). MaskObservations is also the compaction engine's
// mask_observations transform.
package isolate
