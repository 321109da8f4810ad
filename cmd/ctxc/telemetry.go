package main

import (
	"context"
	"fmt"
	"strings"

	"go.opentelemetry.io/contrib/exporters/autoexport"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"
)

// tracesConfigured reports whether the standard OTEL_* variables ask for trace
// export. With none set, ctxc makes no spans and opens no connections (the
// OpenTelemetry default of exporting OTLP to localhost is not what a sidecar
// started without configuration should do).
func tracesConfigured(lookupEnv func(string) (string, bool)) bool {
	if v, _ := lookupEnv("OTEL_SDK_DISABLED"); strings.EqualFold(v, "true") {
		return false
	}
	if v, ok := lookupEnv("OTEL_TRACES_EXPORTER"); ok && v != "" {
		return v != "none"
	}
	for _, k := range []string{"OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"} {
		if v, ok := lookupEnv(k); ok && v != "" {
			return true
		}
	}
	return false
}

// newTracerProvider returns the provider the pipeline and the gRPC stats
// handler record spans with, and a shutdown that flushes it.
func newTracerProvider(ctx context.Context, lookupEnv func(string) (string, bool), version string) (trace.TracerProvider, func(context.Context) error, error) {
	if !tracesConfigured(lookupEnv) {
		return noop.NewTracerProvider(), func(context.Context) error { return nil }, nil
	}
	exp, err := autoexport.NewSpanExporter(ctx)
	if err != nil {
		return nil, nil, fmt.Errorf("OpenTelemetry trace exporter: %w", err)
	}
	// Later options win: OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES override the defaults.
	res, err := resource.New(ctx,
		resource.WithAttributes(attribute.String("service.name", "ctxc"), attribute.String("service.version", version)),
		resource.WithTelemetrySDK(),
		resource.WithFromEnv(),
	)
	if err != nil {
		return nil, nil, fmt.Errorf("OpenTelemetry resource: %w", err)
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res))
	return tp, tp.Shutdown, nil
}
