// Command gencorpus writes the benchmark corpus of agent-message text to
// ../corpus/: prose, JSON tool output, source code and logs. It is
// deterministic (fixed seed), so the committed files can be regenerated:
//
//	go run ./tokens/testdata/gencorpus
package main

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
)

const target = 256 << 10 // bytes per file

var words = strings.Fields(`the a of to and in is it that for on with as was be by this are from at or
an have not they which one you had but all were when we there can been has more if will would their
what so about out up into them some could other then these than its time only new like also
context token budget model agent tool call result message summary compaction window provider
function request response error retry cache latency throughput server client stream parse value
résumé naïve 東京 数据 модель данные بيانات नमस्ते`)

var idents = []string{"ctx", "req", "resp", "err", "msgs", "budget", "window", "count", "cache", "entry", "state", "opts", "n", "i", "buf"}

func sentence(r *rand.Rand) string {
	n := 6 + r.IntN(18)
	ws := make([]string, n)
	for i := range ws {
		ws[i] = words[r.IntN(len(words))]
	}
	s := strings.Join(ws, " ")
	return strings.ToUpper(s[:1]) + s[1:] + []string{".", ".", "?", "!", ";"}[r.IntN(5)]
}

func prose(r *rand.Rand, b *strings.Builder) {
	for b.Len() < target {
		for range 3 + r.IntN(5) {
			b.WriteString(sentence(r))
			b.WriteByte(' ')
		}
		b.WriteString("\n\n")
	}
}

func toolJSON(r *rand.Rand, b *strings.Builder) {
	for b.Len() < target {
		fmt.Fprintf(b, `{"tool_call_id":"call_%08x","status":"ok","items":[`, r.Uint32())
		for i := range 2 + r.IntN(6) {
			if i > 0 {
				b.WriteByte(',')
			}
			fmt.Fprintf(b, `{"id":%d,"path":"src/%s/%s.go","line":%d,"score":%.4f,"snippet":%q}`,
				r.IntN(100000), idents[r.IntN(len(idents))], idents[r.IntN(len(idents))], r.IntN(2000), r.Float64(), sentence(r))
		}
		fmt.Fprintf(b, "],\"elapsed_ms\":%d}\n", r.IntN(5000))
	}
}

func source(r *rand.Rand, b *strings.Builder) {
	for b.Len() < target {
		name := idents[r.IntN(len(idents))]
		fmt.Fprintf(b, "// %s handles %s.\nfunc %s%d(%s context.Context, %s []string) (int, error) {\n", name, sentence(r), name, r.IntN(1000), idents[r.IntN(3)], idents[3+r.IntN(5)])
		for range 3 + r.IntN(8) {
			a, c := idents[r.IntN(len(idents))], idents[r.IntN(len(idents))]
			switch r.IntN(3) {
			case 0:
				fmt.Fprintf(b, "\tif %s == nil {\n\t\treturn 0, fmt.Errorf(\"%s: %%w\", %s)\n\t}\n", a, c, a)
			case 1:
				fmt.Fprintf(b, "\tfor %s := range %s {\n\t\t%s += len(%s)\n\t}\n", a, c, c, a)
			default:
				fmt.Fprintf(b, "\t%s := %s.Get(%q, %d)\n", a, c, c, r.IntN(64))
			}
		}
		b.WriteString("\treturn 0, nil\n}\n\n")
	}
}

func logs(r *rand.Rand, b *strings.Builder) {
	levels := []string{"INFO", "INFO", "INFO", "WARN", "ERROR", "DEBUG"}
	for b.Len() < target {
		fmt.Fprintf(b, "2025-03-%02dT%02d:%02d:%02d.%03dZ %-5s %s request_id=%016x dur=%dms status=%d\n",
			1+r.IntN(28), r.IntN(24), r.IntN(60), r.IntN(60), r.IntN(1000), levels[r.IntN(len(levels))],
			sentence(r), r.Uint64(), r.IntN(3000), []int{200, 200, 201, 404, 500, 503}[r.IntN(6)])
	}
}

func main() {
	dir := filepath.Join("policies", "tokens", "testdata", "corpus")
	if len(os.Args) > 1 {
		dir = os.Args[1]
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	for i, f := range []struct {
		name string
		gen  func(*rand.Rand, *strings.Builder)
	}{{"prose.txt", prose}, {"tool_output.jsonl", toolJSON}, {"source.go.txt", source}, {"logs.txt", logs}} {
		var b strings.Builder
		f.gen(rand.New(rand.NewPCG(2025, uint64(i))), &b)
		if err := os.WriteFile(filepath.Join(dir, f.name), []byte(b.String()), 0o644); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	}
}
