// Package render owns the render stage's "render" policy: when the call's
// Options.Render names a provider format, it sets Work.Rendered to that
// provider's request body for the compiled context and adds a warning for each
// kind of content the provider could not take. The formats themselves
// (rendering, validation, import) are package providers, which the Compile
// input path uses too.
package render
