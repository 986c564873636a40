# Verdict: build, test and check.
#
#   make run          verdict apply on the example policies and resources
#   make test         unit, corpus and CLI tests
#   make conformance  the kyverno/policies corpus against the committed baseline

GO          ?= go
BIN         ?= bin/verdict
CORPUS      ?= ../shared/conformance/kyverno-policies
BASELINE    ?= conformance/baseline.txt
STATICCHECK ?= honnef.co/go/tools/cmd/staticcheck@v0.8.2
BENCHTIME   ?= 1s

.PHONY: all build test run conformance conformance-update bench lint fuzz clean

all: build

build:
	$(GO) build -o $(BIN) ./cmd/verdict

# The examples hold violations on purpose: exit code 1 (policy failures) is
# the expected outcome; 2 (an error) is not.
run: build
	@$(BIN) apply examples/policies --resource examples/resources; rc=$$?; [ $$rc -le 1 ]

test:
	$(GO) test ./...

conformance:
	$(GO) run ./hack/conformance -corpus $(CORPUS) -baseline $(BASELINE)

conformance-update:
	$(GO) run ./hack/conformance -corpus $(CORPUS) -baseline $(BASELINE) -update

bench:
	$(GO) test -run '^$$' -bench . -benchmem -benchtime $(BENCHTIME) ./engine/...

lint:
	@out=$$(gofmt -l $$(git ls-files '*.go' | grep -v '\.pb\.go$$')); \
	  if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	$(GO) run $(STATICCHECK) ./...

fuzz:
	$(GO) test -run '^$$' -fuzz FuzzValidate -fuzztime 30s ./engine/pattern
	$(GO) test -run '^$$' -fuzz FuzzRender -fuzztime 30s ./engine/variables

clean:
	rm -rf bin
