package main

import (
	"context"
	"fmt"
	"io"
	"strings"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"

	sandboxv1 "github.com/astraldeep/astralvessel-go/proto/astralvessel/sandbox/v1"
	"github.com/astraldeep/astralvessel-go/runtime/healthcheck"
)

// defaultHealthAddr is where Compose has sandboxd serve gRPC.
const defaultHealthAddr = "127.0.0.1:8600"

// health is `sandboxd health [ADDR]`, the Compose healthcheck: the Status
// call of sandboxd's own gRPC API (always served, unlike the HTTP/JSON
// gateway), with the token the container already holds. It returns the
// exit code: 0 healthy, 1 not, 2 a usage error.
func health(args []string, stderr io.Writer) int {
	addr := defaultHealthAddr
	switch {
	case len(args) > 1, len(args) == 1 && strings.HasPrefix(args[0], "-"):
		fmt.Fprintf(stderr, "usage: sandboxd health [HOST:PORT]   (default %s)\n", defaultHealthAddr)
		return 2
	case len(args) == 1:
		addr = args[0]
	}
	if err := probe(addr); err != nil {
		fmt.Fprintf(stderr, "sandboxd: unhealthy: %v\n", err)
		return 1
	}
	return 0
}

func probe(addr string) error {
	tok, err := readToken()
	if err != nil {
		return err
	}
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return fmt.Errorf("dial %s: %w", addr, err)
	}
	defer conn.Close()
	ctx, cancel := context.WithTimeout(context.Background(), healthcheck.Timeout)
	defer cancel()
	ctx = metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+tok)
	st, err := sandboxv1.NewRunServiceClient(conn).Status(ctx, &sandboxv1.StatusRequest{})
	if err != nil {
		return fmt.Errorf("status call to %s: %w", addr, err)
	}
	if !st.GetConfined() || st.GetAgent() == "" {
		return fmt.Errorf("status from %s: confined %v, agent %q", addr, st.GetConfined(), st.GetAgent())
	}
	return nil
}
