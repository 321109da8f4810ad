//go:build integration

package integration

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"time"
)

// outputWords are what a seed names in its outputs.
type outputWords struct {
	seed     int
	svc, pkg string
	script   string
}

// lineGen draws the lines of one step's output: its random source (seeded
// by the run's seed and the step), the seed's words and a clock that only
// moves forward.
type lineGen struct {
	rng   *rand.Rand
	w     outputWords
	clock time.Time
}

func (g *lineGen) pick(list []string) string { return list[g.rng.IntN(len(list))] }

// stamp is the next log timestamp, a few milliseconds to a second later.
func (g *lineGen) stamp() string {
	g.clock = g.clock.Add(time.Duration(1+g.rng.IntN(900)) * time.Millisecond)
	return g.clock.Format("2006-01-02T15:04:05.000Z")
}

func (g *lineGen) hex(n int) string {
	const digits = "0123456789abcdef"
	b := make([]byte, n)
	for i := range b {
		b[i] = digits[g.rng.IntN(16)]
	}
	return string(b)
}

var (
	verbs    = []string{"Create", "Update", "Delete", "List", "Reconcile", "Post", "Refund", "Settle", "Export", "Import", "Validate", "Parse", "Render", "Retry", "Expire", "Lock", "Merge", "Split"}
	entities = []string{"Order", "Invoice", "Account", "Balance", "Quota", "Route", "Price", "Session", "Tenant", "Batch", "Entry", "Webhook", "Coupon", "Shipment", "Token"}
	cases    = []string{"empty", "single", "many", "eur", "usd", "jpy_rounding", "negative", "overflow", "unicode_name", "concurrent", "expired", "zero_amount", "max_len", "duplicate_key"}
	paths    = []string{"/v1/orders", "/v1/invoices", "/v1/accounts", "/v1/quotas", "/healthz", "/v1/sessions", "/v1/webhooks", "/metrics", "/v1/refunds"}
	modules  = []string{"github.com/prometheus/client_golang v1.19.1", "google.golang.org/grpc v1.64.0", "github.com/jackc/pgx/v5 v5.6.0", "go.uber.org/zap v1.27.0", "github.com/stretchr/testify v1.9.0", "golang.org/x/sync v0.7.0", "github.com/redis/go-redis/v9 v9.5.3"}
)

func (g *lineGen) testName() string { return "Test" + g.pick(entities) + g.pick(verbs) }
func (g *lineGen) snake() string {
	return strings.ToLower(g.pick(verbs)) + "_" + strings.ToLower(g.pick(entities))
}

// outputShape is one kind of tool output: the lines it starts with, a group
// of lines it repeats (one test, one request, one build step) and the lines
// it ends with.
type outputShape struct {
	name  string
	head  func(g *lineGen) []string
	group func(g *lineGen) []string
	tail  func(g *lineGen, failed bool) []string
}

var outputShapes = []outputShape{
	{
		name: "go test -v",
		head: func(g *lineGen) []string { return []string{"+ go test -count=1 -v ./" + g.w.svc + "/..."} },
		group: func(g *lineGen) []string {
			name := g.testName()
			lines := []string{"=== RUN   " + name}
			if g.rng.IntN(3) == 0 {
				lines = append(lines, fmt.Sprintf("    %s_test.go:%d: seeded %d fixtures in %.1fms", strings.ToLower(g.pick(entities)), 20+g.rng.IntN(300), 2+g.rng.IntN(40), g.rng.Float64()*9))
			}
			for range g.rng.IntN(4) {
				sub := name + "/" + g.pick(cases)
				lines = append(lines, "=== RUN   "+sub, fmt.Sprintf("--- PASS: %s (0.%02ds)", sub, g.rng.IntN(20)))
			}
			lines = append(lines, fmt.Sprintf("--- PASS: %s (0.%02ds)", name, g.rng.IntN(60)))
			if g.rng.IntN(12) == 0 {
				lines = append(lines, "PASS", fmt.Sprintf("ok  \texample.com/work/%s/%s\t%.3fs", g.w.svc, strings.ToLower(g.pick(entities)), 0.05+g.rng.Float64()*2))
			}
			return lines
		},
		tail: func(g *lineGen, failed bool) []string {
			if failed {
				return []string{"FAIL", fmt.Sprintf("FAIL\texample.com/work/%s/%s\t%.3fs", g.w.svc, g.w.pkg, 0.1+g.rng.Float64()*3)}
			}
			return []string{"PASS", fmt.Sprintf("ok  \texample.com/work/%s/%s\t%.3fs", g.w.svc, g.w.pkg, 0.1+g.rng.Float64()*3)}
		},
	},
	{
		name: "pytest",
		head: func(g *lineGen) []string {
			return []string{"+ python -m pytest -v tests/", "============================= test session starts ==============================",
				"platform linux -- Python 3.11.9, pytest-8.2.1, pluggy-1.5.0 -- /usr/bin/python3", "cachedir: .pytest_cache",
				"rootdir: /srv/" + g.w.svc, "configfile: pyproject.toml", "plugins: anyio-4.3.0, cov-5.0.0, xdist-3.6.1",
				fmt.Sprintf("collected %d items", 200+g.rng.IntN(600)), ""}
		},
		group: func(g *lineGen) []string {
			file := "tests/test_" + strings.ToLower(g.pick(entities)) + "s.py"
			var lines []string
			for range 2 + g.rng.IntN(6) {
				status := "PASSED"
				if g.rng.IntN(15) == 0 {
					status = "SKIPPED (needs postgres)"
				}
				lines = append(lines, fmt.Sprintf("%s::test_%s[%s] %s [%3d%%]", file, g.snake(), g.pick(cases), status, g.rng.IntN(100)))
			}
			return lines
		},
		tail: func(g *lineGen, failed bool) []string {
			if failed {
				return []string{"", fmt.Sprintf("================== 1 failed, %d passed, %d skipped in %.2fs ==================", 200+g.rng.IntN(400), g.rng.IntN(12), 5+g.rng.Float64()*40)}
			}
			return []string{"", fmt.Sprintf("================== %d passed, %d skipped in %.2fs ==================", 200+g.rng.IntN(400), g.rng.IntN(12), 5+g.rng.Float64()*40)}
		},
	},
	{
		name: "npm test",
		head: func(g *lineGen) []string {
			return []string{"+ npm test", "", fmt.Sprintf("> %s-web@2.%d.%d test", g.w.svc, g.rng.IntN(9), g.rng.IntN(20)), "> jest --ci --runInBand", ""}
		},
		group: func(g *lineGen) []string {
			e := g.pick(entities)
			lines := []string{fmt.Sprintf(" PASS  src/%s/%s%s.test.tsx (%.3f s)", strings.ToLower(e), e, g.pick([]string{"List", "Form", "Detail", "Table", "Badge"}), 0.5+g.rng.Float64()*6), "  " + e}
			for range 2 + g.rng.IntN(5) {
				lines = append(lines, fmt.Sprintf("    ✓ %s %s when %s (%d ms)", g.pick([]string{"renders", "submits", "validates", "hides", "sorts", "formats"}), strings.ToLower(g.pick(entities)), strings.ReplaceAll(g.pick(cases), "_", " "), 2+g.rng.IntN(180)))
			}
			return append(lines, "")
		},
		tail: func(g *lineGen, failed bool) []string {
			n := 300 + g.rng.IntN(400)
			suites := "Test Suites: 48 passed, 48 total"
			if failed {
				suites = "Test Suites: 1 failed, 47 passed, 48 total"
			}
			return []string{suites, fmt.Sprintf("Tests:       %d passed, %d total", n, n), fmt.Sprintf("Snapshots:   %d passed, %d total", 12, 12), fmt.Sprintf("Time:        %.1f s", 20+g.rng.Float64()*30), "Ran all test suites."}
		},
	},
	{
		name: "server log",
		head: func(g *lineGen) []string {
			return []string{"+ docker compose logs --no-color --tail=600 " + g.w.svc, g.stamp() + " INFO  main starting " + g.w.svc + " version=1.14.2 commit=" + g.hex(12)}
		},
		group: func(g *lineGen) []string {
			var lines []string
			for range 1 + g.rng.IntN(4) {
				switch g.rng.IntN(6) {
				case 0:
					lines = append(lines, fmt.Sprintf("%s DEBUG db    query=%s rows=%d dur=%.1fms", g.stamp(), g.snake(), g.rng.IntN(400), g.rng.Float64()*12))
				case 1:
					lines = append(lines, fmt.Sprintf("%s WARN  grpc  slow call method=/%s.v1.%sService/%s dur=%dms", g.stamp(), g.w.pkg, g.pick(entities), g.pick(verbs), 300+g.rng.IntN(900)))
				default:
					lines = append(lines, fmt.Sprintf("%s INFO  http  request method=%s path=%s/%s-%04d status=%d dur=%.1fms req_id=%s", g.stamp(),
						g.pick([]string{"GET", "GET", "POST", "PUT"}), g.pick(paths), strings.ToLower(g.pick(entities))[:3], g.rng.IntN(10000), []int{200, 200, 200, 201, 204, 304}[g.rng.IntN(6)], g.rng.Float64()*40, g.hex(8)))
				}
			}
			return lines
		},
		tail: func(g *lineGen, failed bool) []string {
			return []string{g.stamp() + " INFO  main shutdown complete"}
		},
	},
	{
		name: "docker build",
		head: func(g *lineGen) []string {
			return []string{"+ docker build --progress=plain -t " + g.w.svc + ":dev .", "#0 building with \"default\" instance using docker driver", "",
				"#1 [internal] load build definition from Dockerfile", "#1 transferring dockerfile: 1.02kB done", "#1 DONE 0.0s"}
		},
		group: func(g *lineGen) []string {
			n := 2 + g.rng.IntN(30)
			lines := []string{fmt.Sprintf("#%d [build %d/9] RUN go build -trimpath -o /out/%s ./cmd/%s", n, 1+g.rng.IntN(9), g.w.svc, g.w.svc)}
			at := 0.0
			for range 2 + g.rng.IntN(5) {
				at += g.rng.Float64() * 6
				lines = append(lines, fmt.Sprintf("#%d %.3f go: downloading %s", n, at, g.pick(modules)))
			}
			return append(lines, fmt.Sprintf("#%d DONE %.1fs", n, at+g.rng.Float64()*10))
		},
		tail: func(g *lineGen, failed bool) []string {
			return []string{"#21 exporting to image", "#21 writing image sha256:" + g.hex(64) + " done", "#21 naming to docker.io/library/" + g.w.svc + ":dev done", "#21 DONE 0.4s"}
		},
	},
}

// failureForm is one shape a failure takes in real output; the line that
// holds the identifier is the one whose index it returns.
type failureForm struct {
	name  string
	lines func(g *lineGen, id string) ([]string, int)
}

var failureForms = []failureForm{
	{"go panic", func(g *lineGen, id string) ([]string, int) {
		return []string{fmt.Sprintf("panic: %s: posting to closed period 2026-%02d [%s] [recovered]", g.w.pkg, 1+g.rng.IntN(12), id),
			"\tpanic: " + g.w.pkg + ": posting to closed period", "", fmt.Sprintf("goroutine %d [running]:", 20+g.rng.IntN(200)),
			fmt.Sprintf("example.com/work/%s/%s.(*Book).Post(0xc000%s, {0xc000%s, 0x3})", g.w.svc, g.w.pkg, g.hex(6), g.hex(6)),
			fmt.Sprintf("\t/srv/work/%s/%s/book.go:%d +0x%s", g.w.svc, g.w.pkg, 40+g.rng.IntN(200), g.hex(3))}, 0
	}},
	{"go test FAIL", func(g *lineGen, id string) ([]string, int) {
		name := g.testName()
		return []string{fmt.Sprintf("--- FAIL: %s (0.%02ds)", name, g.rng.IntN(90)),
			fmt.Sprintf("    %s_test.go:%d: balance of acct-%04d: got %d, want %d (%s)", g.w.pkg, 30+g.rng.IntN(300), g.rng.IntN(10000), 1000+g.rng.IntN(500), 1500, id)}, 1
	}},
	{"Python traceback", func(g *lineGen, id string) ([]string, int) {
		e := strings.ToLower(g.pick(entities))
		return []string{"Traceback (most recent call last):", fmt.Sprintf("  File \"/srv/%s/%s/import_%s.py\", line %d, in load_rows", g.w.svc, g.w.pkg, e, 20+g.rng.IntN(200)),
			"    qty = int(row[\"quantity\"])", fmt.Sprintf("ValueError: invalid literal for int() with base 10: 'n/a' [%s]", id)}, 3
	}},
	{"log ERROR", func(g *lineGen, id string) ([]string, int) {
		return []string{fmt.Sprintf("%s ERROR settle batch b-%04d rejected by the clearing house: signature mismatch [%s]", g.stamp(), g.rng.IntN(10000), id)}, 0
	}},
	{"curl", func(g *lineGen, id string) ([]string, int) {
		return []string{fmt.Sprintf("+ curl -fsS http://127.0.0.1:%d/healthz", 8000+g.rng.IntN(100)),
			fmt.Sprintf("curl: (7) Failed to connect to 127.0.0.1 port %d after 0 ms: Couldn't connect to server [%s]", 8000+g.rng.IntN(100), id)}, 1
	}},
	{"TypeError", func(g *lineGen, id string) ([]string, int) {
		e := g.pick(entities)
		return []string{fmt.Sprintf(" FAIL  src/%s/%sTotal.test.tsx", strings.ToLower(e), e),
			fmt.Sprintf("    TypeError: Cannot read properties of undefined (reading 'currency') [%s]", id),
			fmt.Sprintf("        at formatTotal (src/%s/total.ts:%d:%d)", strings.ToLower(e), 10+g.rng.IntN(90), 5+g.rng.IntN(30))}, 1
	}},
	{"dial refused", func(g *lineGen, id string) ([]string, int) {
		return []string{fmt.Sprintf("%s ERROR grpc  call failed method=/%s.v1.%sService/Get err=\"rpc error: code = Unavailable desc = connection error: desc = \\\"transport: Error while dialing: dial tcp 127.0.0.1:50052: connect: connection refused\\\"\" [%s]",
			g.stamp(), g.w.pkg, g.pick(entities), id)}, 0
	}},
}

// stepOutput is what step k prints for w's seed: 1,500 to 6,000 tokens of one
// output shape, and, when f is set, f's failure at a random place that is
// neither the first line nor the last (f's Form and Line are filled in).
func stepOutput(w outputWords, k int, f *plantedFailure) string {
	rng := rand.New(rand.NewPCG(uint64(w.seed), uint64(k)))
	g := &lineGen{rng: rng, w: w, clock: time.Date(2026, time.Month(1+w.seed%12), 1+k%28, 8+rng.IntN(10), rng.IntN(60), rng.IntN(60), 0, time.UTC)}
	shape := outputShapes[rng.IntN(len(outputShapes))]
	// A group is at most a few hundred tokens and the failure's lines a
	// hundred or so: the output stops at the last group that fits.
	target := minOutputTokens + 300 + rng.IntN(maxOutputTokens-minOutputTokens-500)
	// The failure comes after a random share of the body, written as the
	// output gets there (its timestamp in order with the lines around it).
	failAt := -1
	if f != nil {
		failAt = target * (5 + rng.IntN(90)) / 100
	}
	lines := shape.head(g)
	used := countTokens(strings.Join(lines, "\n"))
	for {
		var group []string
		failing := failAt >= 0 && used >= failAt
		at := 0
		if failing {
			group, at = failureForms[(w.seed+k/failureEvery)%len(failureForms)].lines(g, f.ID)
		} else {
			group = shape.group(g)
		}
		n := countTokens(strings.Join(group, "\n")) + 1
		if !failing && used+n > target {
			if failAt >= 0 {
				failAt = used // the body is full before the failure's place: it goes here
				continue
			}
			break
		}
		lines, used = append(lines, group...), used+n
		if failing {
			form := failureForms[(w.seed+k/failureEvery)%len(failureForms)]
			f.Form, f.Line, failAt = form.name, group[at], -1
		}
	}
	lines = append(lines, shape.tail(g, f != nil)...)
	return strings.Join(lines, "\n") + "\n"
}
