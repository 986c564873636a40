package main

import (
	"context"
	"fmt"

	"github.com/spf13/pflag"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
	"go.opentelemetry.io/otel/trace"
)

// traceFlags configure OpenTelemetry tracing of the long-running commands:
// spans are exported over OTLP/gRPC to a collector.
type traceFlags struct {
	endpoint    string
	insecure    bool
	sampleRatio float64
}

func (f *traceFlags) register(fs *pflag.FlagSet) {
	fs.StringVar(&f.endpoint, "otlp-endpoint", "", "send OpenTelemetry traces to this OTLP/gRPC collector, HOST:PORT (empty: no tracing)")
	fs.BoolVar(&f.insecure, "otlp-insecure", false, "connect to --otlp-endpoint without TLS")
	fs.Float64Var(&f.sampleRatio, "trace-sample-ratio", 0.01, "fraction of new traces sampled (a caller's sampled trace is always continued)")
}

// provider returns the tracer provider of service, nil when tracing is
// off, and the function that flushes and stops it.
func (f *traceFlags) provider(ctx context.Context, service string) (trace.TracerProvider, func(context.Context) error, error) {
	if f.endpoint == "" {
		return nil, func(context.Context) error { return nil }, nil
	}
	if f.sampleRatio < 0 || f.sampleRatio > 1 {
		return nil, nil, fmt.Errorf("--trace-sample-ratio %v: want a number from 0 to 1", f.sampleRatio)
	}
	opts := []otlptracegrpc.Option{otlptracegrpc.WithEndpoint(f.endpoint)}
	if f.insecure {
		opts = append(opts, otlptracegrpc.WithInsecure())
	}
	exp, err := otlptracegrpc.New(ctx, opts...)
	if err != nil {
		return nil, nil, fmt.Errorf("--otlp-endpoint: %w", err)
	}
	tp := sdktrace.NewTracerProvider(
		sdktrace.WithBatcher(exp),
		sdktrace.WithSampler(sdktrace.ParentBased(sdktrace.TraceIDRatioBased(f.sampleRatio))),
		sdktrace.WithResource(resource.NewSchemaless(semconv.ServiceName(service), semconv.ServiceVersion(versionString()))),
	)
	return tp, tp.Shutdown, nil
}
