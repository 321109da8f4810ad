package server_test

import (
	"context"
	"log/slog"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/contextcompiler/ctxc/client"
	ctxcv1 "github.com/contextcompiler/ctxc/gen/ctxc/v1"
	"github.com/contextcompiler/ctxc/server"
)

// TestClampedReservationIsWarned: a reserved_output_token_count past
// max_reserved_output_ratio of the window comes back in the Compile
// report's warnings, with the budget's reservation as clamped; one within
// it warns nothing.
func TestClampedReservationIsWarned(t *testing.T) {
	cfg := server.NewConfig()
	cfg.Logger = slog.New(slog.DiscardHandler)
	svc := engineService(t, cfg)
	tests := []struct {
		name         string
		reserve      uint32
		wantReserved uint32
		wantWarnings []string
	}{
		{"2^32-1", 1<<32 - 1, 32_000, []string{"reserved_output_token_count 4294967295 is more than max_reserved_output_ratio 0.25 of the 128000-token window: 32000 tokens reserved for output"}},
		{"within the ratio", 4_000, 4_000, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, err := svc.Compile(context.Background(), &ctxcv1.CompileRequest{State: client.State("gpt-4o", "", client.User("u1", "Hello!")),
				Options: &ctxcv1.CompileOptions{ReservedOutputTokenCount: &tt.reserve}})
			if err != nil {
				t.Fatal(err)
			}
			if got := resp.GetBudget().GetReservedOutputTokenCount(); got != tt.wantReserved {
				t.Errorf("reserved %d, want %d", got, tt.wantReserved)
			}
			if diff := cmp.Diff(tt.wantWarnings, resp.GetReport().GetWarnings()); diff != "" {
				t.Errorf("warnings (-want +got):\n%s", diff)
			}
		})
	}
}
