// Package ivpol reads, compiles and evaluates Kyverno's
// ImageValidatingPolicy and NamespacedImageValidatingPolicy
// (policies.kyverno.io), with the results of Kyverno v1.19
// (pkg/image/verification/evaluator, pkg/cel/libs/imageverify).
//
// Read first: Document (types.go); Policies (decode.go), whose Decode
// and DecodePolicy read the documents, strict against the CRD schemas as
// engine/vpol decodes its kinds (an unknown field is an *engine.Error
// with Code engine.CodeDecode and the field path); Compile and Policy
// (compile.go); Policy.Evaluate and Policy.DigestPatches (eval.go),
// which take the request as engine/vpol prepares it (vpol.Input).
//
// # Compilation
//
// Compile compiles every expression once, in the policy's image CEL
// environment (kyvernocel.NewImageEnv: the ValidatingPolicies'
// environment with images, attestors, attestations and the functions
// verifyImageSignatures, verifyAttestationSignatures, extractPayload and
// getImageData): match conditions, matchImageReferences (globs with
// github.com/gobwas/glob as Kyverno, or bool expressions of `ref`),
// spec.images (lists of strings), variables, the attestors' expressions,
// validations and audit annotations. It refuses an attestor that names no
// way to verify (a cosign attestor without key, keyless identities or
// certificate; a keyless identity without subject or issuer; a notary
// attestor without certificates), an attestation without intoto or
// referrer type, and what the CRD requires; every problem is reported
// with its path (engine.Errors, Code engine.CodeInvalidPolicy).
// A policy on Pods gets the autogen variants for pod controllers of
// Kyverno's ivpol autogen (autogen.go: matchConstraints for the
// controllers, the whole spec rewritten for the pod template), each
// evaluated as a policy of its own with the policy's name; the paths of
// their fields start with "autogen[<configuration>]".
//
// spec.credentials is not read: the registry credentials are the host's
// (its Verifier's), as are the registries it may reach.
//
// # Evaluation
//
// Evaluate follows Kyverno's ivpol engine: matchConstraints (Kubernetes
// mode), match conditions (errors skip the policy with failurePolicy
// Ignore), policies.kyverno.io PolicyExceptions (an exception that
// matches gives vpol.ExceptionResult), the images of the default
// extractors (containers, initContainers, ephemeralContainers of Pods,
// pod templates and CronJobs) and of spec.images, filtered by
// matchImageReferences; verifyDigest fails an image without a digest;
// then the validations, the first false one failing with its message.
// The image functions reach the registry only through the host's
// Verifier (ImageDigest, VerifyAttestor): a digest that does not resolve
// is an error ("failed to get imagedata"), an attestor that does not
// verify is not counted, an attestor the host cannot check
// (ErrAttestorUnsupported) is an error rather than an unverified image.
// A cosign attestor verifies in-toto attestations, a notary one the OCI
// referrers of a referrer attestation's type (AttestorCheck.ReferrerType);
// extractPayload returns the payload of an attestation verified in the
// same evaluation (Kyverno reads an unverified referrer's). EnforceRequired applies validationConfigurations.
// required with the Verifications of the request. DigestPatches returns
// mutateDigest's JSON Patch (replace each matched image without a digest
// by image@digest).
//
// # Limits
//
// Every expression has Kubernetes' runtime cost limit
// (kyvernocel.CostLimit); one evaluation makes at most MaxVerifierCalls
// (256) calls to the Verifier, the one past it an error naming the limit.
//
// The package does no I/O and must not import client-go, grpc,
// engine/policy or engine/eval.
package ivpol
