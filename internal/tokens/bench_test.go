package tokens

import (
	"encoding/binary"
	"fmt"
	"hash/maphash"
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/contextcompiler/ctxc/policies"
	"github.com/contextcompiler/ctxc/policies/agentstate"
	"github.com/contextcompiler/ctxc/policies/budget"
)

func readCorpus(b *testing.B) []string {
	b.Helper()
	var out []string
	for _, name := range []string{"prose.txt", "tool_output.jsonl", "source.go.txt", "logs.txt"} {
		data, err := os.ReadFile("testdata/corpus/" + name)
		if err != nil {
			b.Fatal(err)
		}
		out = append(out, string(data))
	}
	return out
}

// BenchmarkCounterVsRaw compares the service's counter (cache disabled) with
// tiktoken-go's Encode on the same 16 KiB texts; read the ratio of the two.
func BenchmarkCounterVsRaw(b *testing.B) {
	s, err := NewService(ServiceConfig{})
	if err != nil {
		b.Fatal(err)
	}
	if err := s.Preload(); err != nil {
		b.Fatal(err)
	}
	corpus := readCorpus(b)
	for _, enc := range []string{EncodingO200K, EncodingCL100K} {
		c, err := s.CounterForEncoding(enc)
		if err != nil {
			b.Fatal(err)
		}
		raw := libraryEncoding(b, enc)
		texts := make([]string, len(corpus))
		size := 0
		for i, t := range corpus {
			texts[i] = t[:16<<10]
			size += len(texts[i])
		}
		b.Run(enc+"/counter", func(b *testing.B) {
			b.SetBytes(int64(size))
			for b.Loop() {
				for _, t := range texts {
					c.CountText(t)
				}
			}
		})
		b.Run(enc+"/raw", func(b *testing.B) {
			b.SetBytes(int64(size))
			for b.Loop() {
				for _, t := range texts {
					raw.Encode(t, nil, nil)
				}
			}
		})
	}
}

// BenchmarkCountLongRun counts runs at 64 KiB and 1 MiB: ns/op should grow
// about 16x (n log n), not 256x.
func BenchmarkCountLongRun(b *testing.B) {
	s := service(b)
	for _, unit := range []struct{ name, text string }{{"a", "a"}, {"space", " "}, {"rune3", "中"}} {
		for _, size := range []int{64 << 10, 1 << 20} {
			text := strings.Repeat(unit.text, size/len(unit.text))
			b.Run(fmt.Sprintf("%s/%dKiB", unit.name, size>>10), func(b *testing.B) {
				b.SetBytes(int64(len(text)))
				for b.Loop() {
					s.encoders[EncodingO200K].count(text)
				}
			})
		}
	}
}

// agentState builds a 2,000-message state of about 800K o200k tokens from the
// corpus; every message is unique, so a cold run tokenizes them all.
func agentState(b *testing.B, messages int) *agentstate.State {
	corpus := readCorpus(b)
	st := &agentstate.State{Model: agentstate.ModelSpec{Name: "gpt-4o"}}
	st.Context.SystemPrompt = corpus[0][:4000]
	st.Context.Tools = []agentstate.ToolDefinition{{Name: "search", Description: "Search files.", ParametersJSON: `{"type":"object","properties":{"q":{"type":"string"}}}`}}
	for i := range messages {
		src := corpus[i%len(corpus)]
		at := (i * 7919) % (len(src) - 2000)
		text := "message " + strconv.Itoa(i) + ": " + src[at:at+1700]
		id := "m" + strconv.Itoa(i)
		var m agentstate.Message
		switch i % 4 {
		case 0:
			m = agentstate.Message{ID: id, Role: agentstate.RoleUser, Parts: []agentstate.Part{agentstate.TextPart(text)}}
		case 1:
			m = agentstate.Message{ID: id, Role: agentstate.RoleAssistant, Parts: []agentstate.Part{agentstate.TextPart(text[:200]),
				{Kind: agentstate.PartToolCall, ToolCall: agentstate.ToolCall{ID: "c" + id, Name: "search", ArgumentsJSON: `{"q":"` + strconv.Itoa(i) + `"}`}}}}
		case 2:
			m = agentstate.Message{ID: id, Role: agentstate.RoleTool, Parts: []agentstate.Part{{Kind: agentstate.PartToolResult, ToolResult: agentstate.ToolResult{ToolCallID: "cm" + strconv.Itoa(i-1), Name: "search", Content: text}}}}
		default:
			m = agentstate.Message{ID: id, Role: agentstate.RoleAssistant, Parts: []agentstate.Part{agentstate.TextPart(text)}}
		}
		st.Context.Messages = append(st.Context.Messages, m)
	}
	return st
}

func runBudget(b *testing.B, s *Service, st *agentstate.State) agentstate.Budget {
	info, c, err := s.Resolve(st.Model)
	if err != nil {
		b.Fatal(err)
	}
	w, _ := policies.NewWork(policies.Input{State: st, Model: info, Counter: c})
	// What the estimate stage does (package policies/estimate imports this one).
	CountEntries(c, w.Entries, runtime.GOMAXPROCS(0))
	w.SystemTokens, w.ToolTokens = c.CountPreamble(&st.Context)
	cfg := budget.DefaultConfig()
	return budget.Compute(w, &cfg)
}

// BenchmarkBudget runs estimate + token_budget over a 2,000-message state:
// cold (empty cache), cached (every count cached), and after appending two
// new messages to a cached state.
func BenchmarkBudget(b *testing.B) {
	s, err := NewService(DefaultServiceConfig())
	if err != nil {
		b.Fatal(err)
	}
	if err := s.Preload(); err != nil {
		b.Fatal(err)
	}
	st := agentState(b, 2000)
	b.Run("cold", func(b *testing.B) {
		for b.Loop() {
			b.StopTimer()
			s.cache = newCountCache(DefaultCacheEntries)
			b.StartTimer()
			runBudget(b, s, st)
		}
		b.ReportMetric(float64(runBudget(b, s, st).Used), "tokens")
	})
	s.cache = newCountCache(DefaultCacheEntries)
	runBudget(b, s, st)
	b.Run("cached", func(b *testing.B) {
		for b.Loop() {
			runBudget(b, s, st)
		}
	})
	grown := agentState(b, 2002)
	runs := 0
	b.Run("append2", func(b *testing.B) {
		for b.Loop() {
			b.StopTimer()
			next := *st
			next.Context.Messages = append(st.Context.Messages[:2000:2000], grown.Context.Messages[2000:]...)
			for i := 2000; i < len(next.Context.Messages); i++ { // fresh content each run
				m := &next.Context.Messages[i]
				runs++
				m.Parts = []agentstate.Part{agentstate.TextPart(grown.Context.Messages[i].Parts[0].Text + " run " + strconv.Itoa(runs))}
			}
			b.StartTimer()
			runBudget(b, s, &next)
		}
	})
}

// keyedLog is a fresh gpt-4o counter and a 2,000-message log with its
// content's size, for the content key benchmarks.
func keyedLog(b *testing.B) (*counter, []agentstate.Message, int) {
	c := freshGPT4oCounter(b)
	msgs := agentState(b, 2000).Context.Messages
	size := 0
	for i := range msgs {
		size += contentBytes(&msgs[i])
	}
	return c, msgs, size
}

// BenchmarkContentKey hashes every message of a 2,000-message log as the
// warm path does for its cache lookups (contentKey, each string's xxh3 fed
// to maphash) beside the same keys with each string streamed through
// maphash alone; both read the same bytes.
func BenchmarkContentKey(b *testing.B) {
	c, msgs, size := keyedLog(b)
	var sink cacheKey
	b.Run("xxh3", func(b *testing.B) {
		b.SetBytes(int64(size))
		for b.Loop() {
			for i := range msgs {
				sink ^= c.contentKey(&msgs[i])
			}
		}
	})
	b.Run("maphash", func(b *testing.B) {
		b.SetBytes(int64(size))
		for b.Loop() {
			for i := range msgs {
				sink ^= maphashContentKey(c, &msgs[i])
			}
		}
	})
	_ = sink
}

// maphashContentKey is contentKey with each string hashed by maphash.
func maphashContentKey(c *counter, m *agentstate.Message) cacheKey {
	var h maphash.Hash
	h.SetSeed(c.seed)
	h.WriteByte(c.enc.id)
	str := func(s string) {
		var n [16]byte
		binary.LittleEndian.PutUint64(n[:8], uint64(len(s)))
		binary.LittleEndian.PutUint64(n[8:], maphash.String(c.seed, s))
		h.Write(n[:])
	}
	for i := range m.Parts {
		p := &m.Parts[i]
		h.WriteByte(byte(p.Kind))
		switch p.Kind {
		case agentstate.PartText:
			str(p.Text)
		case agentstate.PartToolCall:
			str(p.ToolCall.Name)
			str(p.ToolCall.ArgumentsJSON)
		case agentstate.PartToolResult:
			str(p.ToolResult.Content)
		case agentstate.PartReasoning:
			str(p.Reasoning.Text)
		}
	}
	return cacheKey(h.Sum64())
}

// BenchmarkCountMemo counts a warm 2,000-message log as the estimate stage
// does (CountCached), its messages found in the count cache by their
// content's key and, side by side, the same log with count memos (a log the
// server keeps decoded for calls by reference): what the memo saves a call
// by reference on every turn.
func BenchmarkCountMemo(b *testing.B) {
	c, msgs, size := keyedLog(b)
	memoized := make([]agentstate.Message, len(msgs))
	for i, m := range msgs {
		m.Parts = append([]agentstate.Part(nil), m.Parts...)
		memoized[i] = m
	}
	agentstate.MemoizeCounts(memoized)
	for _, log := range [][]agentstate.Message{msgs, memoized} { // warm the cache and the memos
		CountEntries(c, agentstate.EntriesFromLog(log), 1)
	}
	run := func(name string, log []agentstate.Message) {
		entries := agentstate.EntriesFromLog(log)
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(size))
			for b.Loop() {
				for i := range entries {
					entries[i].Counted = false
				}
				c.CountCached(entries)
			}
			for i := range entries {
				if !entries[i].Counted {
					b.Fatalf("entry %d not counted warm", i)
				}
			}
		})
	}
	run("cache", msgs)
	run("memo", memoized)
}
