module github.com/verdict-policy/verdict

go 1.26.0

require (
	github.com/blang/semver/v4 v4.0.0
	github.com/distribution/reference v0.6.0
	github.com/google/go-cmp v0.7.0
	github.com/kyverno/go-jmespath v0.4.1-0.20231124160150-95e59c162877
	github.com/spf13/cobra v1.10.2
	github.com/zach-klippenstein/goregen v0.0.0-20160303162051-795b5e3961ea
	go.yaml.in/yaml/v2 v2.4.3
	gopkg.in/inf.v0 v0.9.1
	k8s.io/apimachinery v0.36.3
	sigs.k8s.io/yaml v1.6.0
)

require (
	github.com/fxamacker/cbor/v2 v2.9.0 // indirect
	github.com/inconshreveable/mousetrap v1.1.0 // indirect
	github.com/opencontainers/go-digest v1.0.0 // indirect
	github.com/smartystreets/goconvey v1.8.1 // indirect
	github.com/spf13/pflag v1.0.9 // indirect
	github.com/x448/float16 v0.8.4 // indirect
	sigs.k8s.io/json v0.0.0-20250730193827-2d320260d730 // indirect
)
