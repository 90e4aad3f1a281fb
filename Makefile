# AstralVessel: one Makefile for the go.work monorepo.
# `make run` starts the local stack and asks it a question; `make test` runs the tests.

SHELL := /bin/bash
MODULES := proto runtime deployer vessel vessel/client sandboxd egress conformance stress examples/notes-mcp
BIN := $(CURDIR)/.cache/bin
# staticcheck 2026.2.2
STATICCHECK_VERSION := v0.8.2
STATICCHECK := $(CURDIR)/.cache/tools/staticcheck-$(STATICCHECK_VERSION)
GOTEST_FLAGS ?= -count=1 -timeout 15m
# .ci/tools: the test counter and the complexity check (standard library only)
CITOOLS := $(CURDIR)/.cache/tools/ci

.PHONY: check setup all build test test-unit test-local lint fmt vet staticcheck proto proto-check modules citools complexity \
        run images e2e e2e-k8s gvisor-runtime versions bench-sandbox bench-turn bench-egress up-time load load-two load-push clean fuzz-short

all: build

## check: the test command: install what is missing, then generated-code
## check, lint, every module alone, and every test against a private
## PostgreSQL cluster (deploy/postgres-test.sh: a temporary folder and port of
## its own, stopped and removed when the tests end, pass or fail).
check: setup
	$(MAKE) proto-check lint modules
	./deploy/postgres-test.sh $(MAKE) test

setup:
	./deploy/setup.sh

# Stamped into astralvessel (and sandboxd's version): astralvessel --version.
LDFLAGS := -X main.version=$(shell git describe --tags --always --dirty 2>/dev/null || echo dev) \
           -X main.commit=$(shell git rev-parse HEAD 2>/dev/null || echo unknown)

## build: every binary into .cache/bin
build:
	@mkdir -p $(BIN)
	cd deployer && go build -ldflags '$(LDFLAGS)' -o $(BIN)/ ./cmd/...
	cd vessel && go build -o $(BIN)/ ./cmd/...
	cd sandboxd && go build -o $(BIN)/ ./cmd/...
	cd egress && go build -o $(BIN)/ ./cmd/...
	cd conformance && go build -o $(BIN)/ ./...
	cd stress && go build -o $(BIN)/ ./...

## test: every module's tests, each module on its own (GOWORK=off), then the whole
## local stack under the conformance checks and a short load run.
test: test-unit test-local

# Every test runs: go test -json feeds .ci/tools/testcount, which prints the
# usual output, then per module the tests run against the tests the source
# declares, and fails on a declared test that never started or on a
# conformance/stress test that skips here without the TestLocalStack name
# (test-local runs exactly those). Purposeful skips: .ci/skipped-tests.
test-unit: citools
	@set -eo pipefail; for m in $(MODULES); do \
	  echo "== go test $$m"; \
	  (cd $$m && GOWORK=off go test -json $(GOTEST_FLAGS) ./... 2>&1 | \
	    GOWORK=off $(CITOOLS)/testcount -module $$m -skipped $(CURDIR)/.ci/skipped-tests); \
	done
	@echo "== go test third_party/a2a-go (upstream v2.4.0's own tests and the patches' tests, PATCHES.md)"
	@./third_party/a2a-go/patches/check.sh
	@cd third_party/a2a-go && GOWORK=off go test $(GOTEST_FLAGS) ./...
	@# the patches are an optimisation only: every module builds against plain upstream
	@./third_party/a2a-go/patches/plain-upstream.sh $(MODULES)

## fuzz-short: every fuzz target of every module for FUZZTIME each (each module
## alone, GOWORK=off); targets are found with go test -list, so new ones join in.
## Every target runs; the failing ones are listed at the end. A run that fails
## without a failing input (the fuzz engine's own "context deadline exceeded"
## when time runs out mid-minimisation) runs once more; a found input fails at
## once. FUZZFLAGS adds flags, e.g. FUZZFLAGS=-parallel=1 on a shared machine.
FUZZTIME ?= 10s
FUZZFLAGS ?=
fuzz-short:
	@set -o pipefail; failed=""; for m in $(MODULES); do \
	  targets=$$(cd $$m && GOWORK=off go test -list '^Fuzz' ./... | \
	    awk '/^Fuzz/ { names = names " " $$1; next } \
	         /^ok / { n = split(names, a, " "); for (i = 1; i <= n; i++) print $$2 "=" a[i]; names = "" }') || \
	    { echo "listing the fuzz targets of $$m failed"; exit 1; }; \
	  for t in $$targets; do \
	    echo "== fuzz $$m $${t#*=} ($(FUZZTIME))"; \
	    log=$$(mktemp); \
	    if ! (cd $$m && GOWORK=off go test -run '^$$' -fuzz "^$${t#*=}$$" -fuzztime $(FUZZTIME) $(FUZZFLAGS) "$${t%%=*}") 2>&1 | tee $$log; then \
	      if grep -q 'Failing input written' $$log; then failed="$$failed $$m:$${t#*=}"; \
	      else echo "== fuzz $$m $${t#*=}: no failing input found; once more"; \
	        (cd $$m && GOWORK=off go test -run '^$$' -fuzz "^$${t#*=}$$" -fuzztime $(FUZZTIME) $(FUZZFLAGS) "$${t%%=*}") || \
	          failed="$$failed $$m:$${t#*=}"; fi; \
	    fi; rm -f $$log; \
	  done; \
	done; \
	if [ -n "$$failed" ]; then echo "fuzz targets that failed:$$failed"; exit 1; fi

# The naming rule (CONTRIBUTING.md): a conformance or stress test that needs
# the local stack is named TestLocalStack…; test-local runs exactly those and
# testcount checks that each one started.
test-local: build citools
	@set -eo pipefail; for m in conformance stress; do \
	  echo "== go test $$m (local stack)"; \
	  (cd $$m && VESSEL_E2E_LOCAL=1 VESSEL_BIN_DIR=$(BIN) go test -json $(GOTEST_FLAGS) -run '^TestLocalStack' ./... 2>&1 | \
	    GOWORK=off $(CITOOLS)/testcount -module $$m -run '^TestLocalStack' -skipped $(CURDIR)/.ci/skipped-tests); \
	done

## citools: build .ci/tools (testcount, complexity) into .cache/tools/ci
citools:
	@mkdir -p $(CITOOLS)
	@cd .ci/tools && GOWORK=off go build -o $(CITOOLS)/ ./testcount ./complexity

## modules: each module builds and vets alone, without go.work
modules:
	@set -e; for m in $(MODULES); do \
	  echo "== $$m (GOWORK=off)"; \
	  (cd $$m && GOWORK=off go build ./... && GOWORK=off go vet ./...); \
	done

## lint: gofmt, go vet and staticcheck over every module, one version of
## each shared dependency across every module's go.mod, and the complexity
## limits (cyclomatic 30, 800 lines; exceptions in .ci/complexity-allow)
lint: fmt vet staticcheck versions complexity

## complexity: no function over cyclomatic 30, no hand-written file over 800
## lines; prints each allowed exception with its reason. The tools' own tests
## run here too (cached: well under a second when nothing changed).
complexity: citools
	@cd .ci/tools && GOWORK=off go vet ./... && GOWORK=off go test ./... >/dev/null
	@$(CITOOLS)/complexity -root $(CURDIR) -allow $(CURDIR)/.ci/complexity-allow

versions:
	@./deploy/check-versions.sh $(MODULES)
	@# applications get plain upstream a2a-go through vessel/client, so its tests must too
	@r=$$(cd vessel/client && GOWORK=off go list -m -f '{{.Replace}}' github.com/a2aproject/a2a-go/v2); \
	if [ "$$r" != "<nil>" ]; then echo "vessel/client replaces a2a-go ($$r): it must use plain upstream"; exit 1; fi

fmt:
	@out=$$(git ls-files -co --exclude-standard '*.go' | xargs -r gofmt -l); \
	if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi

vet:
	@set -e; for m in $(MODULES); do (cd $$m && go vet ./...); done

$(STATICCHECK):
	@mkdir -p $(dir $@)
	GOWORK=off GOBIN=$(dir $@) go install honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION)
	mv $(dir $@)/staticcheck $@

staticcheck: $(STATICCHECK)
	@set -e; for m in $(MODULES); do echo "== staticcheck $$m"; (cd $$m && $(STATICCHECK) ./...); done

## proto: regenerate Go code from proto/ with pinned plugins, and buf lint
proto:
	./proto/gen.sh

## proto-check: fail when the committed generated code is stale
proto-check: proto
	@git diff --exit-code -- proto || { echo "generated code in proto/ is stale: run make proto and commit"; exit 1; }
	@test -z "$$(git status --porcelain -- proto)" || { git status --porcelain -- proto; echo "proto/ has untracked generated files: run make proto and commit"; exit 1; }

## run: start the local stack, ask the example agent one question, stop
## (deploy/local-demo.sh builds only the five binaries it runs)
run: setup
	./deploy/local-demo.sh

## images: build every service image (a local Debian base when no registry answers;
## deploy/images.sh builds its own static binaries)
images:
	./deploy/images.sh

## e2e: the Compose deployment for real: images, up, isolation probes, conformance, down
## (the notebook agent in the gvisor tier when Docker's runsc runtime works; E2E_GVISOR=1 requires it)
e2e:
	./deploy/e2e.sh

## gvisor-runtime: root: runsc built from gVisor's Go module (cached in .cache/gvisor),
## registered with dockerd as the runtime runsc (daemon.json merged, SIGHUP)
gvisor-runtime:
	./deploy/gvisor-runtime.sh

## e2e-k8s: a real single-node Kubernetes built from the module proxy and Debian
## (deploy/k8s/build.sh, cached in .cache/k8s or K8S_CACHE), the generated manifests
## through the API server's PodSecurity admission, the NetworkPolicy probes with the
## engine on and off, and the example deployed (CoreDNS, the project's images, the
## scripted model) with isolation probes and conformance. CPU-heavy when cold: run
## under the heavy lock (docs/kubernetes.md).
e2e-k8s:
	./deploy/k8s/e2e.sh

bench-sandbox:
	$(MAKE) -C sandboxd bench

## bench-turn: the vessel's turn benchmarks (vessel/Makefile); each writes its
## section of docs/performance.md, unless VESSEL_BENCH_NO_WRITE=1 (then they only
## log the sections: a look, or a run on a loaded machine).
bench-turn:
	$(MAKE) -C vessel bench-turn

bench-egress:
	$(MAKE) -C egress bench

## up-time: how long `astralvessel up` takes to be ready (median of 10; figure in docs/performance.md)
up-time: build
	VESSEL_BIN_DIR=$(BIN) ./deploy/up-time.sh 10

## load: the spec's load scenario alone, 50 users × 3 turns (seconds once built; figures in
## docs/performance.md); the push benchmark is load-push, a target of its own.
# Servers on CPU 0, load tool and model on CPU 1, as the spec's scenario says (unpinned on one CPU).
LOAD_PIN := $(shell [ "$$(nproc)" -ge 2 ] && echo --server-cpus 0 --client-cpus 1)
## load-push: 10,000 push deliveries through the outbox (River on SQLite) to a
## loopback receiver, signed, in order per task (docs/performance.md).
load-push:
	cd vessel && go test ./push/outbox -run '^$$' -bench BenchmarkPushDeliveries -benchtime 10000x -count 1

# The load tool and its stack run in a network namespace with only loopback
# (needs root), the resolver pointed at the tool's DNS trap on 127.0.0.1:53:
# nothing can connect beyond loopback, and any name looked up (say the
# Compose-only "egress") fails the run, naming it. load-push is its own target.
LOAD_ARGS ?= --users 50 --turns 3 --history 1000 --pieces 1000 --cancels 20
LOAD_OUT ?= $(CURDIR)/.cache/load
define load_in_netns
	@mkdir -p $(CURDIR)/.cache
	printf 'nameserver 127.0.0.1\noptions timeout:1 attempts:1\n' > $(CURDIR)/.cache/resolv.trap
	cd stress && unshare --net --mount --propagation private -- bash -c 'set -e; ip link set lo up; \
	  mount --bind $(CURDIR)/.cache/resolv.trap /etc/resolv.conf; \
	  exec $(BIN)/stress --dns-trap 127.0.0.1:53 $(LOAD_ARGS) $(LOAD_PIN) --bin $(BIN) $(1)'
endef
load: build
	$(call load_in_netns,--out $(LOAD_OUT))

## load-two: the same scenario on two local stacks at once (two deployments on one
## host: distinct projects, so distinct call uid ranges, in one loopback-only
## namespace, loads started together); fails on a failed turn, leftover scratch
## or a shell command killed from outside its turn in either run.
load-two: build
	$(call load_in_netns,--twice --out $(CURDIR)/.cache/load-two)

clean:
	rm -rf .cache
