package main

import (
	"context"
	"fmt"
	"strings"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/exporters/stdout/stdouttrace"
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
	exp, err := newSpanExporter(ctx, lookupEnv)
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

// newSpanExporter is the exporter OTEL_TRACES_EXPORTER names, as the
// OpenTelemetry specification (and contrib's autoexport) reads it: otlp (the
// default) over OTEL_EXPORTER_OTLP_TRACES_PROTOCOL or OTEL_EXPORTER_OTLP_PROTOCOL
// (http/protobuf, the default, or grpc), or console. The OTLP exporters read
// the other OTEL_EXPORTER_OTLP_* variables (endpoint, headers, timeout, TLS)
// themselves. Written here because autoexport links in the log and metric
// exporters of every protocol too, which ctxc never uses.
func newSpanExporter(ctx context.Context, lookupEnv func(string) (string, bool)) (sdktrace.SpanExporter, error) {
	name, _ := lookupEnv("OTEL_TRACES_EXPORTER")
	switch name {
	case "", "otlp":
		protocol, _ := lookupEnv("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL")
		if protocol == "" {
			protocol, _ = lookupEnv("OTEL_EXPORTER_OTLP_PROTOCOL")
		}
		switch protocol {
		case "", "http/protobuf":
			return otlptracehttp.New(ctx)
		case "grpc":
			return otlptracegrpc.New(ctx)
		}
		return nil, fmt.Errorf("OTEL_EXPORTER_OTLP_PROTOCOL: %q unknown (known: http/protobuf, grpc)", protocol)
	case "console":
		return stdouttrace.New()
	}
	return nil, fmt.Errorf("OTEL_TRACES_EXPORTER: %q unknown (known: otlp, console, none)", name)
}
