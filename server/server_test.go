package server_test

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"

	"github.com/contextcompiler/ctxc/client"
	ctxcv1 "github.com/contextcompiler/ctxc/gen/ctxc/v1"
	"github.com/contextcompiler/ctxc/server"
)

// quiet is a config on a free loopback port that logs nowhere.
func quiet() *server.Config {
	cfg := server.NewConfig()
	cfg.Listen = "127.0.0.1:0"
	cfg.Logger = slog.New(slog.DiscardHandler)
	return cfg
}

func health(ctx context.Context, addr string) (healthpb.HealthCheckResponse_ServingStatus, error) {
	conn, err := grpc.NewClient("passthrough:///"+addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return 0, err
	}
	defer conn.Close()
	resp, err := healthpb.NewHealthClient(conn).Check(ctx, &healthpb.HealthCheckRequest{})
	return resp.GetStatus(), err
}

// TestEmbedded runs the service in this process as a Go program would: on
// a free port, called through the Go client, then shut down.
func TestEmbedded(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	srv, err := server.Start(ctx, quiet())
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	select {
	case <-srv.Ready():
	default:
		t.Fatal("Start returned before the server was ready")
	}
	if strings.HasSuffix(srv.Addr(), ":0") || srv.HTTPAddr() != "" || srv.MetricsAddr() != "" {
		t.Fatalf("addresses %q %q %q", srv.Addr(), srv.HTTPAddr(), srv.MetricsAddr())
	}
	if st, err := health(ctx, srv.Addr()); err != nil || st != healthpb.HealthCheckResponse_SERVING {
		t.Fatalf("health %v, %v; want SERVING", st, err)
	}

	c, err := client.New(srv.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	state := client.State("gpt-4o", "You are helpful.", client.User("u1", "Hello!"))
	reply, err := c.Compile(ctx, &ctxcv1.CompileRequest{State: state, Profile: "budget-aware"})
	if err != nil {
		t.Fatal(err)
	}
	if len(reply.GetMessages()) == 0 || reply.GetBudget().GetUsedTokenCount() == 0 {
		t.Errorf("Compile replied %v", reply)
	}

	if err := srv.Shutdown(ctx); err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
	select {
	case <-srv.Done():
	default:
		t.Error("Shutdown returned before the server was done")
	}
	_, err = health(ctx, srv.Addr())
	if status.Code(err) != codes.Unavailable || !strings.Contains(err.Error(), "connection refused") {
		t.Errorf("health after Shutdown: %v; want connection refused", err)
	}
	if err := srv.Close(); err != nil {
		t.Errorf("Close after Shutdown: %v", err)
	}
}

// TestShutdownDrains: as on SIGTERM, health turns NOT_SERVING at once while
// calls are still served for the drain delay, on the gRPC and HTTP ports;
// ending Start's context does the same.
func TestShutdownDrains(t *testing.T) {
	cfg := quiet()
	cfg.HTTPListen = "127.0.0.1:0"
	cfg.DrainDelay = time.Second
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	srv, err := server.Start(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	if srv.HTTPAddr() == "" {
		t.Fatal("no HTTP address")
	}
	c, err := client.New(srv.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	call := context.Background()
	if _, err := c.ListProfiles(call, &ctxcv1.ListProfilesRequest{}); err != nil {
		t.Fatal(err)
	}

	began := time.Now()
	cancel() // as SIGTERM does to `ctxc serve`
	deadline := time.Now().Add(5 * time.Second)
	for {
		st, err := health(call, srv.Addr())
		if err == nil && st == healthpb.HealthCheckResponse_NOT_SERVING {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("health %v, %v; want NOT_SERVING while draining", st, err)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if _, err := c.ListProfiles(call, &ctxcv1.ListProfilesRequest{}); err != nil {
		t.Errorf("a call while draining: %v", err)
	}
	if err := srv.Wait(); err != nil {
		t.Fatal(err)
	}
	if took := time.Since(began); took < cfg.DrainDelay {
		t.Errorf("stopped after %s, before the drain delay %s", took, cfg.DrainDelay)
	}
	if _, err := health(call, srv.Addr()); status.Code(err) != codes.Unavailable {
		t.Errorf("health after the shutdown: %v; want Unavailable", err)
	}
}

// TestCloseStopsAtOnce: Close neither waits out the drain delay nor the
// grace period.
func TestCloseStopsAtOnce(t *testing.T) {
	cfg := quiet()
	cfg.HTTPListen = "127.0.0.1:0"
	cfg.DrainDelay, cfg.GracePeriod = time.Minute, time.Minute
	srv, err := server.Start(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	began := time.Now()
	if err := srv.Close(); err != nil {
		t.Fatal(err)
	}
	if took := time.Since(began); took > 10*time.Second {
		t.Errorf("Close took %s", took)
	}
	if _, err := health(context.Background(), srv.Addr()); status.Code(err) != codes.Unavailable {
		t.Errorf("health after Close: %v; want Unavailable", err)
	}
}

// TestValidateListsEveryProblem: Validate names every bad setting by its key,
// all at once.
func TestValidateListsEveryProblem(t *testing.T) {
	cfg := server.NewConfig()
	cfg.Listen = "nowhere"
	cfg.MetricsListen = "unix:/x"
	cfg.HTTPUI = "yes"
	cfg.MaxMessageBytes = 10
	cfg.GracePeriod = -time.Second
	cfg.LogLevel, cfg.LogFormat = "loud", "xml"
	cfg.TokenCacheEntries, cfg.ScheduleCacheBytes = -1, -1
	cfg.DefaultProfile = ""
	cfg.TLSKey = "/nonexistent/key.pem"
	cfg.MaxConcurrentCalls = 0
	cfg.MaxInflightBytes = 1 // below max_message_bytes
	cfg.Limits.MaxHeaderBytes = 100
	cfg.HTTPLimits.ReadTimeout = 0
	cfg.DrainDelay = -time.Second
	cfg.HTTPCORSOrigins = []string{"ftp://x"}
	cfg.Proxy.OnCompileError = "retry"
	err := cfg.Validate()
	if err == nil {
		t.Fatal("accepted")
	}
	var got []string
	for _, line := range strings.Split(err.Error(), "\n") {
		key, _, _ := strings.Cut(line, ":")
		got = append(got, key)
	}
	want := []string{"listen", "metrics_listen", "http_ui", "max_message_bytes", "grace_period", "log_level", "log_format",
		"token_cache_entries", "schedule_cache_bytes", "default_profile", "tls_cert", "tls_key", "max_concurrent_calls", "max_header_bytes",
		"max_inflight_bytes", "http_read_timeout", "drain_delay", "http_read_header_timeout", "http_cors_origins", "proxy.on_compile_error"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("problems (-want +got):\n%s\nfull error:\n%v", diff, err)
	}
	if err := server.NewConfig().Validate(); err != nil {
		t.Errorf("the defaults: %v", err)
	}
}

// TestQuotasFromTheConfigFile: the quotas section decodes into every
// caller's default and the callers' own, and each problem of it is listed
// with its key.
func TestQuotasFromTheConfigFile(t *testing.T) {
	cfg, err := server.ParseConfig([]byte(`
quotas:
  default: {max_concurrent_calls: 8, calls_per_second: 20, burst: 40}
  callers:
    batch: {max_concurrent_calls: 2, max_inflight_bytes: 67108864}
`))
	if err != nil {
		t.Fatal(err)
	}
	want := server.Quotas{Default: server.Quota{MaxConcurrentCalls: 8, CallsPerSecond: 20, Burst: 40},
		Callers: map[string]server.Quota{"batch": {MaxConcurrentCalls: 2, MaxInflightBytes: 64 << 20}}}
	if diff := cmp.Diff(want, cfg.Quotas); diff != "" {
		t.Errorf("quotas (-want +got):\n%s", diff)
	}
	if err := cfg.Validate(); err != nil {
		t.Errorf("valid quotas: %v", err)
	}
	if diff := cmp.Diff(server.Quotas{}, server.NewConfig().Quotas); diff != "" {
		t.Errorf("default quotas, want none (-want +got):\n%s", diff)
	}
	cfg, err = server.ParseConfig([]byte(`
quotas:
  default: {calls_per_second: 5}
  callers:
    batch: {max_inflight_bytes: 1024}
`))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	if err := cfg.Validate(); err != nil {
		got = strings.Split(err.Error(), "\n")
	}
	if diff := cmp.Diff([]string{
		"quotas.default.burst: 0 must be at least 1 with calls_per_second (the calls a caller may make at once)",
		"quotas.callers.batch.max_inflight_bytes: 1024 must be 0 or at least max_message_bytes (33554432), so that every request fits alone",
	}, got); diff != "" {
		t.Errorf("problems (-want +got):\n%s", diff)
	}
}

// TestStartRefusesTheConfiguration: what Start refuses before listening is a
// *ConfigError listing every problem, the engine's and the exposure's too;
// Check lists the same without starting.
func TestStartRefusesTheConfiguration(t *testing.T) {
	cfg := quiet()
	cfg.Listen = "0.0.0.0:0"
	cfg.LogFormat = "xml"
	cfg.DefaultProfile = "nope"
	_, err := server.Start(context.Background(), cfg)
	var cfgErr *server.ConfigError
	if !errors.As(err, &cfgErr) {
		t.Fatalf("Start: %v; want a *ConfigError", err)
	}
	var got []string
	for _, line := range strings.Split(err.Error(), "\n") {
		key, _, _ := strings.Cut(line, ":")
		got = append(got, key)
	}
	if diff := cmp.Diff([]string{"log_format", "default_profile", "listen"}, got); diff != "" {
		t.Errorf("problems (-want +got):\n%s\nfull error:\n%v", diff, err)
	}
	if check := server.Check(cfg); check == nil || check.Error() != err.Error() {
		t.Errorf("Check: %v", check)
	}
}

// TestNewEngine compiles in process, without a server.
func TestNewEngine(t *testing.T) {
	cfg := server.NewConfig()
	cfg.Logger = slog.New(slog.DiscardHandler)
	eng, err := server.NewEngine(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	svc, err := eng.Service()
	if err != nil {
		t.Fatal(err)
	}
	resp, err := svc.Compile(context.Background(), &ctxcv1.CompileRequest{State: client.State("gpt-4o", "", client.User("u1", "Hello!"))})
	if err != nil || len(resp.GetMessages()) != 1 {
		t.Errorf("Compile: %v, %v", resp, err)
	}
	cfg.DefaultProfile = "nope"
	if _, err := server.NewEngine(cfg); err == nil || !strings.HasPrefix(err.Error(), `default_profile: "nope" is not a profile`) {
		t.Errorf("NewEngine with an unknown default profile: %v", err)
	}
}
