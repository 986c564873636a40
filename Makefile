# Verdict: build, test and check.
#
#   make run          verdict run: the decision server on 127.0.0.1:50051 with examples/policies
#   make test         unit, corpus and CLI tests
#   make conformance  the kyverno/policies corpus against the committed baseline
#   make conformance-kyverno  Kyverno's own CLI test suites (test/cli of its Go module) against theirs
#   make e2e          end-to-end tests with a real kube-apiserver and etcd (docs/e2e.md)
#   make bench-peer   Verdict and Kyverno side by side: admission, and with PEER_FLAGS='-only scan' a background scan (hack/peer)
#   make image        the container image (Dockerfile), when a docker daemon answers
#   make crds         deploy/crds from Kyverno's published CRDs (hack/crdgen)
#   make chart        the Helm chart's templates derived from deploy/base (hack/chartgen)
#   make helm-lint    helm lint of deploy/helm/verdict with each values file

GO          ?= go
BIN         ?= bin/verdict
CORPUS      ?= ../shared/conformance/kyverno-policies
BASELINE    ?= conformance/baseline.txt
# Kyverno's own CLI test suites: test/cli of the Go module github.com/kyverno/kyverno at
# this version, downloaded from the module proxy (it is not a dependency of the project).
KYVERNO_VERSION        ?= v1.19.0
KYVERNO_CLI_BASELINE   ?= conformance/kyverno-cli-baseline.txt
STATICCHECK ?= honnef.co/go/tools/cmd/staticcheck@v0.8.2
BENCHTIME   ?= 1s

# API code generation (make proto) and checks (make lint): buf and the protoc
# plugins come from the Go module proxy at these versions, installed into a
# folder per version set.
BUF_VERSION                ?= v1.75.0
PROTOC_GEN_GO_VERSION      ?= v1.36.12
PROTOC_GEN_GO_GRPC_VERSION ?= v1.6.2
PROTOC_GEN_GO_VTPROTO_VERSION ?= v0.6.0
PROTO_TOOLS ?= bin/tools/buf-$(BUF_VERSION)_go-$(PROTOC_GEN_GO_VERSION)_grpc-$(PROTOC_GEN_GO_GRPC_VERSION)_vtproto-$(PROTOC_GEN_GO_VTPROTO_VERSION)
BUF         ?= $(PROTO_TOOLS)/buf
# buf breaking compares the API with this git revision.
BUF_AGAINST ?= HEAD~1

# Helm, built from the Go module proxy at this version (the version of
# deploy/helm/go.mod) with the Kubernetes version of its k8s.io modules as
# its default, as Helm's own build sets it.
HELM_VERSION ?= v3.21.4
HELM_KUBE_MINOR ?= 36
HELM        ?= bin/tools/helm-$(HELM_VERSION)/helm
HELM_LDFLAGS = -X helm.sh/helm/v3/pkg/chartutil.k8sVersionMajor=1 -X helm.sh/helm/v3/pkg/chartutil.k8sVersionMinor=$(HELM_KUBE_MINOR) \
	-X helm.sh/helm/v3/pkg/lint/rules.k8sVersionMajor=1 -X helm.sh/helm/v3/pkg/lint/rules.k8sVersionMinor=$(HELM_KUBE_MINOR) \
	-X helm.sh/helm/v3/internal/version.version=$(HELM_VERSION)
CHART       ?= deploy/helm/verdict

.PHONY: image crds chart helm helm-lint helm-test all build test run conformance conformance-update conformance-kyverno conformance-kyverno-update bench lint lint-proto proto fuzz fuzz-seeds fuzz-hostile mergeschema e2e e2e-bins bench-peer clean

all: build

# The version verdict version and the image carry: git describe of the
# checkout (Go records no VCS information under -buildvcs=false).
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo devel)

build:
	$(GO) build -ldflags "-X main.version=$(VERSION)" -o $(BIN) ./cmd/verdict

# The decision server with the example policies, on loopback, until Ctrl-C.
run: build
	@$(BIN) run

# The verdict module, then the Helm chart's tests (a module of its own,
# deploy/helm, so that verdict does not depend on Helm): helm lint and the
# chart rendered in process with each values file.
test: helm-test
	$(GO) test ./...

helm-test:
	cd deploy/helm && $(GO) test ./...

conformance:
	$(GO) run ./hack/conformance -corpus $(CORPUS) -baseline $(BASELINE)

conformance-update:
	$(GO) run ./hack/conformance -corpus $(CORPUS) -baseline $(BASELINE) -update

kyverno-cli-dir = $$($(GO) mod download -json github.com/kyverno/kyverno@$(KYVERNO_VERSION) | sed -n 's/.*"Dir": "\(.*\)".*/\1/p')

conformance-kyverno:
	@dir=$(kyverno-cli-dir); test -n "$$dir" || { echo "cannot download github.com/kyverno/kyverno@$(KYVERNO_VERSION)" >&2; exit 1; }; \
	echo "$(GO) run ./hack/conformance -corpus $$dir/test/cli -baseline $(KYVERNO_CLI_BASELINE)"; \
	$(GO) run ./hack/conformance -corpus $$dir/test/cli -baseline $(KYVERNO_CLI_BASELINE)

conformance-kyverno-update:
	@dir=$(kyverno-cli-dir); test -n "$$dir" || { echo "cannot download github.com/kyverno/kyverno@$(KYVERNO_VERSION)" >&2; exit 1; }; \
	$(GO) run ./hack/conformance -corpus $$dir/test/cli -baseline $(KYVERNO_CLI_BASELINE) -update

bench:
	$(GO) test -run '^$$' -bench . -benchmem -benchtime $(BENCHTIME) ./engine/...

lint: lint-proto
	@out=$$(gofmt -l $$(git ls-files '*.go' | grep -v '\.pb\.go$$')); \
	  if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	$(GO) run $(STATICCHECK) ./...

proto: $(PROTO_TOOLS)/.installed
	PATH="$(abspath $(PROTO_TOOLS)):$$PATH" $(BUF) generate

# buf breaking is skipped while BUF_AGAINST has no buf.yaml (the API's first
# commit).
lint-proto: $(PROTO_TOOLS)/.installed
	$(BUF) lint
	@if git cat-file -e '$(BUF_AGAINST):buf.yaml' 2>/dev/null; then \
	  echo "$(BUF) breaking --against '.git#ref=$(BUF_AGAINST)'"; \
	  $(BUF) breaking --against '.git#ref=$(BUF_AGAINST)'; \
	else echo "buf breaking: $(BUF_AGAINST) has no buf.yaml, skipped"; fi

$(PROTO_TOOLS)/.installed:
	GOBIN="$(abspath $(PROTO_TOOLS))" $(GO) install github.com/bufbuild/buf/cmd/buf@$(BUF_VERSION)
	GOBIN="$(abspath $(PROTO_TOOLS))" $(GO) install google.golang.org/protobuf/cmd/protoc-gen-go@$(PROTOC_GEN_GO_VERSION)
	GOBIN="$(abspath $(PROTO_TOOLS))" $(GO) install google.golang.org/grpc/cmd/protoc-gen-go-grpc@$(PROTOC_GEN_GO_GRPC_VERSION)
	GOBIN="$(abspath $(PROTO_TOOLS))" $(GO) install github.com/planetscale/vtprotobuf/cmd/protoc-gen-go-vtproto@$(PROTOC_GEN_GO_VTPROTO_VERSION)
	touch $@

# The list merge keys of strategic merge patches, from the Kubernetes schema
# kustomize embeds (a separate module, so the engine does not depend on it).
mergeschema:
	cd hack/mergeschema && $(GO) run . -o ../../engine/mutate/schema_table.go

# End-to-end tests against a real kube-apiserver and etcd on loopback (not part
# of make test; .ci/run runs them after it). Both are built from the Go module proxy by separate modules in
# hack/e2e into E2E_BIN (git-ignored): about 6 minutes cold on 2 cores, then
# cached; make e2e-bins -B rebuilds them.
E2E_BIN ?= bin/e2e

e2e-bins: $(E2E_BIN)/kube-apiserver $(E2E_BIN)/etcd

$(E2E_BIN)/kube-apiserver: hack/e2e/apiserver/go.mod hack/e2e/apiserver/go.sum hack/e2e/apiserver/main.go
	cd hack/e2e/apiserver && $(GO) build -trimpath -o $(abspath $@) .

$(E2E_BIN)/etcd: hack/e2e/etcd/go.mod hack/e2e/etcd/go.sum hack/e2e/etcd/main.go
	cd hack/e2e/etcd && $(GO) build -trimpath -o $(abspath $@) .

# The packages with e2e tests (files with the build tag e2e), tested one at
# a time: each test starts its own etcd and kube-apiserver.
E2E_PKGS = $(shell grep -rl --include='*_test.go' '^//go:build e2e' --exclude-dir=hack . | xargs -n1 dirname | sort -u)

e2e: e2e-bins $(HELM)
	VERDICT_E2E_BIN=$(abspath $(E2E_BIN)) VERDICT_HELM=$(abspath $(HELM)) $(GO) test -tags e2e -count=1 -p 1 $(E2E_PKGS)

# Verdict and Kyverno v1.19.0 side by side on the e2e apiserver (hack/peer,
# its own module: Verdict never depends on Kyverno): the admission
# controller against verdict serve + webhook, and (PEER_FLAGS='-only scan')
# the reports controller's background scan against verdict scan + reports.
# Kyverno's binaries are built from the module cache into bin/peer, niced
# (32 minutes cold on the 2 shared cores at load average 16; about 2
# minutes for the second one once the build cache is warm).
KYVERNO_VERSION      ?= v1.19.0
PEER_KYVERNO         ?= bin/peer/kyverno-$(KYVERNO_VERSION)
PEER_KYVERNO_REPORTS ?= bin/peer/reports-controller-$(KYVERNO_VERSION)
PEER_FLAGS           ?=

bin/peer/kyverno-$(KYVERNO_VERSION): KYVERNO_CMD = kyverno
bin/peer/reports-controller-$(KYVERNO_VERSION): KYVERNO_CMD = reports-controller
bin/peer/kyverno-$(KYVERNO_VERSION) bin/peer/reports-controller-$(KYVERNO_VERSION):
	$(GO) mod download github.com/kyverno/kyverno@$(KYVERNO_VERSION)
	mkdir -p $(dir $@)
	cd $$($(GO) env GOMODCACHE)/github.com/kyverno/kyverno@$(KYVERNO_VERSION) && \
	  nice -n 10 $(GO) build -trimpath -o $(abspath $@) ./cmd/$(KYVERNO_CMD)

bench-peer: build e2e-bins $(PEER_KYVERNO) $(PEER_KYVERNO_REPORTS)
	cd hack/peer && $(GO) run . -kyverno $(abspath $(PEER_KYVERNO)) -kyverno-reports $(abspath $(PEER_KYVERNO_REPORTS)) -verdict $(abspath $(BIN)) -e2e-bin $(abspath $(E2E_BIN)) $(PEER_FLAGS)

# Every fuzz target of the module (hack/fuzz.sh finds them by their func
# Fuzz lines, so a new one needs no listing here), each for FUZZTIME.
# fuzz-seeds runs each on its seed corpus only (.ci/run does).
FUZZTIME ?= 30s

fuzz:
	GO=$(GO) hack/fuzz.sh fuzz $(FUZZTIME)

fuzz-seeds:
	GO=$(GO) hack/fuzz.sh seeds

# The fuzz targets of hostile inputs (issue: no policy or file takes a
# process down): the JMESPath parser guard and the report store opener.
# Their seed corpora run in make test; .ci/run also fuzzes each briefly
# (make fuzz runs them too, with the same flags).
# The minimize time is short: with the default, the fuzzer spends its time
# minimizing large inputs (a store file, a deep expression).
FUZZTIME_HOSTILE ?= 60s
FUZZ_HOSTILE = \
	$(GO) test -run '^$$' -fuzz FuzzParseGuard -fuzztime $(FUZZTIME_HOSTILE) -fuzzminimizetime 5s -parallel 1 ./engine/jmespath && \
	$(GO) test -run '^$$' -fuzz FuzzOpen -fuzztime $(FUZZTIME_HOSTILE) -fuzzminimizetime 2s ./reportwriter/boltstore && \
	$(GO) test -run '^$$' -fuzz FuzzCheck -fuzztime $(FUZZTIME_HOSTILE) -fuzzminimizetime 2s ./engine/manifests

fuzz-hostile:
	$(FUZZ_HOSTILE)

# The container image: a static binary with the version from git, on
# gcr.io/distroless/static:nonroot. Skipped, with a message, when no docker
# daemon answers.
IMAGE   ?= ghcr.io/verdict-policy/verdict

image:
	@if docker info >/dev/null 2>&1; then \
	  echo "docker build -t $(IMAGE):$(VERSION) --build-arg VERSION=$(VERSION) ."; \
	  docker build -t $(IMAGE):$(VERSION) --build-arg VERSION=$(VERSION) .; \
	else echo "make image: no docker daemon answers (docker info failed), image not built"; fi


helm: $(HELM)

$(HELM):
	GOBIN="$(abspath $(dir $(HELM)))" $(GO) install -ldflags "$(HELM_LDFLAGS)" helm.sh/helm/v3/cmd/helm@$(HELM_VERSION)

helm-lint: $(HELM)
	$(HELM) lint --strict $(CHART)
	$(HELM) lint --strict $(CHART) -f $(CHART)/values-ha.yaml
	$(HELM) lint --strict $(CHART) -f $(CHART)/values-dev.yaml

# The chart's CRDs, RBAC and NetworkPolicies from deploy/base.
chart:
	$(GO) run ./hack/chartgen

# The CRDs of deploy/crds, from Kyverno's published files (CRD_SCHEMAS,
# CRD_POLICY_SCHEMAS for the policies.kyverno.io kinds and
# CRD_OPENREPORTS_SCHEMAS for the openreports.io ones).
CRD_SCHEMAS ?= ../shared/kyverno-docs/crds/schemas
CRD_POLICY_SCHEMAS ?= ../shared/kyverno-docs/crds/schemas-policies.kyverno.io
CRD_OPENREPORTS_SCHEMAS ?= ../shared/kyverno-docs/crds/openreports.io

crds:
	$(GO) run ./hack/crdgen -schemas $(CRD_SCHEMAS) -policies-schemas $(CRD_POLICY_SCHEMAS) -openreports-schemas $(CRD_OPENREPORTS_SCHEMAS) -out deploy/crds

clean:
	rm -rf bin
