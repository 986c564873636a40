// Package celtypes holds the pieces of CEL environments that both CEL
// evaluators of the engine declare the same way: Kubernetes' types of
// `request` and `namespaceObject`, the JSON form of the requester and the
// common part of the request's (RequestObject), and Kyverno's
// backward-compatible orValue. celrule (validate.cel rules of kyverno.io
// policies) and kyvernocel (the policies.kyverno.io kinds) build their
// environments with them; celrule and vpol their requests' JSON.
//
// It imports only cel-go and k8s.io/apiserver's CEL types: no admission
// plugin machinery, nothing of this module.
package celtypes
