package eval

import (
	"bytes"
	"context"
	"math"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	ctxcv1 "github.com/contextcompiler/ctxc/gen/ctxc/v1"
)

// A sweep of the tiny session through a service whose every window breaks a
// check (see TestRunFiguresByHand for how the fake counts; the window
// reserves a quarter for output):
//
//	100: drops the failed tool result (facts kept (1 + 2/3 + 3/4) / 3)
//	 80: keeps everything: facts kept rose by 0.19
//	 60: refuses turn 2, which must keep 15 tokens (system prompt 4, tools
//	     3, first task 6, newest turn 2) of 45 usable: refused above the
//	     floor, and above 40, which refuses nothing
//	 40: keeps everything
//	 20: one summary instead of the log: facts kept fell from 1 to 1/3, a
//	     cliff (every compile must keep 13-15 tokens of the 15 usable)
//	 10: refuses every compile, each of which must keep more than the 8
//	     usable: below the floor, which is 20
func TestSweepChecks(t *testing.T) {
	svc := &fakeService{toolTokens: 3,
		atWindow: func(st *ctxcv1.AgentState, window uint32) []*ctxcv1.Message {
			switch window {
			case 100:
				return dropping("m3")(st)
			case 20:
				return summarizing(st)
			}
			return identity(st)
		},
		failAt: func(turn int, window uint32) bool { return window == 10 || window == 60 && turn == 2 },
	}
	res, err := Sweep(context.Background(), svc, []*Session{loadTiny(t)}, SweepOptions{Profiles: []string{"fake"}, Windows: []uint32{20, 100, 60, 10, 80, 40, 60}})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]uint32{100, 80, 60, 40, 20, 10}, res.Windows); diff != "" {
		t.Errorf("windows, largest first and each once (-want +got):\n%s", diff)
	}
	type violation struct {
		Check        string
		Window, From uint32
		Lost         int
		Kinds        map[FactKind]int
	}
	var got []violation
	for _, v := range res.Violations {
		got = append(got, violation{v.Check, v.Window, v.From, v.LostFacts, v.LostKinds})
	}
	want := []violation{
		{Check: SweepRose, Window: 80, From: 100},
		{Check: SweepRefusedAboveFloor, Window: 60},
		{Check: SweepCliff, Window: 20, From: 40, Lost: 4, Kinds: map[FactKind]int{FactFirstTask: 1, FactConstraint: 1, FactErrorCode: 1, FactDecision: 1}},
		{Check: SweepRefusedAboveUnrefused, Window: 60, From: 40},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("violations (-want +got):\n%s\n%v", diff, res.Violations)
	}
	if d := res.Violations[1].Detail; !strings.Contains(d, "line 6 (turn 2), must keep 15 tokens of 45 usable: ResourceExhausted: context irreducible") {
		t.Errorf("the refusal above the floor does not say what it had to keep and what the service said: %s", d)
	}
	if diff := cmp.Diff([]SweepFloor{{Session: "tiny", Profile: "fake", Floor: 20, MustKeepTokens: 15, FirstRefused: 60}}, res.Floors); diff != "" {
		t.Errorf("floors (-want +got):\n%s", diff)
	}
	type point struct {
		Window                   uint32
		Refused, AboveFloor      int
		Kept, Last, Step, Usable *float64
	}
	var points []point
	for _, p := range res.Points {
		points = append(points, point{p.Window, p.Refused, p.RefusedAboveFloor, p.FactsKept, p.FactsKeptLast, p.Step, fptr(float64(p.UsableTokens))})
	}
	mean100 := (1 + 2.0/3 + 0.75) / 3
	wantPoints := []point{
		{100, 0, 0, fptr(mean100), fptr(0.75), nil, fptr(75)},
		{80, 0, 0, fptr(1), fptr(1), fptr(mean100 - 1), fptr(60)},
		{60, 1, 1, fptr(1), fptr(1), nil, fptr(45)},
		{40, 0, 0, fptr(1), fptr(1), nil, fptr(30)},
		{20, 0, 0, fptr(1.0 / 3), fptr(0), fptr(2.0 / 3), fptr(15)},
		{10, 3, 0, nil, nil, nil, fptr(8)},
	}
	if diff := cmp.Diff(wantPoints, points, cmpopts.EquateApprox(0, 1e-12)); diff != "" {
		t.Errorf("points (-want +got):\n%s", diff)
	}
	var below []int
	for _, r := range res.Rows {
		below = append(below, r.BelowFloor)
	}
	if diff := cmp.Diff([]int{0, 0, 0, 0, 0, 1}, below); diff != "" {
		t.Errorf("sessions below the floor per window (-want +got):\n%s", diff)
	}
	if r := res.Rows[4]; r.WorstStep == nil || math.Abs(*r.WorstStep-2.0/3) > 1e-12 || r.WorstStepSession != "tiny" {
		t.Errorf("worst step at 20: %v in %q", r.WorstStep, r.WorstStepSession)
	}

	var md bytes.Buffer
	if err := WriteSweepMarkdown(&md, res, true); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"| fake | 60 | 3 | 1 (1 above the floor) | 1.00 | 1.00 | — | — | 0 of 1 |",
		"| fake | 20 | 3 | 0 | 0.33 | 0.00 | 0.67 (tiny) | 1.00 (tiny) | 0 of 1 |",
		"| fake | 10 | 3 | 3 | — | — | — | — | 1 of 1 |",
		"- tiny, fake: 20 (must keep up to 15 tokens); refused from 60 down",
		"Violations (4):",
		"- tiny, fake, cliff: facts kept fell by 0.667 from 40 to 20 (1.000 -> 0.333), more than 0.15; 4 facts left out that the same compiles kept at 40 (constraint 1, decision 1, error_code 1, first_task 1); among them: \"fix the bug\", \"never use cgo\", \"E1234\", \"use a mutex\"",
		"| tiny | fake | 80 | 3 | 0 | 1.00 | 1.00 | 1.00 | -0.19 | -0.25 | 15 | 60 |",
	} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("the report lacks %q:\n%s", want, md.String())
		}
	}
}

// A service that degrades by steps passes every check.
func TestSweepWithoutViolations(t *testing.T) {
	res, err := Sweep(context.Background(), &fakeService{compile: identity, toolTokens: 3}, []*Session{loadTiny(t)}, SweepOptions{Profiles: []string{"fake"}, Windows: []uint32{100, 50}})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Violations) != 0 || res.Floors[0].Floor != 50 || res.Floors[0].FirstRefused != 0 {
		t.Errorf("violations %v, floors %+v", res.Violations, res.Floors)
	}
	var md bytes.Buffer
	if err := WriteSweepMarkdown(&md, res, false); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(md.String(), "No violation.") || !strings.Contains(md.String(), "- Every session and profile fits every window down to 50, and none was refused.") {
		t.Errorf("report:\n%s", md.String())
	}
	if _, err := Sweep(context.Background(), &fakeService{compile: identity}, []*Session{loadTiny(t)}, SweepOptions{Profiles: []string{"fake"}}); err == nil {
		t.Error("a sweep without windows ran")
	}
}
