package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/contextcompiler/ctxc/eval"
	ctxcv1 "github.com/contextcompiler/ctxc/gen/ctxc/v1"
)

type capture struct {
	eval.Service
	last *ctxcv1.CompileResponse
}

func (c *capture) Compile(ctx context.Context, r *ctxcv1.CompileRequest) (*ctxcv1.CompileResponse, error) {
	resp, err := c.Service.Compile(ctx, r)
	if err == nil {
		c.last = resp
	}
	return resp, err
}

func TestDbgSummary(t *testing.T) {
	file := os.Getenv("SESSION")
	if file == "" {
		t.Skip()
	}
	fs := flag.NewFlagSet("x", flag.ContinueOnError)
	cf := registerConfigFlags(fs, false)
	io := stdio{out: os.Stdout, err: os.Stderr}
	svc, _, closeSvc, ok := evalService(fs, cf, func(string) (string, bool) { return "", false }, "", io)
	if !ok {
		t.Fatal("no service")
	}
	defer closeSvc()
	f, _ := os.Open(file)
	s, _, err := eval.LoadAny(f, file, eval.FormatAuto)
	if err != nil {
		t.Fatal(err)
	}
	win, _ := strconv.Atoi(os.Getenv("WINDOW"))
	c := &capture{Service: svc}
	if _, err := eval.Run(context.Background(), c, []*eval.Session{s}, eval.Options{Profiles: []string{os.Getenv("PROFILE")}, Windows: []uint32{uint32(win)}}); err != nil {
		t.Fatal(err)
	}
	if q := os.Getenv("GREP"); q != "" {
		for _, m := range c.last.GetMessages() {
			for _, p := range m.GetParts() {
				txt := p.GetText() + p.GetToolResult().GetContent()
				if strings.Contains(txt, q) {
					fmt.Printf("%s %s %s: %.600s\n", m.GetId(), m.GetRole(), m.GetKind(), txt)
				}
			}
		}
		return
	}
	for _, m := range c.last.GetMessages() {
		if m.GetKind() == ctxcv1.MessageKind_MESSAGE_KIND_SUMMARY {
			for _, p := range m.GetParts() {
				fmt.Println(p.GetText())
			}
			fmt.Println(strings.Repeat("=", 60))
		}
	}
	fmt.Printf("budget: %+v\n", c.last.GetBudget())
}
