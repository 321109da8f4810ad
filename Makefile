# ctxc build. `make run` serves on embedded defaults; `make test` runs every test.
SHELL := /bin/bash
GO ?= go
BIN := $(CURDIR)/bin
export PATH := $(BIN):$(PATH)

# Pinned tools, installed into ./bin from the Go module proxy (the Buf registry is not reachable).
BUF_VERSION := v1.75.0
PROTOC_GEN_GO_VERSION := v1.36.12
PROTOC_GEN_GO_GRPC_VERSION := v1.6.2
# The same grpc-gateway version as go.mod, so generated code and runtime agree.
PROTOC_GEN_GRPC_GATEWAY_VERSION := v2.31.0
# grpcurl (the README's commands) and helm (make dist packages the chart,
# deploy/helm/ctxc, with it; docs/deploying.md renders it) are tools of go.mod
# and deploy/go.mod (Debian has neither), pinned and checksummed there; the
# versions are read from them.
GRPCURL_VERSION := $(shell awk '$$1 == "github.com/fullstorydev/grpcurl" { print $$2 }' go.mod)
HELM_VERSION := $(shell awk '$$1 == "helm.sh/helm/v3" { print $$2 }' deploy/go.mod)
# The Kubernetes release helm renders and lints for when not given
# --kube-version, stamped as helm's own release builds stamp it: 1.X for the
# k8s.io/client-go v0.X.Y it is built with (deploy/go.mod's). Unstamped it
# would be 1.20, which the chart's kubeVersion (>=1.27) refuses.
HELM_KUBE_MINOR := $(shell awk '$$1 == "k8s.io/client-go" { split($$2, v, "."); print v[2] }' deploy/go.mod)
HELM_LDFLAGS := -X helm.sh/helm/v3/internal/version.version=$(HELM_VERSION) \
	$(foreach pkg,chartutil lint/rules,-X helm.sh/helm/v3/pkg/$(pkg).k8sVersionMajor=1 -X helm.sh/helm/v3/pkg/$(pkg).k8sVersionMinor=$(HELM_KUBE_MINOR))
# cyclonedx-gomod writes the release's software bill of materials (make dist).
CYCLONEDX_GOMOD_VERSION := v1.10.0

# The release (the VERSION file, which the clients and the chart carry too)
# and the commit it was built from.
VERSION ?= $(shell cat VERSION)
COMMIT ?= $(shell git describe --always --dirty 2>/dev/null || echo unknown)
LDFLAGS := -s -w -X main.version=$(VERSION) -X main.commit=$(COMMIT)
# grpcnotrace leaves out gRPC's golang.org/x/net/trace, whose html/template
# keeps every exported method of every linked type alive (26 MB of the binary).
BUILD_TAGS := grpcnotrace
# integration/ is the slow tier (the real binary, real clients and agent CLIs):
# its tests build only with this tag, so `go test ./...` is the unit tier and
# make test, which passes it, runs both.
INTEGRATION_TAGS := integration,$(BUILD_TAGS)
# vet and the tests build as the binary does ($(GOCHECK) ... $(CHECKFLAGS)
# -tags '...,$(BUILD_TAGS)': CGO off, -trimpath, its tags), so they check what
# ships, and a machine with a cold build cache compiles each dependency once
# rather than once for the binary and again for the tests (go vet after make
# build: 121 s with the default settings, 28 s with these).
GOCHECK := CGO_ENABLED=0 $(GO)
CHECKFLAGS := -trimpath
ADDR ?= 127.0.0.1:50051

.PHONY: all deps scriptedmodel-sdks grpcurl helm test-deploy test-helm-cli bench-sizing abuse tools generate ui python-stubs lint test test-clients proxy-clients long-tasks record-heldout test-short bench bench-clients bench-sessions run demo build image dist test-dist docker clean

all: build

$(BIN)/buf:
	GOBIN=$(BIN) $(GO) install github.com/bufbuild/buf/cmd/buf@$(BUF_VERSION)
$(BIN)/protoc-gen-go:
	GOBIN=$(BIN) $(GO) install google.golang.org/protobuf/cmd/protoc-gen-go@$(PROTOC_GEN_GO_VERSION)
$(BIN)/protoc-gen-go-grpc:
	GOBIN=$(BIN) $(GO) install google.golang.org/grpc/cmd/protoc-gen-go-grpc@$(PROTOC_GEN_GO_GRPC_VERSION)
$(BIN)/protoc-gen-grpc-gateway:
	GOBIN=$(BIN) $(GO) install github.com/grpc-ecosystem/grpc-gateway/v2/protoc-gen-grpc-gateway@$(PROTOC_GEN_GRPC_GATEWAY_VERSION)
# grpcurl and helm are built from source once per clone, as phases with
# their time (-v: each package as it compiles): on a cold build cache they
# take minutes. Each is built in the module whose tool it is, with the
# settings of what is built beside it (grpcurl as the binary, helm as the
# deploy/ tests), so the packages they share with it (gRPC and protobuf;
# the Kubernetes API types) compile once: 85 -> 31 s and 154 -> 109 s on a
# cold cache. Each is stamped with its version as its release builds are
# (helm's are CGO off and -trimpath too).
$(BIN)/grpcurl:
	@$(PHASE) "grpcurl $(GRPCURL_VERSION) from source, for the README's commands" env $(GOCHECK) build -v $(CHECKFLAGS) -tags '$(BUILD_TAGS)' -ldflags '-X main.version=$(GRPCURL_VERSION)' -o $(BIN)/grpcurl github.com/fullstorydev/grpcurl/cmd/grpcurl
$(BIN)/helm:
	@$(PHASE) "helm $(HELM_VERSION) from source, for make dist and make test-helm-cli" sh -c "cd deploy && $(GOCHECK) build -v $(CHECKFLAGS) -ldflags '$(HELM_LDFLAGS)' -o $(BIN)/helm helm.sh/helm/v3/cmd/helm"
$(BIN)/cyclonedx-gomod:
	GOBIN=$(BIN) $(GO) install github.com/CycloneDX/cyclonedx-gomod/cmd/cyclonedx-gomod@$(CYCLONEDX_GOMOD_VERSION)

# The Debian packages the tests need (scripts/deps.sh holds the one list,
# which .ci/run installs too): installed when missing, as root or with sudo
# that needs no password; otherwise it stops at once, naming the command.
deps:
	@scripts/deps.sh

# grpcurl alone, for the README's commands; `make tools` also
# builds buf (several minutes on two cores), which only generate and lint need.
grpcurl: $(BIN)/grpcurl
helm: $(BIN)/helm
tools: $(BIN)/buf $(BIN)/protoc-gen-go $(BIN)/protoc-gen-go-grpc $(BIN)/protoc-gen-grpc-gateway $(BIN)/grpcurl $(BIN)/helm $(BIN)/cyclonedx-gomod

generate: $(BIN)/buf $(BIN)/protoc-gen-go $(BIN)/protoc-gen-go-grpc $(BIN)/protoc-gen-grpc-gateway python-stubs ui
	rm -rf gen/ctxc
	$(BIN)/buf generate

# The inspector page (ui/: Preact and uPlot, bundled by the esbuild that
# ui/package-lock.json pins) built into internal/service/inspector/assets, which the
# binary embeds; committed, so building ctxc needs no Node. Deterministic:
# CI runs it and checks that nothing changed.
ui:
	cd ui && $(NPM_CI) && npm run build

# Python stubs of the ctxc Python package (clients/python), generated with
# Debian's protoc and grpc_python_plugin (scripts/deps.sh; the well-known types
# come from libprotobuf-dev's /usr/include) and committed, so `pip install
# clients/python` needs no protoc; the examples import them too.
PY_STUBS := clients/python/src
python-stubs: deps
	rm -f $(PY_STUBS)/ctxc/v1/*_pb2*.py $(PY_STUBS)/ctxc/v1/*_pb2*.pyi
	protoc -I proto -I /usr/include --python_out=$(PY_STUBS) --pyi_out=$(PY_STUBS) --grpc_python_out=$(PY_STUBS) \
		--plugin=protoc-gen-grpc_python=$$(command -v grpc_python_plugin) ctxc/v1/agent_state.proto ctxc/v1/compiler_service.proto

lint: $(BIN)/buf
	$(BIN)/buf lint
	$(BIN)/buf format -d --exit-code
	$(GOCHECK) vet $(CHECKFLAGS) -tags '$(INTEGRATION_TAGS)' ./...
	$(GOCHECK) vet $(CHECKFLAGS) -tags 'abuse,$(INTEGRATION_TAGS)' ./integration/
	$(GOCHECK) vet $(CHECKFLAGS) -tags 'dist,$(INTEGRATION_TAGS)' ./integration/
	cd examples/secretmask && $(GOCHECK) vet $(CHECKFLAGS) -tags '$(BUILD_TAGS)' ./...
	cd deploy && $(GOCHECK) vet $(CHECKFLAGS) ./... && $(GOCHECK) vet $(CHECKFLAGS) -tags helmcli ./...
	@out=$$(gofmt -l $$(find . -name '*.go' -not -path './gen/*' -not -path './bin/*' -not -path '*/testdata/*')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

# Integration tests build the real binary with `make build` and drive it with
# grpcurl from ./bin; under make test a missing program fails them
# (CTXC_REQUIRE_TOOLS=1; plain `go test` skips them instead, saying so).
# ./bin/ctxc is built too, for the README's commands. test-clients runs the
# client packages' own tests. Each phase prints a line before it and one with
# its time after (scripts/phase.sh).
PHASE := scripts/phase.sh
# Every npm ci fails on a package whose engines the machine's Node (the one
# scripts/deps.sh installs, 20) does not meet, rather than warning
# EBADENGINE and installing it anyway.
NPM_CI := npm ci --no-audit --no-fund --engine-strict
# make test runs in three steps, each two chains side by side (their lines
# interleaved), then go test:
#   1. the first build of ./bin/ctxc (CPU) | the npm packages and every Go
#      module both go.mod files require (the tests', grpcurl's and
#      deploy/'s; mostly the network), so that no later phase downloads;
#   2. grpcurl, the Python stubs and the client packages' tests (light on
#      CPU) | the deploy tests (mostly their compile, which needs little
#      of what grpcurl compiles);
#   3. go test, with go test's default -p: -p 3 took as long and more CPU
#      (make test-fresh, the same day: 383 s and 715 s against 384 s and
#      699 s), and step 2 side by side took 172 s where one phase after
#      the other took 200 s.
# go test runs without its vet subset: make lint vets every package with
# every analyzer.
test: deps
	@$(MAKE) --no-print-directory -j1 test-downloads & fetch=$$!; \
	  $(MAKE) --no-print-directory -j1 build; built=$$?; \
	  wait $$fetch && exit $$built
	@$(MAKE) --no-print-directory -j1 test-deploy & deploy=$$!; \
	  $(MAKE) --no-print-directory -j1 test-go-tools test-clients; tested=$$?; \
	  wait $$deploy && exit $$tested
	@$(PHASE) "go test -tags integration ./... (unit, fuzz seeds, integration against the real binary)" env CTXC_REQUIRE_TOOLS=1 CTXC_GRPCURL=$(BIN)/grpcurl $(GOCHECK) test $(CHECKFLAGS) -vet=off -tags '$(INTEGRATION_TAGS)' -count=1 -timeout 12m ./...

# make test's chains (go mod download is silent, so it is a phase).
.PHONY: test-go-tools test-downloads
test-go-tools: build $(BIN)/grpcurl python-stubs
test-downloads: clients-npm scriptedmodel-sdks proxy-clients
	@$(PHASE) "go mod download (the service's and deploy/'s modules)" sh -c '$(GO) mod download && cd deploy && $(GO) mod download'

# npm packages, each directory's installed by npm ci from its
# package-lock.json. The file npm ci writes last (node_modules' own
# .package-lock.json) marks an install as done, so that make test's second
# make does not install again what its first did.
NPM_DONE := node_modules/.package-lock.json
%/$(NPM_DONE): %/package-lock.json
	@$(PHASE) "npm ci: $*" sh -c 'cd $* && $(NPM_CI)'

# The TypeScript client's packages.
.PHONY: clients-npm
clients-npm: clients/typescript/$(NPM_DONE)

# The providers' own SDKs (@anthropic-ai/sdk, openai; pinned by the
# package-lock.json there) that internal/scriptedmodel's test drives.
scriptedmodel-sdks: internal/scriptedmodel/testdata/sdk/$(NPM_DONE)

# The real clients the proxy's integration tests drive (the OpenAI and
# Anthropic SDKs, Claude Code, Codex CLI, Gemini CLI, pi), at the versions
# package-lock.json pins.
proxy-clients: integration/testdata/proxy-clients/$(NPM_DONE)

# The real agent CLIs through long tasks in ctxc's proxy (docs/measuring.md,
# "Long tasks of real agent CLIs"): every CLI, window, length and seed of
# the matrix, about ten minutes; make test runs two of its runs.
# LONG_TASKS_FLAGS=-update writes the table the guide quotes, and
# CTXC_LONG_TASKS_DUMP=dir keeps every run's requests.
long-tasks: build proxy-clients
	@$(PHASE) "long tasks of the real agent CLIs through the proxy" env CTXC_LONG_TASKS=full CTXC_REQUIRE_TOOLS=1 $(GOCHECK) test $(CHECKFLAGS) -tags '$(INTEGRATION_TAGS)' -count=1 -timeout 1h -v -run '^TestLongTasks' ./integration/ $(LONG_TASKS_FLAGS)

# The held-out sessions of real agent CLIs that docs/measuring.md ("Real
# agents' transcripts") measures: Codex CLI and Claude Code, 40 prompts each
# on seeds 201 and 202, straight to the scripted model; their own session
# files are written to examples/transcripts/heldout (a few minutes a
# session), then the guide's eval blocks are rewritten. Not part of make test.
record-heldout: build proxy-clients
	@$(PHASE) "held-out sessions of the real agent CLIs" env CTXC_RECORD_SESSIONS=$(CURDIR)/examples/transcripts/heldout CTXC_REQUIRE_TOOLS=1 $(GOCHECK) test $(CHECKFLAGS) -tags '$(INTEGRATION_TAGS)' -count=1 -timeout 1h -v -run '^TestRecordHeldOutSessions$$' ./integration/
	@$(PHASE) "the guide's eval blocks, from the new recordings" $(GOCHECK) test $(CHECKFLAGS) -tags '$(BUILD_TAGS)' -count=1 -run '^TestGuideEvalBlocks$$' ./cmd/ctxc -update

# The Helm chart and the sidecar manifests, checked without a cluster by the
# deploy/ module (its own go.mod keeps the Kubernetes API types out of the
# service's): helm lint --strict and helm template, run as helm's own
# packages (deploy/go.mod's helm) so that no helm binary is built, and strict
# decoding of every object (make lint vets them, and with -tags helmcli the
# tests test-helm-cli runs). Built as the binary is ($(GOCHECK) ... $(CHECKFLAGS)),
# so that the standard library and the modules they share compile once
# (deploy/go.mod keeps those modules at the service's versions,
# TestSharedModulesAtTheServiceVersions).
test-deploy: build
	@$(PHASE) "deploy: the Helm chart and the sidecar manifests" sh -c 'cd deploy && CTXC_BIN=$(BIN)/ctxc $(GOCHECK) test $(CHECKFLAGS) -vet=off -count=1 ./...'

# What needs the helm CLI itself (deploy/helmcli_test.go, -tags helmcli):
# ./bin/helm, as make helm stamps it, renders docs/deploying.md's command for
# the pinned Kubernetes with no --kube-version and lints the chart, and prints
# what test-deploy renders with helm's packages. make test-dist runs it, as
# make dist builds ./bin/helm anyway (helm package).
test-helm-cli: $(BIN)/helm
	@$(PHASE) "deploy: the helm CLI (./bin/helm) on the chart" sh -c 'cd deploy && CTXC_REQUIRE_TOOLS=1 CTXC_HELM=$(BIN)/helm $(GOCHECK) test $(CHECKFLAGS) -count=1 -tags helmcli -run "^TestHelm" ./...'

# The client packages (clients/), each tested against a real `ctxc serve` of
# ./bin/ctxc: npm (Node 20 with npm; Debian's protoc and the package's
# protoc-gen-es generate the TypeScript types), Debian's python3-grpcio,
# phpunit and Composer's autoloader (scripts/deps.sh).
CLIENTS_PYTHON ?= /usr/bin/python3
test-clients: deps build clients-npm
	@$(PHASE) "clients: TypeScript (npm test)" sh -c 'cd clients/typescript && CTXC_BIN=$(BIN)/ctxc npm test'
	@$(PHASE) "clients: Python (unittest)" sh -c 'cd clients/python && CTXC_BIN=$(BIN)/ctxc PYTHONPATH=src:. $(CLIENTS_PYTHON) -m unittest discover -s tests -t .'
	@$(PHASE) "clients: PHP (phpunit)" sh -c 'cd clients/php && COMPOSER_ALLOW_SUPERUSER=1 composer dump-autoload --dev --quiet && CTXC_BIN=$(BIN)/ctxc phpunit'

test-short:
	$(GOCHECK) test $(CHECKFLAGS) -tags '$(BUILD_TAGS)' -short ./...

# make test as a new user's first run (scripts/test-fresh.sh): in a clean
# clone of HEAD with empty Go build, module and npm caches, failing if its
# output is ever silent for more than 30 s. 5 to 6 minutes on two cores
# (11 to 14 on a host whose first build of ./bin/ctxc took twice the CPU).
.PHONY: test-fresh
test-fresh:
	@scripts/test-fresh.sh

# The clients side by side (a prerequisite, so first), the generated long
# sessions, the benchmarks, then the load test of `make test` as a 60s soak.
bench: $(BIN)/grpcurl bench-clients bench-sessions
	$(GO) test -tags integration -run '^$$' -bench . -benchmem -benchtime 2s ./internal/tokens/... ./policies/... ./internal/service/... ./integration/...
	CTXC_LOAD_DURATION=60s $(GO) test -tags integration -count=1 -run '^TestBoundedLoad$$' -v ./integration/

# The abuse harness (docs/running-safely.md): every probe of a hostile or
# careless client against the real binary, with the bounds the guide quotes.
# It measures time and memory, so it is not part of make test.
abuse:
	$(GOCHECK) test $(CHECKFLAGS) -count=1 -tags 'abuse,$(INTEGRATION_TAGS)' -run '^TestAbuse$$' -v -timeout 30m ./integration/

# The sizing figures of docs/deploying.md: Compile calls per second of one
# replica held to one core, and its memory per MiB of requests in flight.
bench-sizing:
	$(GO) test -tags integration -count=1 -run '^$$' -bench Sizing -benchtime 5s ./integration/

# Twelve generated 40-turn sessions through ctxc eval, on the path that lets
# Route record compaction and on the stateless one; then twelve sessions of
# recorded real tool output and people's wording (--recorded) on the first,
# and two of 120 turns; then the window sweep (64K down to 4K) of the
# recorded sessions, the tuning seeds 1 to 12 and the held-out 31 to 33 in
# a table each (docs/measuring.md, "Window sweep").
SESSIONS_DIR ?= $(CURDIR)/.sessions
bench-sessions: build
	mkdir -p $(SESSIONS_DIR)
	for seed in 1 2 3 4 5 6 7 8 9 10 11 12; do $(BIN)/ctxc eval --generate $$seed > $(SESSIONS_DIR)/synth-$$seed.jsonl; done
	for seed in 1 2 3 4 5 6 7 8 9 10 11 12; do $(BIN)/ctxc eval --generate $$seed --recorded > $(SESSIONS_DIR)/recorded-$$seed.jsonl; done
	$(BIN)/ctxc eval --profiles budget-aware,policy-driven $(SESSIONS_DIR)/synth-*.jsonl
	$(BIN)/ctxc eval --route-profile pragmatic --profiles budget-aware,policy-driven $(SESSIONS_DIR)/synth-*.jsonl
	$(BIN)/ctxc eval --profiles budget-aware,policy-driven,llm-assisted $(SESSIONS_DIR)/recorded-*.jsonl
	for seed in 41 42; do $(BIN)/ctxc eval --generate $$seed --recorded --turns 120 > $(SESSIONS_DIR)/long-recorded-$$seed.jsonl; done
	$(BIN)/ctxc eval --profiles budget-aware,policy-driven,llm-assisted --windows 16000,32000 $(SESSIONS_DIR)/long-recorded-*.jsonl
	for seed in 31 32 33; do $(BIN)/ctxc eval --generate $$seed --recorded > $(SESSIONS_DIR)/heldout-recorded-$$seed.jsonl; done
	$(BIN)/ctxc eval --sweep --profiles budget-aware,policy-driven $(SESSIONS_DIR)/recorded-*.jsonl
	$(BIN)/ctxc eval --sweep --profiles budget-aware,policy-driven $(SESSIONS_DIR)/heldout-recorded-*.jsonl

# LangChain.js: compileMessages through ctxc against trimMessages, side by side.
bench-clients: deps build
	cd clients/typescript && $(NPM_CI) && CTXC_BIN=$(BIN)/ctxc npm run bench

# The first build names each package as it compiles it (-v): minutes on a
# cold cache, which would otherwise pass in silence.
# The first build is a phase with its time: it downloads and compiles every
# module, minutes on a cold cache.
build:
	$(if $(wildcard $(BIN)/ctxc),,@$(PHASE) "build $(BIN)/ctxc (the first build downloads and compiles its modules)") env CGO_ENABLED=0 $(GO) build $(if $(wildcard $(BIN)/ctxc),,-v) -trimpath -tags '$(BUILD_TAGS)' -ldflags '$(LDFLAGS)' -o $(BIN)/ctxc ./cmd/ctxc

run: build
	$(BIN)/ctxc serve --listen $(ADDR)

# The README's tour: the example profiles, the HTTP/JSON port and the
# context inspector on it.
demo: build
	@echo "ctxc: gRPC on 127.0.0.1:50051, HTTP/JSON on http://127.0.0.1:8080; the inspector: open http://127.0.0.1:8080/ui/"
	$(BIN)/ctxc serve --config examples/profiles.yaml --listen 127.0.0.1:50051 --http-listen 127.0.0.1:8080

# The container image (docs/releases.md, "The container image"), built by
# internal/imagebuild with no container daemon and no base image: the static
# binary for linux/amd64 and linux/arm64 (as make build builds it), Debian's
# CA certificates, a nonroot user, and the Dockerfile's environment, user,
# entrypoint and health check; an OCI image layout as a tar, whose index
# digest it prints. Named as the chart runs it (image.repository), dated at
# the commit's time, so that a rebuild of a commit gives the same digest.
# make dist builds it into the release directory with its own binaries.
IMAGE_REPOSITORY := $(shell awk '$$1 == "repository:" { print $$2; exit }' deploy/helm/ctxc/values.yaml)
IMAGE_SOURCE := $(shell awk '$$1 == "home:" { print $$2 }' deploy/helm/ctxc/Chart.yaml)
# The clients' packages declare the same license.
IMAGE_LICENSES := Apache-2.0
SOURCE_DATE_EPOCH ?= $(shell git log -1 --format=%ct 2>/dev/null)
IMAGE_FLAGS = -version $(VERSION) -commit $(COMMIT) -source-date-epoch $(SOURCE_DATE_EPOCH) \
	-repository $(IMAGE_REPOSITORY) -source $(IMAGE_SOURCE) -licenses $(IMAGE_LICENSES) \
	-ca-certs-version=$(shell dpkg-query -W -f='$${Version}' ca-certificates 2>/dev/null)
IMAGE ?= dist/ctxc-$(VERSION)-image.oci.tar
image: deps
	@mkdir -p $(dir $(IMAGE))
	@for arch in amd64 arm64; do \
		echo "image: ctxc for linux/$$arch"; \
		CGO_ENABLED=0 GOOS=linux GOARCH=$$arch $(GO) build -trimpath -tags '$(BUILD_TAGS)' -ldflags '$(LDFLAGS)' -o $(BIN)/image/linux_$$arch/ctxc ./cmd/ctxc || exit 1; \
	done
	$(GOCHECK) run $(CHECKFLAGS) ./internal/imagebuild $(IMAGE_FLAGS) \
		-binary linux/amd64=$(BIN)/image/linux_amd64/ctxc -binary linux/arm64=$(BIN)/image/linux_arm64/ctxc -out $(IMAGE)

# The release directory dist/ctxc-$(VERSION) (scripts/dist.sh): binaries,
# SBOM, the container image, the client packages, the chart, checksums.
# test-dist installs each into a clean directory and runs its quick start,
# and runs the image's binary and test-helm-cli (CI runs it after make test).
dist: deps $(BIN)/helm $(BIN)/cyclonedx-gomod
	VERSION=$(VERSION) COMMIT=$(COMMIT) LDFLAGS='$(LDFLAGS)' BUILD_TAGS='$(BUILD_TAGS)' IMAGE_FLAGS='$(IMAGE_FLAGS)' scripts/dist.sh

test-dist: dist test-helm-cli
	$(GOCHECK) test $(CHECKFLAGS) -count=1 -tags 'dist,$(INTEGRATION_TAGS)' -run '^TestReleaseArtifacts$$' -v -timeout 20m ./integration/

docker:
	docker build --build-arg VERSION=$(VERSION) --build-arg COMMIT=$(COMMIT) -t ctxc:$(VERSION) .

clean:
	rm -rf $(BIN) dist
