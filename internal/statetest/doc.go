// Package statetest builds agent states and working sets for tests of policies
// and of whole pipelines.
//
// It owns four things:
//
//   - Generate: random, structurally valid agent states (user turns, parallel
//     tool calls, tool errors that are sometimes resolved later, pinned
//     messages, summaries, events, masks, signed reasoning, large outputs, a
//     running or finished last execution), with an optional Damage knob that
//     breaks tool-call structure the way real clients do, for normalize tests.
//   - FromBytes: a total decoder from arbitrary bytes to a (possibly broken)
//     state, for fuzz targets.
//   - Work and FakeCounter: a Work built the way the runner builds one, with a
//     deterministic counter (1 token per 4 bytes rounded up, plus 3 per message).
//   - Check, CheckPreserved, ParseJSON, Format and Golden: assertions and
//     golden-file helpers shared by the policy packages' tests.
//
// Nothing here is used by the server.
package statetest
