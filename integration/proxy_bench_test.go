//go:build integration

package integration

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	ctxcv1 "github.com/contextcompiler/ctxc/gen/ctxc/v1"
)

// benchTurns makes the benchmark's conversation: 20 turns of 5 messages, a
// 100-message coding session of about 13,000 tokens.
const benchTurns = 20

// benchWindow is the window of the compacting benchmarks: small enough that
// every call of the 100-message conversation is compacted.
const benchWindow = 8000

// p50 is the median of durations, in milliseconds.
func p50(d []time.Duration) float64 {
	s := slices.Clone(d)
	slices.Sort(s)
	return float64(s[len(s)/2]) / float64(time.Millisecond)
}

// BenchmarkProxy measures what the proxy adds to a call of a 100-message
// conversation (OpenAI Chat Completions, the real binary on loopback, a
// scripted upstream in this process), side by side: each iteration makes
// the same call to the upstream directly and through the proxy, in an order
// that alternates, and the medians of each are reported with their
// difference (added-p50-ms). "unchanged" stays below the trigger (the
// client's bytes go upstream); "compacted" runs in an 8,000-token window,
// where every call is compiled and rewritten. "first-byte" streams the
// answer and measures the time to its first byte beside a Compile of the
// same body over gRPC: what the proxy adds to the first byte is what its
// compile costs, and no more.
func BenchmarkProxy(b *testing.B) {
	up := newScriptedUpstream(b, nil)
	s := startServer(b, "--http-listen", "127.0.0.1:0", "--proxy-openai-upstream", up.URL)
	base := "http://" + s.httpAddr(b)
	f := proxyFormats[0]
	msgs, ends, _ := growingSession(benchTurns)
	body := clientBody(b, f, msgs[:ends[len(ends)-1]+1])
	var parsed struct{ Messages []json.RawMessage }
	if err := json.Unmarshal(body, &parsed); err != nil {
		b.Fatal(err)
	}
	n := len(parsed.Messages) - 1 // and the system prompt
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4}}
	figures := map[string]benchFigures{}
	newRequest := func(url string, body []byte, window int) *http.Request {
		req, _ := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+plantedKey)
		if window > 0 {
			req.Header.Set("X-Ctxc-Max-Context-Tokens", strconv.Itoa(window))
		}
		return req
	}
	call := func(url string, body []byte, window int) (time.Duration, string) {
		req := newRequest(url, body, window)
		start := time.Now()
		resp, err := client.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			b.Fatalf("HTTP %d", resp.StatusCode)
		}
		return time.Since(start), resp.Header.Get("X-Ctxc-Forwarded")
	}
	for _, bc := range []struct {
		name    string
		window  int
		outcome string
	}{{"unchanged", 0, "unchanged"}, {"compacted", benchWindow, "rewritten"}} {
		b.Run(bc.name, func(b *testing.B) {
			if _, outcome := call(base+f.path, body, bc.window); outcome != bc.outcome {
				b.Fatalf("%d messages forwarded %q, want %q", n, outcome, bc.outcome)
			}
			var direct, proxied []time.Duration
			b.ResetTimer()
			for i := range b.N {
				if i%2 == 0 {
					d, _ := call(up.URL+f.path, body, 0)
					p, _ := call(base+f.path, body, bc.window)
					direct, proxied = append(direct, d), append(proxied, p)
				} else {
					p, _ := call(base+f.path, body, bc.window)
					d, _ := call(up.URL+f.path, body, 0)
					direct, proxied = append(direct, d), append(proxied, p)
				}
			}
			b.StopTimer()
			b.ReportMetric(p50(direct), "direct-p50-ms")
			b.ReportMetric(p50(proxied), "proxy-p50-ms")
			b.ReportMetric(p50(proxied)-p50(direct), "added-p50-ms")
			b.ReportMetric(float64(n), "messages")
			figures[bc.name] = benchFigures{Direct: ms(p50(direct)), Proxy: ms(p50(proxied)), Added: ms(p50(proxied) - p50(direct))}
		})
	}

	b.Run("first-byte", func(b *testing.B) {
		stream := append(append([]byte(nil), body[:len(body)-1]...), `,"stream":true}`...)
		firstByte := func(url string, window int) time.Duration {
			req := newRequest(url, stream, window)
			start := time.Now()
			resp, err := client.Do(req)
			if err != nil {
				b.Fatal(err)
			}
			defer resp.Body.Close()
			r := bufio.NewReader(resp.Body)
			if _, err := r.ReadByte(); err != nil {
				b.Fatal(err)
			}
			d := time.Since(start)
			_, _ = io.Copy(io.Discard, r)
			return d
		}
		window := uint32(benchWindow)
		compile := func() time.Duration {
			start := time.Now()
			_, err := s.client().Compile(context.Background(), &ctxcv1.CompileRequest{
				State: &ctxcv1.AgentState{Model: &ctxcv1.ModelSpec{Name: f.model, Provider: f.provider}}, Profile: "budget-aware",
				InputFormat: f.input, InputJson: string(stream), Options: &ctxcv1.CompileOptions{MaxContextTokenCount: &window, RenderIntoInput: true}})
			if err != nil {
				b.Fatal(err)
			}
			return time.Since(start)
		}
		var direct, proxied, compiled []time.Duration
		b.ResetTimer()
		for range b.N {
			direct = append(direct, firstByte(up.URL+f.path, 0))
			proxied = append(proxied, firstByte(base+f.path, benchWindow))
			compiled = append(compiled, compile())
		}
		b.StopTimer()
		b.ReportMetric(p50(direct), "direct-first-byte-p50-ms")
		b.ReportMetric(p50(proxied), "proxy-first-byte-p50-ms")
		b.ReportMetric(p50(proxied)-p50(direct), "added-first-byte-p50-ms")
		b.ReportMetric(p50(compiled), "compile-p50-ms")
		figures["first_byte"] = benchFigures{Direct: ms(p50(direct)), Proxy: ms(p50(proxied)), Added: ms(p50(proxied) - p50(direct)), Compile: ms(p50(compiled))}
	})
	// With -update the run's medians become the figures the README quotes.
	if *update && len(figures) == 3 {
		golden(b, benchFiguresFile, struct {
			Messages, Window int
			Figures          map[string]benchFigures
		}{n, benchWindow, figures})
	}
}

// benchFiguresFile holds the medians of the last BenchmarkProxy run with
// -update (the README quotes them; they are measurements, which no test
// asserts).
var benchFiguresFile = filepath.Join("testdata", "proxy-bench.json")

// benchFigures are a side-by-side run's medians, in milliseconds.
type benchFigures struct {
	Direct, Proxy, Added string
	Compile              string `json:",omitempty"`
}

func ms(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) }
