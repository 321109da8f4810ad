package synth

import (
	"fmt"
	"strings"
)

// world is the fictional project a session works on: its language, layout,
// names and people. Every piece of generated text draws on it, so tool
// outputs, user turns and answers talk about the same files and symbols.
type world struct {
	r         rnd
	lang      string // go, python or typescript
	org       string
	project   string
	module    string
	nouns     []string
	pkgs      []string
	files     []string
	symbols   []string
	types     []string
	tests     []string
	endpoints []string
	tables    []string
	services  []string
	hosts     []string
	people    []string
	ticket    string
	branch    string
	version   string
	testCmd   string
	depFile   string
	ciFile    string
	envPrefix string
	libs      []string
}

var domains = [][]string{
	{"order", "cart", "payment", "invoice", "refund", "sku", "reservation", "shipment", "coupon", "checkout"},
	{"user", "session", "token", "role", "permission", "invite", "account", "credential", "tenant", "audit"},
	{"parcel", "route", "depot", "driver", "manifest", "stop", "vehicle", "slot", "carrier", "label"},
	{"article", "comment", "feed", "media", "tag", "author", "draft", "revision", "channel", "digest"},
	{"job", "schedule", "run", "worker", "queue", "lease", "trigger", "backoff", "cron", "artifact"},
	{"subscription", "plan", "usage", "ledger", "charge", "meter", "discount", "payout", "statement", "currency"},
	{"sensor", "reading", "device", "firmware", "alert", "threshold", "gateway", "calibration", "batch", "site"},
}

var orgs = []string{"acme", "northwind", "globex", "initech", "umbrella-labs", "hooli", "vandelay", "tyrell", "soylent", "wonka-io", "stark-ind", "wayne-ent"}
var firstNames = []string{"Mira", "Jonas", "Priya", "Tomás", "Aiko", "Femi", "Lena", "Ravi", "Sofia", "Dmitri", "Grace", "Kwame", "Hana", "Mateo", "Ines", "Oskar", "Yusuf", "Chloé", "Nikolai", "Zanele", "Björn", "Maya"}
var verbs = []string{"reserve", "list", "get", "create", "update", "cancel", "validate", "parse", "apply", "sync", "load", "flush", "resolve", "render", "compute", "fetch", "enqueue", "expire", "merge", "reconcile", "split", "retry", "schedule", "refresh", "normalize", "export", "import", "archive", "lock", "release"}
var suffixes = []string{"", "s", "Batch", "ByID", "ForTenant", "Async", "WithRetry", "Cursor", "Summary", "Index"}
var infraServices = []string{"postgres", "redis", "kafka", "rabbitmq", "s3", "elasticsearch", "memcached", "nats", "clickhouse", "vault"}
var langs = []string{"go", "python", "typescript"}

func newWorld(r rnd) *world {
	w := &world{r: r, lang: pick(r, langs), org: pick(r, orgs)}
	w.nouns = some(r, pick(r, domains), 7)
	main := w.nouns[0]
	w.project = fill(pick(r, []string{"{n}-api", "{n}-service", "{n}d", "{n}-worker", "{n}s", "{n}-platform", "{n}-core"}), map[string]string{"n": main})
	w.people = some(r, firstNames, 5)
	w.ticket = strings.ToUpper(pick(r, []string{"ops", "pay", "core", "plat", "inc", "eng", "web", "data", "sre"}))
	w.version = fmt.Sprintf("v%d.%d.%d", r.between(0, 3), r.between(1, 24), r.between(0, 12))
	w.branch = pick(r, []string{"feat/", "fix/", "chore/", ""}) + strings.ReplaceAll(main, "_", "-") + "-" + pick(r, []string{"idempotency", "pagination", "retries", "cleanup", "perf", "migration", "timeouts"})
	w.envPrefix = strings.ToUpper(strings.NewReplacer("-", "_").Replace(w.project))
	w.services = append(some(r, infraServices, 3), main+"-gateway", pick(r, []string{"auth", "billing", "notify", "search", "geo", "pricing"})+"-svc")
	for i := 0; i < 4; i++ {
		w.hosts = append(w.hosts, fmt.Sprintf("10.%d.%d.%d", r.between(0, 40), r.between(0, 255), r.between(2, 250)))
	}
	for _, n := range w.nouns {
		w.tables = append(w.tables, plural(n))
	}
	for i := 0; i < 6; i++ {
		ep := "/v" + fmt.Sprint(r.between(1, 2)) + "/" + plural(w.nouns[i%len(w.nouns)])
		if r.chance(0.5) {
			ep += "/{id}"
		}
		if r.chance(0.3) {
			ep += "/" + pick(r, []string{"cancel", "items", "history", "export", "refresh", "events"})
		}
		w.endpoints = append(w.endpoints, ep)
	}
	switch w.lang {
	case "go":
		w.module = "github.com/" + w.org + "/" + w.project
		for _, n := range w.nouns[:5] {
			w.pkgs = append(w.pkgs, pick(r, []string{"internal/", "pkg/", "internal/", "service/"})+n)
		}
		w.testCmd = pick(r, []string{"go test ./...", "go test -race ./...", "make test", "go test -count=1 ./..."})
		w.depFile = "go.mod"
		w.libs = []string{"pgx", "chi", "zap", "testify", "sqlc", "grpc-go", "go-redis", "cobra", "viper", "otel"}
	case "python":
		base := strings.ReplaceAll(w.project, "-", "_")
		w.module = base
		for _, n := range w.nouns[:5] {
			w.pkgs = append(w.pkgs, base+"/"+n)
		}
		w.testCmd = pick(r, []string{"pytest -q", "pytest -x", "make test", "python -m pytest tests/", "tox -e py312"})
		w.depFile = pick(r, []string{"requirements.txt", "pyproject.toml"})
		w.libs = []string{"SQLAlchemy", "FastAPI", "pydantic", "httpx", "celery", "alembic", "structlog", "pytest-asyncio", "redis-py", "tenacity"}
	default:
		w.module = "@" + w.org + "/" + w.project
		for _, n := range w.nouns[:5] {
			w.pkgs = append(w.pkgs, pick(r, []string{"src/", "src/modules/", "packages/"})+n)
		}
		w.testCmd = pick(r, []string{"npm test", "pnpm test", "npx vitest run", "npm run test:unit", "yarn jest"})
		w.depFile = "package.json"
		w.libs = []string{"zod", "express", "prisma", "ioredis", "pino", "vitest", "axios", "bullmq", "fastify", "date-fns"}
	}
	w.ciFile = pick(r, []string{".github/workflows/ci.yml", ".gitlab-ci.yml", ".circleci/config.yml", "Jenkinsfile", ".buildkite/pipeline.yml"})
	for _, p := range w.pkgs {
		for _, n := range some(r, w.nouns, 3) {
			w.files = append(w.files, w.sourcePath(p, n))
		}
	}
	for i := 0; i < 24; i++ {
		w.symbols = append(w.symbols, w.funcName(pick(r, verbs), pick(r, w.nouns), pick(r, suffixes)))
	}
	for _, n := range w.nouns {
		w.types = append(w.types, camel(n)+pick(r, []string{"", "Store", "Service", "Repo", "Handler", "Client", "Request", "Record"}))
	}
	for i := 0; i < 12; i++ {
		w.tests = append(w.tests, w.testName(pick(r, w.symbols)))
	}
	return w
}

// plural is the English plural of a domain noun.
func plural(n string) string {
	switch {
	case strings.HasSuffix(n, "y") && len(n) > 1 && !strings.ContainsAny(n[len(n)-2:len(n)-1], "aeiou"):
		return n[:len(n)-1] + "ies"
	case strings.HasSuffix(n, "s"), strings.HasSuffix(n, "x"), strings.HasSuffix(n, "ch"), strings.HasSuffix(n, "sh"):
		return n + "es"
	}
	return n + "s"
}

func camel(s string) string {
	parts := strings.FieldsFunc(s, func(r rune) bool { return r == '_' || r == '-' })
	for i, p := range parts {
		parts[i] = upperFirst(p)
	}
	return strings.Join(parts, "")
}

func snake(s string) string {
	var b strings.Builder
	for i, c := range s {
		if c >= 'A' && c <= 'Z' {
			if i > 0 {
				b.WriteByte('_')
			}
			b.WriteRune(c + ('a' - 'A'))
			continue
		}
		b.WriteRune(c)
	}
	return b.String()
}

func (w *world) funcName(verb, noun, suffix string) string {
	if suffix == "s" {
		noun, suffix = plural(noun), ""
	}
	switch w.lang {
	case "go":
		name := camel(verb) + camel(noun) + suffix
		if w.r.chance(0.3) {
			return lowerFirst(name)
		}
		return name
	case "python":
		name := verb + "_" + snake(camel(noun))
		if suffix != "" {
			name += "_" + strings.TrimPrefix(snake(strings.ReplaceAll(suffix, "ByID", "ById")), "_")
		}
		return name
	default:
		return verb + camel(noun) + suffix
	}
}

func (w *world) testName(sym string) string {
	switch w.lang {
	case "go":
		return "Test" + upperFirst(sym) + pick(w.r, []string{"", "_Concurrent", "_EmptyInput", "_Expired", "_Retries", "_Pagination", "_InvalidCursor"})
	case "python":
		return "test_" + sym + pick(w.r, []string{"", "_concurrent", "_empty", "_expired", "_retries", "_rollback"})
	default:
		return sym + " " + pick(w.r, []string{"handles empty input", "retries on timeout", "rejects invalid cursor", "returns 404 for unknown id", "is idempotent"})
	}
}

func (w *world) sourcePath(pkg, noun string) string {
	switch w.lang {
	case "go":
		return pkg + "/" + noun + pick(w.r, []string{".go", ".go", "_store.go", "_handler.go", "_test.go"})
	case "python":
		return pkg + "/" + noun + pick(w.r, []string{".py", ".py", "_service.py", "_repo.py", "_models.py"})
	default:
		return pkg + "/" + noun + pick(w.r, []string{".ts", ".ts", ".service.ts", ".controller.ts", ".test.ts"})
	}
}

func (w *world) file() string     { return pick(w.r, w.files) }
func (w *world) pkg() string      { return pick(w.r, w.pkgs) }
func (w *world) symbol() string   { return pick(w.r, w.symbols) }
func (w *world) typ() string      { return pick(w.r, w.types) }
func (w *world) noun() string     { return pick(w.r, w.nouns) }
func (w *world) endpoint() string { return pick(w.r, w.endpoints) }
func (w *world) table() string    { return pick(w.r, w.tables) }
func (w *world) person() string   { return pick(w.r, w.people) }
func (w *world) host() string     { return pick(w.r, w.hosts) }
func (w *world) lib() string      { return pick(w.r, w.libs) }
func (w *world) service() string  { return pick(w.r, w.services) }

func (w *world) ticketID() string { return fmt.Sprintf("%s-%d", w.ticket, w.r.between(120, 9800)) }

func (w *world) ext() string {
	switch w.lang {
	case "go":
		return ".go"
	case "python":
		return ".py"
	}
	return ".ts"
}

// slots are the values prose templates may name.
func (w *world) slots() map[string]string {
	r := w.r
	other := pick(r, w.nouns)
	return map[string]string{
		"pkg":        w.pkg(),
		"pkg2":       w.pkg(),
		"file":       w.file(),
		"file2":      w.file(),
		"sym":        w.symbol(),
		"sym2":       w.symbol(),
		"type":       w.typ(),
		"noun":       w.noun(),
		"nouns":      plural(w.noun()),
		"noun2":      other,
		"endpoint":   w.endpoint(),
		"table":      w.table(),
		"person":     w.person(),
		"person2":    w.person(),
		"service":    w.service(),
		"host":       w.host(),
		"lib":        w.lib(),
		"lib2":       w.lib(),
		"ticket":     w.ticketID(),
		"test":       pick(r, w.tests),
		"testcmd":    w.testCmd,
		"depfile":    w.depFile,
		"cifile":     w.ciFile,
		"project":    w.project,
		"module":     w.module,
		"branch":     w.branch,
		"version":    w.version,
		"prefix":     w.envPrefix,
		"lang":       map[string]string{"go": "Go", "python": "Python", "typescript": "TypeScript"}[w.lang],
		"langver":    map[string]string{"go": pick(r, []string{"Go 1.22", "Go 1.21", "Go 1.23"}), "python": pick(r, []string{"Python 3.11", "Python 3.12", "Python 3.10"}), "typescript": pick(r, []string{"Node 20", "Node 18", "Node 22"})}[w.lang],
		"n":          fmt.Sprint(pick(r, []int{3, 5, 10, 20, 25, 50, 100, 200, 250, 500, 1000})),
		"ms":         fmt.Sprint(pick(r, []int{50, 80, 100, 150, 200, 250, 300, 500, 800})),
		"mib":        fmt.Sprint(pick(r, []int{128, 256, 512, 768, 1024, 2048})),
		"minutes":    fmt.Sprint(pick(r, []int{2, 5, 10, 15, 30, 60})),
		"secs":       fmt.Sprint(pick(r, []int{1, 2, 3, 5, 10, 30})),
		"pct":        pick(r, []string{"80", "85", "90", "70", "75"}),
		"day":        pick(r, []string{"Monday", "Tuesday", "Wednesday", "Thursday", "Friday"}),
		"flag":       pick(r, []string{"enable_", "ff_", "use_", ""}) + snake(camel(other)) + pick(r, []string{"_v2", "_idempotency", "_new_path", "_cursor", "_batching"}),
		"date":       fmt.Sprintf("2024-%02d-%02d", r.between(1, 12), r.between(1, 28)),
		"port":       fmt.Sprint(pick(r, []int{5432, 5433, 6379, 8080, 9090, 9200, 4222})),
		"retries":    fmt.Sprint(pick(r, []int{2, 3, 4, 5, 6, 8})),
		"lines":      fmt.Sprint(pick(r, []int{30, 40, 50, 60, 80})),
		"nativeban":  map[string]string{"go": "We can't use cgo in this service", "python": "We can't ship C extensions in this service", "typescript": "We can't use native addons in this service"}[w.lang],
		"lockchoice": map[string]string{"go": "a mutex around the cache rather than sync.Map", "python": "a threading.Lock around the cache rather than a process-wide manager", "typescript": "one in-flight promise per key rather than a global lock"}[w.lang],
		"bgtask":     map[string]string{"go": "a background goroutine", "python": "a background thread", "typescript": "a setInterval loop"}[w.lang],
	}
}
