// Command otlp-sink is a small OTLP trace receiver for tests and the
// Compose e2e: it accepts the OpenTelemetry protocol's trace exports over
// gRPC and HTTP and appends each span it receives as one JSON line to a
// file (see runtime/telemetry/otlpsink). It is not a collector: it keeps
// everything, forwards nothing and has no authentication, so it belongs
// only on a network of the deployment's own.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"go.uber.org/zap"

	"github.com/astraldeep/astralvessel-go/runtime/telemetry"
	"github.com/astraldeep/astralvessel-go/runtime/telemetry/otlpsink"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "otlp-sink: "+err.Error())
		os.Exit(1)
	}
}

func run(args []string) error {
	fs := flag.NewFlagSet("otlp-sink", flag.ContinueOnError)
	grpcAddr := fs.String("grpc-listen", "127.0.0.1:4317", "OTLP/gRPC listen address (empty: none)")
	httpAddr := fs.String("http-listen", "127.0.0.1:4318", "OTLP/HTTP listen address (empty: none)")
	out := fs.String("out", "-", "file the spans are appended to as JSON lines (- is standard output)")
	level := fs.String("log-level", "info", "log level: debug, info, warn or error")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	if *grpcAddr == "" && *httpAddr == "" {
		return fmt.Errorf("nothing to listen on: set --grpc-listen or --http-listen")
	}
	log, _, err := telemetry.NewLogger(*level)
	if err != nil {
		return err
	}
	defer func() { _ = log.Sync() }()
	var w io.Writer = os.Stdout
	if *out != "-" {
		f, err := os.OpenFile(*out, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			return fmt.Errorf("--out: %w", err)
		}
		defer f.Close()
		w = f
	}
	srv, err := otlpsink.Serve(otlpsink.New(w), *grpcAddr, *httpAddr)
	if err != nil {
		return err
	}
	defer srv.Close()
	fields := []zap.Field{zap.String("out", *out)}
	if srv.GRPCAddr != nil {
		fields = append(fields, zap.String("grpc", srv.GRPCAddr.String()))
	}
	if srv.HTTPAddr != nil {
		fields = append(fields, zap.String("http", srv.HTTPAddr.String()))
	}
	log.Info("otlp-sink listening", fields...)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	<-ctx.Done()
	log.Info("otlp-sink stopping", zap.Int("spans", len(srv.Sink.Spans())))
	return nil
}
