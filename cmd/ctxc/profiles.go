package main

import (
	"context"
	"fmt"
	"strings"

	ctxcv1 "github.com/contextcompiler/ctxc/gen/ctxc/v1"
)

func runProfiles(ctx context.Context, args []string, io stdio, lookupEnv func(string) (string, bool)) int {
	fs := newFlagSet(io, "profiles", "[--config FILE] [--json]",
		"List the profiles a server with this configuration would offer: the built-in ones and\n"+
			"those of --config, with each stage's policy and effective settings.")
	asJSON := fs.Bool("json", false, "print the ListProfilesResponse as protojson")
	cf := registerConfigFlags(fs, false)
	if code, done := parseFlags(fs, io, args); done {
		return code
	}
	_, eng, err := setUp(fs, cf, lookupEnv, io.err)
	if err != nil {
		printProblems(io.err, "invalid configuration", err)
		return exitError
	}
	defer eng.Close()
	svc, err := eng.Service()
	if err != nil {
		fmt.Fprintf(io.err, "ctxc profiles: %v\n", err)
		return exitError
	}
	resp, err := svc.ListProfiles(ctx, &ctxcv1.ListProfilesRequest{})
	if err != nil {
		fmt.Fprintf(io.err, "ctxc profiles: %v\n", err)
		return exitError
	}
	if *asJSON {
		if err := printJSON(io.out, resp); err != nil {
			fmt.Fprintf(io.err, "ctxc profiles: %v\n", err)
			return exitError
		}
		return exitOK
	}
	for i, p := range resp.GetProfiles() {
		if i > 0 {
			fmt.Fprintln(io.out)
		}
		def := ""
		if p.GetDefault() {
			def = " (default)"
		}
		fmt.Fprintf(io.out, "%s%s [%s]\n", p.GetName(), def, p.GetSource())
		if d := strings.TrimSpace(p.GetDescription()); d != "" {
			fmt.Fprintf(io.out, "  %s\n", d)
		}
		for _, s := range p.GetStages() {
			fmt.Fprintf(io.out, "  %-10s %-20s %s\n", s.GetStage(), s.GetPolicy(), s.GetSettingsJson())
		}
	}
	return exitOK
}
