// Command scripted-model serves an OpenAI-compatible chat completions API
// that replays a script (see docs/scripted-model.md).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/astraldeep/astralvessel-go/runtime/telemetry"
	"github.com/astraldeep/astralvessel-go/vessel/internal/listen"
	"github.com/astraldeep/astralvessel-go/vessel/scripted"
	"go.uber.org/zap"
)

func main() {
	// Every line it writes is JSON, like the services' (docs/operations.md).
	log, _, err := telemetry.NewLogger("info")
	if err != nil {
		fmt.Fprintln(os.Stderr, "scripted-model:", err)
		os.Exit(1)
	}
	if err := run(log); err != nil {
		// One plain line, as the services say why they cannot start.
		fmt.Fprintln(os.Stderr, "scripted-model:", err)
		os.Exit(1)
	}
}

func run(log *zap.Logger) error {
	listenAddr := flag.String("listen", "127.0.0.1:8090", "address to listen on")
	scriptPath := flag.String("script", "", "script file (JSON); the built-in default when empty")
	flag.Parse()

	var sc *scripted.Script
	if *scriptPath != "" {
		var err error
		if sc, err = scripted.Load(*scriptPath); err != nil {
			return err
		}
	}
	ln, err := listen.TCP(context.Background(), *listenAddr, "--listen")
	if err != nil {
		return err // one plain line; a busy address says so
	}
	// The bound address is logged so callers using port 0 can find it.
	log.Info("scripted-model listening", zap.String("addr", ln.Addr().String()))
	srv := &http.Server{Handler: scripted.NewServer(sc), ReadHeaderTimeout: 10 * time.Second}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	go func() {
		<-ctx.Done()
		shut, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(shut)
	}()
	if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("serve: %w", err)
	}
	return nil
}
