package diagnose

import (
	"regexp"
	"sync"
)

// pattern is a regular expression compiled on first use. The package reads
// tool output with more than a hundred of them, and compiling them all when
// the package was initialized cost about 5 ms of every process's start
// (GODEBUG=inittrace=1), which `ctxc serve` paid before it could answer
// health (docs/performance.md: SERVING within 50 ms) and every CLI command
// paid before main ran. The first read of a tool output compiles those it
// uses.
type pattern struct {
	re func() *regexp.Regexp
}

// later is regexp.MustCompile(expr), on first use.
func later(expr string) *pattern {
	return &pattern{re: sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(expr) })}
}

// laterFunc is the pattern build returns, built on first use.
func laterFunc(build func() *regexp.Regexp) *pattern {
	return &pattern{re: sync.OnceValue(build)}
}

func (p *pattern) MatchString(s string) bool            { return p.re().MatchString(s) }
func (p *pattern) FindString(s string) string           { return p.re().FindString(s) }
func (p *pattern) FindStringSubmatch(s string) []string { return p.re().FindStringSubmatch(s) }
func (p *pattern) ReplaceAllString(src, repl string) string {
	return p.re().ReplaceAllString(src, repl)
}
func (p *pattern) Split(s string, n int) []string { return p.re().Split(s, n) }
func (p *pattern) String() string                 { return p.re().String() }
