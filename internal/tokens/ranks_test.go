package tokens

import (
	"strings"
	"testing"

	tiktoken_loader "github.com/pkoukk/tiktoken-go-loader"
	"github.com/pkoukk/tiktoken-go-loader/assets"
)

// The table read straight from each embedded file holds exactly the ranks
// tiktoken-go-loader's own reading of it gives.
func TestParsedRankTableIsTheLoadersRanks(t *testing.T) {
	for _, file := range []string{"cl100k_base.tiktoken", "o200k_base.tiktoken", "p50k_base.tiktoken", "r50k_base.tiktoken"} {
		raw, err := assets.Assets.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		table, err := parseRankTable(raw)
		if err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		want, err := tiktoken_loader.NewOfflineLoader().LoadTiktokenBpe(file)
		if err != nil {
			t.Fatal(err)
		}
		held := 0
		for _, s := range table.slots {
			if s.n != 0 {
				held++
			}
		}
		if held != len(want) {
			t.Errorf("%s: %d tokens in the table, the loader reads %d", file, held, len(want))
		}
		for tok, rank := range want {
			if got, ok := table.get(tok); !ok || int(got) != rank {
				t.Fatalf("%s: token %q has rank %d (found %v), the loader says %d", file, tok, got, ok, rank)
			}
		}
		if _, ok := table.get("not a token of any encoding \x00\x01"); ok {
			t.Errorf("%s: an unknown token was found", file)
		}
	}
}

func TestParseRankTableRefusesBadFiles(t *testing.T) {
	tests := []struct{ name, file, want string }{
		{"no rank", "YQ==\n", "line 1: want <base64 token> <rank>"},
		{"bad rank", "YQ== x\n", "line 1: rank \"x\""},
		{"negative rank", "YQ== -1\n", "line 1: rank \"-1\""},
		{"bad base64", "!!! 1\n", "line 1: token \"!!!\""},
		{"empty token", " 1\n", "line 1: token \"\""},
		{"twice", "YQ== 1\nYg== 2\nYQ== 3\n", "line 3: token \"YQ==\" appears twice"},
	}
	for _, tt := range tests {
		if _, err := parseRankTable([]byte(tt.file)); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: %v, want an error containing %q", tt.name, err, tt.want)
		}
	}
	table, err := parseRankTable([]byte("YQ== 7\n\nYg== 8"))
	if err != nil {
		t.Fatal(err)
	}
	if r, ok := table.get("b"); !ok || r != 8 {
		t.Errorf("the last line without a newline: %d %v", r, ok)
	}
}
