package synth

import (
	"fmt"
	"strings"
)

// Generators of tool output bodies. Each grows its text to about size
// characters from the world's names, so outputs look like the project's.

// grow appends pieces from next until b holds at least size characters.
func grow(b *strings.Builder, size int, next func(i int) string) {
	for i := 0; b.Len() < size; i++ {
		b.WriteString(next(i))
	}
}

func (w *world) sourceFile(path string, size int) string {
	switch w.lang {
	case "go":
		return w.goFile(path, size)
	case "python":
		return w.pyFile(path, size)
	}
	return w.tsFile(path, size)
}

func (w *world) goStmt() string {
	r := w.r
	switch r.IntN(10) {
	case 0:
		return fmt.Sprintf("\tif err != nil {\n\t\treturn nil, fmt.Errorf(\"%s: %%w\", err)\n\t}\n", w.symbol())
	case 1:
		return fmt.Sprintf("\tctx, cancel := context.WithTimeout(ctx, %d*time.Second)\n\tdefer cancel()\n", r.between(1, 30))
	case 2:
		return fmt.Sprintf("\trows, err := s.db.Query(ctx, `SELECT id, status, updated_at FROM %s WHERE tenant_id = $1 AND id > $2 ORDER BY id LIMIT $3`, tenant, cursor, limit)\n", w.table())
	case 3:
		return fmt.Sprintf("\tfor _, item := range items {\n\t\tif item.%sID == \"\" {\n\t\t\tcontinue\n\t\t}\n\t\tout = append(out, item)\n\t}\n", camel(w.noun()))
	case 4:
		return fmt.Sprintf("\ts.log.Info(\"%s\", zap.String(\"tenant\", tenant), zap.Int(\"count\", len(out)))\n", w.symbol())
	case 5:
		return fmt.Sprintf("\tmu.Lock()\n\tdefer mu.Unlock()\n\tif v, ok := cache[%sKey(tenant)]; ok {\n\t\treturn v, nil\n\t}\n", lowerFirst(camel(w.noun())))
	case 6:
		return fmt.Sprintf("\tswitch req.Status {\n\tcase Status%s:\n\t\treturn nil\n\tcase StatusCancelled:\n\t\treturn ErrAlreadyCancelled\n\tdefault:\n\t\treturn fmt.Errorf(\"unexpected status %%q\", req.Status)\n\t}\n", pick(r, []string{"Pending", "Active", "Settled"}))
	case 7:
		return fmt.Sprintf("\tbackoff := %d * time.Millisecond\n\tfor attempt := 0; attempt < maxAttempts; attempt++ {\n\t\tif err = call(ctx); err == nil {\n\t\t\tbreak\n\t\t}\n\t\ttime.Sleep(backoff)\n\t\tbackoff *= 2\n\t}\n", r.between(10, 500))
	case 8:
		return fmt.Sprintf("\t// %s: keep the lock short; the caller may hold the tx open.\n", w.symbol())
	default:
		return fmt.Sprintf("\tresp := &%sResponse{Items: out, NextCursor: encodeCursor(last)}\n\t_ = resp\n", w.typ())
	}
}

func (w *world) goFile(path string, size int) string {
	r := w.r
	var b strings.Builder
	pkg := path
	if i := strings.LastIndex(path, "/"); i > 0 {
		pkg = path[:i]
	}
	if i := strings.LastIndex(pkg, "/"); i >= 0 {
		pkg = pkg[i+1:]
	}
	fmt.Fprintf(&b, "package %s\n\nimport (\n\t\"context\"\n\t\"errors\"\n\t\"fmt\"\n\t\"sync\"\n\t\"time\"\n\n\t\"%s/internal/platform/db\"\n\t\"go.uber.org/zap\"\n)\n\n", pkg, w.module)
	grow(&b, size, func(i int) string {
		var s strings.Builder
		switch r.IntN(4) {
		case 0:
			t := w.typ()
			fmt.Fprintf(&s, "// %s holds what %s needs between calls.\ntype %s%d struct {\n", t, w.symbol(), t, i)
			for j := 0; j < r.between(2, 7); j++ {
				fmt.Fprintf(&s, "\t%s %s `json:\"%s\"`\n", camel(w.noun())+pick(r, []string{"ID", "At", "Count", "Status", "Name"}), pick(r, []string{"string", "int64", "time.Time", "*db.Tx", "[]string", "map[string]int"}), snake(w.noun()))
			}
			s.WriteString("}\n\n")
		case 1:
			fmt.Fprintf(&s, "var Err%s%d = errors.New(\"%s: %s\")\n\n", camel(w.noun()), i, pkg, pick(r, []string{"not found", "already exists", "conflict", "expired", "invalid cursor", "quota exceeded"}))
		default:
			name := w.symbol()
			fmt.Fprintf(&s, "// %s %s.\nfunc (s *%s) %s%d(ctx context.Context, tenant string, limit int) ([]%s, error) {\n", name, pick(r, []string{"returns the page after the cursor", "is safe for concurrent use", "retries transient errors", "validates before it writes", "runs inside the caller's transaction"}), w.typ(), name, i, w.typ())
			for j := 0; j < r.between(2, 5); j++ {
				s.WriteString(w.goStmt())
			}
			s.WriteString("\treturn out, nil\n}\n\n")
		}
		return s.String()
	})
	return b.String()
}

func (w *world) pyFile(path string, size int) string {
	r := w.r
	var b strings.Builder
	fmt.Fprintf(&b, "\"\"\"%s: %s.\"\"\"\nfrom __future__ import annotations\n\nimport logging\nfrom dataclasses import dataclass, field\nfrom datetime import datetime, timezone\n\nfrom sqlalchemy import select\nfrom %s.db import Session\n\nlog = logging.getLogger(__name__)\n\n", path, pick(r, []string{"data access", "service layer", "request handlers", "background jobs"}), w.module)
	grow(&b, size, func(i int) string {
		var s strings.Builder
		switch r.IntN(3) {
		case 0:
			fmt.Fprintf(&s, "@dataclass\nclass %s%d:\n", w.typ(), i)
			for j := 0; j < r.between(2, 6); j++ {
				fmt.Fprintf(&s, "    %s: %s\n", snake(camel(w.noun()))+pick(r, []string{"_id", "_at", "_count", "_status"}), pick(r, []string{"str", "int", "datetime", "list[str] = field(default_factory=list)", "str | None = None"}))
			}
			s.WriteString("\n\n")
		default:
			name := w.symbol()
			fmt.Fprintf(&s, "def %s_%d(session: Session, tenant_id: str, limit: int = %d) -> list[%s]:\n", name, i, r.between(10, 500), w.typ())
			fmt.Fprintf(&s, "    \"\"\"%s.\"\"\"\n", pick(r, []string{"Return the next page", "Retry transient failures", "Validate and persist", "Reconcile with the upstream copy"}))
			for j := 0; j < r.between(2, 5); j++ {
				s.WriteString(pick(r, []string{
					fmt.Sprintf("    stmt = select(%s).where(%s.tenant_id == tenant_id).limit(limit)\n", camel(w.noun()), camel(w.noun())),
					"    rows = session.execute(stmt).scalars().all()\n",
					fmt.Sprintf("    if not rows:\n        log.info(\"%s: nothing to do\", extra={\"tenant\": tenant_id})\n        return []\n", name),
					"    now = datetime.now(timezone.utc)\n",
					fmt.Sprintf("    for row in rows:\n        if row.status == \"%s\":\n            continue\n        row.updated_at = now\n", pick(r, []string{"cancelled", "expired", "done"})),
					"    try:\n        session.commit()\n    except Exception:\n        session.rollback()\n        raise\n",
				}))
			}
			s.WriteString("    return list(rows)\n\n\n")
		}
		return s.String()
	})
	return b.String()
}

func (w *world) tsFile(path string, size int) string {
	r := w.r
	var b strings.Builder
	fmt.Fprintf(&b, "import { z } from \"zod\";\nimport type { Db } from \"../db\";\nimport { logger } from \"../logger\";\n\n")
	grow(&b, size, func(i int) string {
		var s strings.Builder
		switch r.IntN(3) {
		case 0:
			fmt.Fprintf(&s, "export const %sSchema%d = z.object({\n", lowerFirst(w.typ()), i)
			for j := 0; j < r.between(2, 6); j++ {
				fmt.Fprintf(&s, "  %s: z.%s,\n", lowerFirst(camel(w.noun()))+pick(r, []string{"Id", "At", "Count", "Status"}), pick(r, []string{"string()", "number().int()", "string().datetime()", "array(z.string())", "enum([\"pending\", \"done\"])"}))
			}
			s.WriteString("});\n\n")
		default:
			name := w.symbol()
			fmt.Fprintf(&s, "export async function %s%d(db: Db, tenantId: string, limit = %d): Promise<%s[]> {\n", name, i, r.between(10, 500), w.typ())
			for j := 0; j < r.between(2, 5); j++ {
				s.WriteString(pick(r, []string{
					fmt.Sprintf("  const rows = await db.%s.findMany({ where: { tenantId }, take: limit });\n", lowerFirst(camel(w.noun()))),
					fmt.Sprintf("  if (rows.length === 0) {\n    logger.info({ tenantId }, \"%s: nothing to do\");\n    return [];\n  }\n", name),
					"  const now = new Date().toISOString();\n",
					"  for (const row of rows) {\n    if (row.status === \"cancelled\") continue;\n    row.updatedAt = now;\n  }\n",
					fmt.Sprintf("  await db.$transaction(async (tx) => {\n    await tx.%s.updateMany({ where: { tenantId }, data: { syncedAt: now } });\n  });\n", lowerFirst(camel(w.noun()))),
				}))
			}
			s.WriteString("  return rows;\n}\n\n")
		}
		return s.String()
	})
	return b.String()
}

// testLog is a passing (or, with failing, partly failing) test run.
func (w *world) testLog(size int, failing string) string {
	r := w.r
	var b strings.Builder
	switch w.lang {
	case "go":
		grow(&b, size, func(i int) string {
			t := pick(r, w.tests)
			return fmt.Sprintf("=== RUN   %s\n--- PASS: %s (%.2fs)\n", t, t, float64(r.IntN(300))/100)
		})
		if failing != "" {
			b.WriteString(failing)
			fmt.Fprintf(&b, "FAIL\nFAIL\t%s/%s\t%.3fs\n", w.module, w.pkg(), float64(r.IntN(9000))/1000)
		} else {
			for _, p := range some(r, w.pkgs, 4) {
				fmt.Fprintf(&b, "ok  \t%s/%s\t%.3fs\n", w.module, p, float64(r.IntN(9000))/1000)
			}
		}
	case "python":
		fmt.Fprintf(&b, "============================= test session starts ==============================\nplatform linux -- Python 3.12.3, pytest-8.2.1, pluggy-1.5.0\nrootdir: /workspace/%s\ncollected %d items\n\n", w.project, r.between(40, 900))
		grow(&b, size, func(i int) string {
			return fmt.Sprintf("tests/%s/test_%s.py %s [%3d%%]\n", w.noun(), w.noun(), strings.Repeat(".", r.between(5, 40)), r.between(1, 99))
		})
		if failing != "" {
			b.WriteString("\n=================================== FAILURES ===================================\n")
			b.WriteString(failing)
			fmt.Fprintf(&b, "=========================== short test summary info ============================\nFAILED tests/%s/test_%s.py::%s\n======================== 1 failed, %d passed in %.2fs =========================\n", w.noun(), w.noun(), pick(r, w.tests), r.between(40, 900), float64(r.IntN(9000))/100)
		} else {
			fmt.Fprintf(&b, "\n======================== %d passed, %d warnings in %.2fs ========================\n", r.between(40, 900), r.between(0, 12), float64(r.IntN(9000))/100)
		}
	default:
		grow(&b, size, func(i int) string {
			return fmt.Sprintf(" ✓ %s/%s.test.ts > %s (%d ms)\n", w.pkg(), w.noun(), pick(r, w.tests), r.between(1, 400))
		})
		if failing != "" {
			b.WriteString(failing)
			fmt.Fprintf(&b, "\n Test Files  1 failed | %d passed (%d)\n      Tests  1 failed | %d passed (%d)\n", r.between(5, 60), r.between(6, 61), r.between(40, 600), r.between(41, 601))
		} else {
			fmt.Fprintf(&b, "\n Test Files  %d passed (%[1]d)\n      Tests  %d passed (%[2]d)\n   Duration  %.2fs\n", r.between(5, 60), r.between(40, 600), float64(r.IntN(9000))/100)
		}
	}
	return b.String()
}

func (w *world) grepOutput(pattern string, size int) string {
	r := w.r
	var b strings.Builder
	grow(&b, size, func(i int) string {
		f := w.file()
		line := r.between(3, 900)
		code := pick(r, []string{
			fmt.Sprintf("%s(ctx, tenant, %s)", pattern, pick(r, []string{"limit", "cursor", "req.ID", "opts"})),
			fmt.Sprintf("// %s is called from the worker loop", pattern),
			fmt.Sprintf("if err := %s(ctx); err != nil {", pattern),
			fmt.Sprintf("result = await %s(db, tenantId)", pattern),
			fmt.Sprintf("    return %s(session, tenant_id=tenant_id)", pattern),
			fmt.Sprintf("func (h *%s) %s(w http.ResponseWriter, r *http.Request) {", w.typ(), pattern),
		})
		return fmt.Sprintf("%s:%d:%s\n", f, line, code)
	})
	return b.String()
}

func (w *world) dirListing(dir string, size int) string {
	r := w.r
	var b strings.Builder
	fmt.Fprintf(&b, "total %d\n", r.between(8, 400))
	grow(&b, size, func(i int) string {
		name := w.noun() + pick(r, []string{w.ext(), "_test" + w.ext(), ".md", ".yaml", ".json", "/", ".sql", ".lock"})
		mode := "-rw-r--r--"
		if strings.HasSuffix(name, "/") {
			mode = "drwxr-xr-x"
		}
		return fmt.Sprintf("%s  1 dev  staff  %6d %s %2d %02d:%02d %s\n", mode, r.between(96, 48000), pick(r, []string{"Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"}), r.between(1, 28), r.between(0, 23), r.between(0, 59), name)
	})
	return b.String()
}

func (w *world) jsonBody(size int) string {
	r := w.r
	var b strings.Builder
	fmt.Fprintf(&b, "{\n  \"data\": [\n")
	first := true
	grow(&b, size, func(i int) string {
		sep := ",\n"
		if first {
			sep, first = "", false
		}
		n := w.noun()
		return fmt.Sprintf("%s    {\"id\": \"%s_%s\", \"tenant_id\": \"t_%s\", \"status\": \"%s\", \"amount\": %d, \"currency\": \"%s\", \"created_at\": \"2024-%02d-%02dT%02d:%02d:%02dZ\", \"%s_count\": %d}",
			sep, n[:min(3, len(n))], r.token(14, alnum), r.hex(8), pick(r, []string{"pending", "active", "cancelled", "settled", "failed", "expired"}), r.between(100, 990000), pick(r, []string{"EUR", "USD", "GBP", "JPY"}), r.between(1, 12), r.between(1, 28), r.between(0, 23), r.between(0, 59), r.between(0, 59), n, r.between(0, 40))
	})
	fmt.Fprintf(&b, "\n  ],\n  \"next_cursor\": \"%s\",\n  \"has_more\": %v\n}\n", r.token(24, alnum), r.chance(0.6))
	return b.String()
}

func (w *world) httpResponse(status string, size int) string {
	r := w.r
	return fmt.Sprintf("HTTP/1.1 %s\ncontent-type: application/json\nx-request-id: req_%s\nx-ratelimit-remaining: %d\ndate: Tue, %02d Sep 2024 %02d:%02d:%02d GMT\n\n%s",
		status, r.token(20, alnum), r.between(0, 600), r.between(1, 28), r.between(0, 23), r.between(0, 59), r.between(0, 59), w.jsonBody(size))
}

func (w *world) docsExcerpt(query string, size int) string {
	r := w.r
	var b strings.Builder
	fmt.Fprintf(&b, "Results for %q (%d matches)\n\n", query, r.between(3, 40))
	grow(&b, size, func(i int) string {
		lib := w.lib()
		return fmt.Sprintf("## %s — %s\nhttps://docs.example.dev/%s/%s\n\n%s %s %s\n\n```\n%s\n```\n\n",
			lib, pick(r, []string{"Connection pooling", "Timeouts and retries", "Transactions", "Pagination", "Configuration", "Testing utilities", "Migration guide"}),
			strings.ToLower(lib), w.noun(),
			pick(r, []string{"The client keeps idle connections for reuse;", "Every call accepts a context or signal;", "Options are read once at start;", "Cursors are opaque strings;"}),
			pick(r, []string{"set the limit with the pool options", "a cancelled context aborts the request", "unknown keys are rejected", "they must not be parsed by clients"}),
			pick(r, []string{"(since 2.3).", "— see also the FAQ.", "unless overridden per call.", "in the default configuration."}),
			pick(r, []string{"pool.max_size = 20\npool.idle_timeout = \"30s\"", "client.do(req, timeout=5)", "await tx.commit()", "next = page.cursor"}))
	})
	return b.String()
}

func (w *world) gitLog(size int) string {
	r := w.r
	var b strings.Builder
	grow(&b, size, func(i int) string {
		return fmt.Sprintf("commit %s\nAuthor: %s <%s@%s.com>\nDate:   %s Sep %d %02d:%02d:%02d 2024 +0200\n\n    %s %s %s\n\n",
			r.hex(40), w.person(), strings.ToLower(w.person()), w.org, pick(r, []string{"Mon", "Tue", "Wed", "Thu", "Fri"}), r.between(1, 28), r.between(8, 20), r.between(0, 59), r.between(0, 59),
			pick(r, []string{"fix:", "feat:", "chore:", "refactor:", "test:"}), pick(r, verbs), w.noun()+pick(r, []string{" handling", " cursor", " retries", " cache", " metrics", " tests"}))
	})
	return b.String()
}

func (w *world) gitDiff(path string, size int) string {
	r := w.r
	var b strings.Builder
	fmt.Fprintf(&b, "diff --git a/%s b/%[1]s\nindex %s..%s 100644\n--- a/%[1]s\n+++ b/%[1]s\n", path, r.hex(7), r.hex(7))
	grow(&b, size, func(i int) string {
		start := r.between(10, 600)
		return fmt.Sprintf("@@ -%d,%d +%d,%d @@\n %s\n-%s\n+%s\n+%s\n %s\n", start, 6, start, 7,
			pick(r, []string{"func (s *Store) load(ctx context.Context) error {", "def load(self):", "export async function load() {"}),
			pick(r, []string{"\treturn s.db.Get(ctx, id)", "    return self.db.get(id)", "  return db.get(id);"}),
			pick(r, []string{"\tctx, cancel := context.WithTimeout(ctx, 2*time.Second)", "    with timeout(2):", "  const signal = AbortSignal.timeout(2000);"}),
			pick(r, []string{"\tdefer cancel()", "        pass", "  // bounded by the caller's deadline"}),
			"}")
	})
	return b.String()
}

func (w *world) podList(size int) string {
	r := w.r
	var b strings.Builder
	b.WriteString("NAME                                   READY   STATUS    RESTARTS   AGE\n")
	grow(&b, size, func(i int) string {
		return fmt.Sprintf("%-38s %d/1     %-9s %-10d %dh\n", w.project+"-"+r.hex(10)+"-"+r.token(5, "abcdefghijklmnopqrstuvwxyz0123456789"), 1, pick(r, []string{"Running", "Running", "Running", "Completed"}), r.between(0, 3), r.between(1, 90))
	})
	return b.String()
}

func (w *world) buildLog(size int) string {
	r := w.r
	var b strings.Builder
	grow(&b, size, func(i int) string {
		return fmt.Sprintf("[%02d:%02d:%02d] %s %s\n", r.between(8, 20), r.between(0, 59), r.between(0, 59),
			pick(r, []string{"INFO ", "DEBUG", "INFO ", "WARN "}),
			pick(r, []string{
				fmt.Sprintf("compiling %s (%d files)", w.pkg(), r.between(2, 60)),
				fmt.Sprintf("cache hit for %s", w.file()),
				fmt.Sprintf("linking %s", w.project),
				fmt.Sprintf("step %d/%d: %s", r.between(1, 9), 9, pick(r, []string{"restore deps", "lint", "unit tests", "build image", "push"})),
				fmt.Sprintf("request_id=req_%s method=GET path=%s status=200 duration_ms=%d", r.token(12, alnum), w.endpoint(), r.between(2, 400)),
			}))
	})
	return b.String()
}

func (w *world) sqlRows(size int) string {
	r := w.r
	var b strings.Builder
	t := w.table()
	fmt.Fprintf(&b, " id | tenant_id | status | updated_at\n----+-----------+--------+---------------------------\n")
	n := 0
	grow(&b, size, func(i int) string {
		n++
		return fmt.Sprintf(" %d | t_%s | %s | 2024-09-%02d %02d:%02d:%02d+00\n", r.between(1000, 999999), r.hex(6), pick(r, []string{"pending", "active", "done"}), r.between(1, 28), r.between(0, 23), r.between(0, 59), r.between(0, 59))
	})
	fmt.Fprintf(&b, "(%d rows)\n-- from %s\n", n, t)
	return b.String()
}
