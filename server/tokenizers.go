package server

import (
	"sync"

	"github.com/contextcompiler/ctxc/internal/tokens"
	"github.com/contextcompiler/ctxc/policies/agentstate"
)

// lazyTokens builds the token service on first use, and the service builds
// each tokenizer (a tenth of a second or more, tens of MB) on its first use:
// `ctxc profiles` never counts and never pays for them, `ctxc compile` pays
// for its model's only, while serve loads them all before it reports SERVING.
// The configuration is validated when the engine is built, so a bad
// model_registry is still reported at start with every other problem.
type lazyTokens struct {
	cfg  tokens.ServiceConfig
	once sync.Once
	svc  *tokens.Service
	err  error
}

// load builds the service once; later calls return the same result.
func (l *lazyTokens) load() (*tokens.Service, error) {
	l.once.Do(func() { l.svc, l.err = tokens.NewService(l.cfg) })
	return l.svc, l.err
}

func (l *lazyTokens) Resolve(spec agentstate.ModelSpec) (agentstate.ModelInfo, agentstate.TokenCounter, error) {
	svc, err := l.load()
	if err != nil {
		return agentstate.ModelInfo{}, nil, err
	}
	return svc.Resolve(spec)
}

func (l *lazyTokens) CounterForEncoding(name string) (agentstate.TokenCounter, error) {
	svc, err := l.load()
	if err != nil {
		return nil, err
	}
	return svc.CounterForEncoding(name)
}

// ProviderOf names the provider of a model from the registry; "" when the
// service cannot load (the error shows on the first Resolve).
func (l *lazyTokens) ProviderOf(model string) string {
	svc, err := l.load()
	if err != nil {
		return ""
	}
	return svc.ProviderOf(model)
}
