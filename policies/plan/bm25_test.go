package plan

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/contextcompiler/ctxc/internal/statetest"
)

func contains(s, sub string) bool { return strings.Contains(s, sub) }

func TestBM25Scores(t *testing.T) {
	docs := []string{
		"the build passed on all platforms",
		"disk quota exceeded on /var/data while writing the nightly export",
		"quota reports are generated weekly",
		"",
	}
	scores := BM25Scores(docs, "Why did the nightly export fail? disk quota?")
	if !(scores[1] > scores[2] && scores[2] > scores[3] && scores[3] == 0) {
		t.Errorf("scores %v: want the disk quota line first and the empty doc at 0", scores)
	}
	if got := BM25Scores(docs, ""); !cmp.Equal(got, []float64{0, 0, 0, 0}) {
		t.Errorf("empty query scores %v", got)
	}
}

func TestChunkText(t *testing.T) {
	s := strings.Repeat("line of text\n", 20) + strings.Repeat("日本語", 50)
	chunks := chunkText(s, 100)
	if strings.Join(chunks, "") != s {
		t.Fatal("chunks do not add up to the text")
	}
	for _, c := range chunks {
		if len(c) > 100 {
			t.Errorf("chunk of %d bytes", len(c))
		}
	}
}

func TestExtract(t *testing.T) {
	var b strings.Builder
	for i := 0; i < 200; i++ {
		b.WriteString("INFO job step completed normally without incident\n")
		if i == 150 {
			b.WriteString("ERROR disk quota exceeded on /var/data\n")
		}
	}
	content := b.String()
	counter := statetest.FakeCounter{}
	got := Extract(content, "disk quota", 300, 200, counter)
	if !strings.Contains(got, "ERROR disk quota exceeded") || counter.CountText(got) > 200 {
		t.Errorf("extract of %d tokens misses the relevant line:\n%s", counter.CountText(got), got)
	}
	if !strings.Contains(got, "characters omitted") {
		t.Errorf("extract does not mark its gaps:\n%s", got)
	}
	if Extract(content, "disk", 300, 10, counter) != "" {
		t.Error("a budget smaller than one chunk must extract nothing")
	}
}
