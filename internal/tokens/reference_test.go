package tokens

import (
	"encoding/json"
	"os"
	"strings"
	"sync"
	"testing"
)

// testService is shared: building the encoders takes a moment.
// testService has every table built: some tests call an encoder's merges
// directly, which do not build it.
var testService = sync.OnceValues(func() (*Service, error) {
	s, err := NewService(DefaultServiceConfig())
	if err != nil {
		return nil, err
	}
	return s, s.Preload()
})

func service(t testing.TB) *Service {
	t.Helper()
	s, err := testService()
	if err != nil {
		t.Fatal(err)
	}
	return s
}

type corpusCase struct {
	Name   string `json:"name"`
	Text   string `json:"text"`
	Repeat int    `json:"repeat"`
	Suffix string `json:"suffix"`
}

func (c corpusCase) expand() string {
	n := c.Repeat
	if n == 0 {
		n = 1
	}
	return strings.Repeat(c.Text, n) + c.Suffix
}

func readJSON(t testing.TB, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

// TestReferenceCounts compares raw counts with those gpt-tokenizer (npm)
// produced for testdata/reference_corpus.json; see testdata/refgen/gen.mjs.
func TestReferenceCounts(t *testing.T) {
	var corpus []corpusCase
	readJSON(t, "testdata/reference_corpus.json", &corpus)
	var ref struct {
		Generator string                    `json:"generator"`
		Counts    map[string]map[string]int `json:"counts"`
	}
	readJSON(t, "testdata/reference_counts.json", &ref)
	s := service(t)
	for _, enc := range KnownEncodings() {
		want, ok := ref.Counts[enc]
		if !ok {
			t.Errorf("%s: no reference counts", enc)
			continue
		}
		for _, c := range corpus {
			w, ok := want[c.Name]
			if !ok {
				t.Errorf("%s/%s: no reference count; regenerate with gen.mjs", enc, c.Name)
				continue
			}
			if got := s.encoders[enc].count(c.expand()); got != w {
				t.Errorf("%s/%s: count = %d, %s says %d", enc, c.Name, got, ref.Generator, w)
			}
		}
	}
}
