package main

import (
	"context"
	"fmt"
	"io"
	"os"

	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protojson"

	ctxcv1 "github.com/contextcompiler/ctxc/gen/ctxc/v1"
)

func runCompile(ctx context.Context, args []string, io stdio, lookupEnv func(string) (string, bool)) int {
	fs := newFlagSet(io, "compile", "[--profile NAME] [--config FILE] FILE",
		"Run a profile on a state offline, exactly as the Compile RPC would, and print the\n"+
			"CompileResponse as protojson. FILE (or - for standard input) holds the protojson of a\n"+
			"ctxc.v1.CompileRequest (like examples/*.json) or of a bare ctxc.v1.AgentState.\n"+
			"Errors print as a google.rpc.Status with its details; the exit code is then 1.")
	profile := fs.String("profile", "", "profile to run; overrides the request's profile (default: the request's, else the default profile)")
	cf := registerConfigFlags(fs, false)
	if code, done := parseFlagsAndArgs(fs, io, args); done {
		return code
	}
	if fs.NArg() != 1 {
		fmt.Fprintln(io.err, "ctxc compile: give exactly one FILE (or - for standard input)")
		fs.Usage()
		return exitUsage
	}
	_, eng, err := setUp(fs, cf, lookupEnv, io.err)
	if err != nil {
		printProblems(io.err, "invalid configuration", err)
		return exitError
	}
	defer eng.Close()
	req, err := readCompileRequest(fs.Arg(0), io.in)
	if err != nil {
		fmt.Fprintf(io.err, "ctxc compile: %v\n", err)
		return exitError
	}
	if *profile != "" {
		req.Profile = *profile
	}
	svc, err := eng.Service()
	if err != nil {
		fmt.Fprintf(io.err, "ctxc compile: %v\n", err)
		return exitError
	}
	resp, err := svc.Compile(ctx, req)
	if err != nil {
		_ = printJSON(io.err, status.Convert(err).Proto())
		return exitError
	}
	if err := printJSON(io.out, resp); err != nil {
		fmt.Fprintf(io.err, "ctxc compile: %v\n", err)
		return exitError
	}
	return exitOK
}

// readCompileRequest reads a CompileRequest, or an AgentState wrapped into one.
func readCompileRequest(path string, stdin io.Reader) (*ctxcv1.CompileRequest, error) {
	var data []byte
	var err error
	if path == "-" {
		data, err = io.ReadAll(stdin)
	} else {
		data, err = os.ReadFile(path)
	}
	if err != nil {
		return nil, err
	}
	req := &ctxcv1.CompileRequest{}
	reqErr := protojson.Unmarshal(data, req)
	if reqErr == nil {
		return req, nil
	}
	state := &ctxcv1.AgentState{}
	stateErr := protojson.Unmarshal(data, state)
	if stateErr == nil {
		return &ctxcv1.CompileRequest{State: state}, nil
	}
	const what = "is neither a ctxc.v1.CompileRequest nor a ctxc.v1.AgentState in protojson"
	// Text that is not JSON, or a field neither message has, fails both the
	// same way: say it once.
	if reqErr.Error() == stateErr.Error() {
		return nil, fmt.Errorf("%s %s: %w", path, what, reqErr)
	}
	return nil, fmt.Errorf("%s %s: as a CompileRequest: %w; as an AgentState: %w", path, what, reqErr, stateErr)
}
