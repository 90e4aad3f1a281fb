#!/usr/bin/env bash
# Regenerates the Go code for proto/ with pinned plugin versions.
# Needs Debian's protobuf-compiler (protoc) and the Go toolchain; nothing else.
set -euo pipefail
cd "$(dirname "$0")"
PROTOC_GEN_GO=v1.36.12
PROTOC_GEN_GO_GRPC=v1.6.2
GRPC_GATEWAY=v2.33.0

bin="$PWD/../.cache/protobin"
mkdir -p "$bin"
export GOBIN="$bin" GOWORK=off GOFLAGS=-mod=mod
[ -x "$bin/protoc-gen-go-$PROTOC_GEN_GO" ] || { go install "google.golang.org/protobuf/cmd/protoc-gen-go@$PROTOC_GEN_GO" && cp "$bin/protoc-gen-go" "$bin/protoc-gen-go-$PROTOC_GEN_GO"; }
[ -x "$bin/protoc-gen-go-grpc-$PROTOC_GEN_GO_GRPC" ] || { go install "google.golang.org/grpc/cmd/protoc-gen-go-grpc@$PROTOC_GEN_GO_GRPC" && cp "$bin/protoc-gen-go-grpc" "$bin/protoc-gen-go-grpc-$PROTOC_GEN_GO_GRPC"; }
[ -x "$bin/protoc-gen-grpc-gateway-$GRPC_GATEWAY" ] || { go install "github.com/grpc-ecosystem/grpc-gateway/v2/protoc-gen-grpc-gateway@$GRPC_GATEWAY" && cp "$bin/protoc-gen-grpc-gateway" "$bin/protoc-gen-grpc-gateway-$GRPC_GATEWAY"; }
unset GOFLAGS

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go run ./internal/descset "$tmp/googleapis.binpb"

mapfile -t files < <(find astralvessel -name '*.proto' | sort)
PATH="$bin:$PATH" protoc -I . --descriptor_set_in="$tmp/googleapis.binpb" \
  --go_out=. --go_opt=paths=source_relative \
  --go-grpc_out=. --go-grpc_opt=paths=source_relative \
  --grpc-gateway_out=. --grpc-gateway_opt=paths=source_relative \
  "${files[@]}"

# An image for buf lint (buf cannot fetch googleapis here, so it lints the image).
if [ "${BUF_LINT:-1}" = 1 ]; then
  PATH="$bin:$PATH" protoc -I . --descriptor_set_in="$tmp/googleapis.binpb" --include_imports --include_source_info \
    -o "$tmp/image.binpb" "${files[@]}"
  (cd .. && GOWORK=off go run github.com/bufbuild/buf/cmd/buf@v1.75.0 lint "$tmp/image.binpb#format=binpb" --config buf.yaml --path astralvessel) 
fi
