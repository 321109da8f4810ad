// Package server runs the ctxc service inside a Go program: the configuration
// (what the YAML config file decodes into, with its defaults and
// validation), the engine built from it (tokenizers, model registry, profiles,
// caches), and the servers (gRPC with health and reflection, the HTTP/JSON
// gateway with the inspector and the provider proxy, /metrics) with their
// graceful shutdown. `ctxc serve` is this package behind flags and CTXC_*
// variables.
//
//	cfg := server.NewConfig()      // or server.LoadConfigFile("ctxc.yaml")
//	cfg.Listen = "127.0.0.1:0"    // any free port
//	srv, err := server.Start(ctx, cfg)
//	if err != nil { ... }         // a *server.ConfigError lists every problem
//	defer srv.Close()
//	c, err := client.New(srv.Addr())
//
// Start serves until ctx ends or Shutdown is called, which stop the way
// `ctxc serve` stops on SIGTERM: health turns NOT_SERVING while calls are
// still served for the drain delay, then calls in flight get the grace
// period. Close stops at once.
//
// For compiling in process without any server, NewEngine builds the same
// engine and Engine.Service is the API's handlers, to call directly.
package server
