// Package normalize owns structural repair of a view: tool-call/result
// integrity and order, empty parts and messages, and old signed reasoning. It
// fills the normalize stage (type "normalize") and, with the same code, the
// final repair pass of the compact stage (type "repair").
//
// Providers reject a tool result without its call, a call without its result,
// and results that do not directly follow their call; normalize makes every
// view acceptable and reports each fix in Work.Repairs.
package normalize
