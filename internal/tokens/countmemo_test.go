package tokens

import (
	"sync"
	"testing"

	"github.com/contextcompiler/ctxc/policies/agentstate"
)

// TestCountMemo: a message whose memo holds its count is counted from the
// memo, under each encoding apart, with the count the content has; a copy
// of it given other parts, shorter or rewritten, is counted from its own
// parts; and every encoding has a slot in a memo.
func TestCountMemo(t *testing.T) {
	s := service(t)
	for _, name := range KnownEncodings() {
		if id := s.encoders[name].id; int(id) >= agentstate.CountMemoEncodings {
			t.Errorf("encoding %s has id %d: a count memo keeps ids below %d only", name, id, agentstate.CountMemoEncodings)
		}
	}
	text := "the build failed: internal/server/refs.go:155:2: undefined: rememberDecoded"
	log := []agentstate.Message{{ID: "m1", Role: agentstate.RoleUser, Parts: []agentstate.Part{agentstate.TextPart(text), agentstate.TextPart(" and the second part")}}}
	agentstate.MemoizeCounts(log)
	m := &log[0]
	for _, name := range KnownEncodings() {
		c, err := s.CounterForEncoding(name)
		if err != nil {
			t.Fatal(err)
		}
		plain := agentstate.Message{ID: "m1", Role: agentstate.RoleUser, Parts: append([]agentstate.Part(nil), m.Parts...)}
		want, _ := c.CountMessage(&plain)
		if got, _ := c.CountMessage(m); got != want {
			t.Errorf("%s: first count %d, want %d", name, got, want)
		}
		id := c.(*counter).enc.id
		raw, ok := m.Counts.Raw(m.Parts, id)
		if content, _ := c.(*counter).tokenizeContent(&plain); !ok || raw != content {
			t.Fatalf("%s: memo holds %d, %v after a count, want the content's raw count", name, raw, ok)
		}
		// What the memo holds is what is counted: a planted count shows.
		m.Counts.Remember(m.Parts, id, raw+1000)
		entries := []agentstate.Entry{{Message: *m}}
		c.(*counter).CountCached(entries)
		if got, _ := c.CountMessage(m); got != want+1000 || !entries[0].Counted || entries[0].Tokens != want+1000 {
			t.Errorf("%s: with a planted memo CountMessage = %d, CountCached = %d (%v), want %d from the memo", name, got, entries[0].Tokens, entries[0].Counted, want+1000)
		}
		// Copies given other parts do not read it.
		shorter := *m
		shorter.Parts = m.Parts[:1]
		plainShorter := agentstate.Message{Role: agentstate.RoleUser, Parts: []agentstate.Part{agentstate.TextPart(text)}}
		if got, wantShorter := count(c, &shorter), count(c, &plainShorter); got != wantShorter {
			t.Errorf("%s: a copy with a prefix of the parts counts %d, want %d", name, got, wantShorter)
		}
		rewritten := *m
		rewritten.Parts = []agentstate.Part{agentstate.TextPart("short"), agentstate.TextPart("parts")}
		plainRewritten := agentstate.Message{Role: agentstate.RoleUser, Parts: rewritten.Parts}
		if got, wantRewritten := count(c, &rewritten), count(c, &plainRewritten); got != wantRewritten {
			t.Errorf("%s: a copy with other parts counts %d, want %d", name, got, wantRewritten)
		}
		m.Counts.Remember(m.Parts, id, raw)
	}
	// A memo keeps nothing for parts it was not made for.
	other := []agentstate.Part{agentstate.TextPart("x")}
	m.Counts.Remember(other, 1, 7)
	if _, ok := m.Counts.Raw(other, 1); ok {
		t.Error("a memo answered for parts it was not made for")
	}
	var none *agentstate.CountMemo
	none.Remember(m.Parts, 1, 3)
	if _, ok := none.Raw(m.Parts, 1); ok {
		t.Error("a nil memo answered")
	}
}

func count(c agentstate.TokenCounter, m *agentstate.Message) int {
	n, _ := c.CountMessage(m)
	return n
}

// TestCountMemoConcurrent: calls by reference to one state count its
// shared messages at once (run with -race).
func TestCountMemoConcurrent(t *testing.T) {
	s := service(t)
	c, err := s.CounterForEncoding(EncodingO200K)
	if err != nil {
		t.Fatal(err)
	}
	log := make([]agentstate.Message, 64)
	for i := range log {
		log[i] = agentstate.Message{ID: "m", Role: agentstate.RoleAssistant, Parts: []agentstate.Part{agentstate.TextPart("panic: runtime error: index out of range [3] with length 3")}}
	}
	agentstate.MemoizeCounts(log)
	want := count(c, &agentstate.Message{Role: agentstate.RoleAssistant, Parts: []agentstate.Part{agentstate.TextPart("panic: runtime error: index out of range [3] with length 3")}})
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			entries := agentstate.EntriesFromLog(log)
			CountEntries(c, entries, 1)
			for i := range entries {
				if entries[i].Tokens != want {
					t.Errorf("entry %d: %d tokens, want %d", i, entries[i].Tokens, want)
					return
				}
			}
		})
	}
	wg.Wait()
}
