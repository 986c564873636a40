// Package kyvernocel is Kyverno's CEL environment for the policies.kyverno.io
// kinds (ValidatingPolicy, MutatingPolicy and GeneratingPolicy; the other
// kinds share it),
// with Kyverno's CEL libraries from github.com/kyverno/sdk, whose data
// sources the host supplies.
//
// Read first: NewEnv (the environment of one policy, as Kyverno's
// createBaseVpolEnv builds it: Kubernetes' base environment, Kyverno's
// options and the sdk libraries; Env.Compile checks the output type as
// Kyverno does), NewMutatingEnv (the same with what Kyverno's mpol
// compiler adds: Kubernetes' Object and JSONPatch types, ObjectType and
// JSONPatchType, and jsonpatch.escapeKey), NewImageEnv (the same with
// what Kyverno's ivpol compiler adds: images, attestors, attestations and
// the image verification functions, which the parser rewrites into calls
// on the evaluation's Activation.ImageFunctions; image.go), NewGeneratingEnv (the same with
// the sdk's generator library, whose generator.Apply calls go to the
// Activation's generator, Activation.SetGenerator), Activation (the variables of one evaluation), Variables
// (variables.go: the lazy `variables` map) and Sources (data.go: the
// interfaces the libraries read through).
//
// # Variables
//
// `variables` behaves as in Kyverno, where it is Kubernetes' lazy.MapValue
// (which the other kinds use through NewVariables and BindVariable):
// each variable is evaluated when an expression first reads it, at most
// once per evaluation, and a key is unescaped (apiservercel.Unescape)
// before the lookup. Variables does the same from the names resolved when
// the policy compiles (VariableNames), unescaping only the keys that can
// hold an escape sequence ("__"), where lazy.MapValue runs a regular
// expression at every lookup; a variable that reads its own name is an
// error instead of an endless recursion. An Activation and its Variables
// can be Reset and reused by the next evaluation.
//
// # Data sources
//
// The sdk libraries bind their data source when the environment is built
// (Kyverno passes one process-wide context). Here the environment binds
// sources that answer ErrNoDataSource, and each evaluation's Activation
// supplies the host's Sources (Resources, HTTP, ImageData,
// GlobalContext), with the evaluation's context.Context (the Libraries of
// a request, made when an expression first reads one of them): a compiled
// policy is shared by evaluations with different hosts, and the engine
// does no I/O of its own. time.now() reads the Activation's clock (a macro
// rewrites it), not the process's. The calls of a policy's expressions
// carry the policy in their context (Activation.SetPolicy,
// CallingPolicy), so that a host can answer by policy (the decision
// server refuses http.* in namespaced policies, as Kyverno does).
//
// # Limits
//
// Every program has Kubernetes' per-expression cost limit (CostLimit,
// 1,000,000), from the base environment, as in Kyverno: each variable,
// match condition and validation is a program run of its own, with its
// own cost tracker and its own interrupt setup on the evaluation's
// context (cel-go's ContextEval; a tracker shared by the runs of an
// evaluation would make the limit one per evaluation). The environments
// shared by the policies of a namespace are kept for at most
// maxSharedEnvs (64) namespaces and kinds of environment (about 240 KB
// each, kept for the process's lifetime, and anyone who may send inline
// policies chooses the namespaces); past it, each policy builds its own,
// which it then holds. A policy without variables compiles in the shared
// environment itself; the first variable of a policy extends it with the
// policy's own `variables` type. A shared environment remembers the
// answers of its libraries' type providers by type name (memoProvider, at
// most MaxMemoTypeNames names): cel-go's provider for the libraries' Go
// types asks the one below it twice for a name it does not know, so that
// with the libraries stacked each such lookup of the checker (every prefix
// of a qualified identifier) cost 2^libraries lookups.
//
// The package depends on cel-go, k8s.io/apiserver's CEL packages,
// apimachinery and the sdk's libraries (which import no client-go); it
// must not import client-go, grpc or other engine packages.
package kyvernocel
