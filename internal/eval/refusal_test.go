package eval

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
)

// A compile the service refuses counts: valid is the share of all compiles
// that succeeded without a violation, so one refusal of three brings it
// below 1; the failed column counts it by code; and its message, which says
// why, is in the JSON (the compile's record and the row's failures) and in
// both Markdown reports.
func TestRefusedCompileCounts(t *testing.T) {
	const why = "context irreducible: needs 90 tokens, 75 available: what must be kept exceeds the usable window (tokens: system prompt 4, pinned | messages 86)"
	svc := &fakeService{compile: identity, toolTokens: 3, failTurn: map[int]bool{2: true}, failMessage: why}
	res, err := Run(context.Background(), svc, []*Session{loadTiny(t)}, Options{Profiles: []string{"fake"}, Windows: []uint32{100}, Now: tickingClock()})
	if err != nil {
		t.Fatal(err)
	}
	row := res.Rows[0]
	if row.Compiles != 3 || row.Failed != 1 || row.FailedCodes["ResourceExhausted"] != 1 {
		t.Errorf("%d compiles, failed %d %v; want 3 compiles, 1 failed (ResourceExhausted)", row.Compiles, row.Failed, row.FailedCodes)
	}
	if row.Valid == nil || *row.Valid >= 1 || *row.Valid != 2.0/3 {
		t.Errorf("valid %v, want 2/3: a refused compile is not a valid one", row.Valid)
	}
	// Facts kept stay over the compiles that succeeded.
	if row.FactsKept == nil || *row.FactsKept != 1 {
		t.Errorf("facts kept %v, want 1 over the two compiles that succeeded", row.FactsKept)
	}

	var out bytes.Buffer
	if err := WriteJSON(&out, res); err != nil {
		t.Fatal(err)
	}
	var decoded struct {
		Rows []struct {
			Valid    float64 `json:"valid"`
			Failed   int     `json:"failed"`
			Failures []struct {
				Session, Code, Error string
				Line                 int
			} `json:"failures"`
		} `json:"rows"`
		Compiles []struct {
			Line  int    `json:"line"`
			Code  string `json:"code"`
			Error string `json:"error"`
		} `json:"compiles"`
	}
	if err := json.Unmarshal(out.Bytes(), &decoded); err != nil {
		t.Fatal(err)
	}
	r := decoded.Rows[0]
	if r.Failed != 1 || r.Valid >= 1 || len(r.Failures) != 1 || r.Failures[0].Code != "ResourceExhausted" || r.Failures[0].Error != why || r.Failures[0].Line != 6 || r.Failures[0].Session != "tiny" {
		t.Errorf("the JSON row does not carry the refusal: %+v", r)
	}
	var refused int
	for _, c := range decoded.Compiles {
		if c.Code == "" {
			continue
		}
		refused++
		if c.Line != 6 || c.Code != "ResourceExhausted" || c.Error != why {
			t.Errorf("the JSON compile at line %d: code %q, error %q; want line 6 with the service's code and message", c.Line, c.Code, c.Error)
		}
	}
	if refused != 1 {
		t.Errorf("%d refused compiles in the JSON, want 1:\n%s", refused, out.String())
	}

	for _, verbose := range []bool{false, true} {
		var md bytes.Buffer
		if err := WriteMarkdown(&md, res, MarkdownOptions{Verbose: verbose}); err != nil {
			t.Fatal(err)
		}
		text := md.String()
		if !strings.Contains(text, "| fake | 100 | 3 | 0.67 |") || !strings.Contains(text, "| 1 (ResourceExhausted 1) |") {
			t.Errorf("verbose %v: the table does not show valid 0.67 and the refusal:\n%s", verbose, text)
		}
		if !strings.Contains(text, "- tiny line 6 (turn 2): ResourceExhausted: "+why) {
			t.Errorf("verbose %v: the refusal's message is not listed:\n%s", verbose, text)
		}
		if verbose && !strings.Contains(text, "| 6 | 2 | | failed: ResourceExhausted "+strings.ReplaceAll(why, "|", `\|`)+" |") {
			t.Errorf("the verbose row of the refused compile lacks its whole message:\n%s", text)
		}
	}
}
