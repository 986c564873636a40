package kyvernocel

import (
	"errors"
	"fmt"
	"reflect"

	"github.com/google/cel-go/cel"
	celast "github.com/google/cel-go/common/ast"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
)

// The variables of an ImageValidatingPolicy's expressions (NewImageEnv),
// as Kyverno's ivpol compiler declares them.
const (
	// VarImages is `images`: the images of the resource by extractor
	// name (containers, initContainers, ephemeralContainers and the
	// policy's spec.images), those matchImageReferences selects.
	VarImages = "images"
	// VarAttestors is `attestors`: the policy's attestors by name.
	VarAttestors = "attestors"
	// VarAttestations is `attestations`: the policy's attestation names
	// by name.
	VarAttestations = "attestations"
	// varImageFuncs holds the evaluation's ImageFunctions: the image
	// verification calls are rewritten into calls on it (imageMacros).
	varImageFuncs = "verdict_image_verify"
)

// The image verification functions of Kyverno's kyverno.imageverify
// library.
const (
	FuncVerifyImageSignatures       = "verifyImageSignatures"
	FuncVerifyAttestationSignatures = "verifyAttestationSignatures"
	FuncExtractPayload              = "extractPayload"
	FuncGetImageData                = "getImageData"
)

// ErrNoImageFunctions is the error of an image verification call in an
// evaluation without ImageFunctions.
var ErrNoImageFunctions = errors.New("image verification is not configured")

// ImageFunctions answers the image verification functions of one
// evaluation of an ImageValidatingPolicy (the engine's ivpol package
// implements it with the host's verifier). attestors are the values of
// `attestors` the expression passed (maps with at least "name").
type ImageFunctions interface {
	// VerifyImageSignatures returns how many of attestors verified the
	// signatures of image.
	VerifyImageSignatures(image string, attestors []any) (int64, error)
	// VerifyAttestationSignatures returns how many of attestors verified
	// the attestation (a name of `attestations`) of image.
	VerifyAttestationSignatures(image, attestation string, attestors []any) (int64, error)
	// ExtractPayload returns the payload of a verified attestation.
	ExtractPayload(image, attestation string) (any, error)
	// GetImageData returns the registry data of image.
	GetImageData(image string) (any, error)
}

var imageFuncsType = types.NewOpaqueType("verdict.imageverify")

// imageFuncsVal is the value of varImageFuncs.
type imageFuncsVal struct{ f ImageFunctions }

func (v imageFuncsVal) ConvertToNative(reflect.Type) (any, error) {
	return nil, errors.New("image verification functions have no native form")
}
func (v imageFuncsVal) ConvertToType(t ref.Type) ref.Val {
	if t == imageFuncsType {
		return v
	}
	return types.NewErr("type conversion error from %s to %s", imageFuncsType, t)
}
func (v imageFuncsVal) Equal(other ref.Val) ref.Val { return types.Bool(false) }
func (v imageFuncsVal) Type() ref.Type              { return imageFuncsType }
func (v imageFuncsVal) Value() any                  { return v.f }

// imageEnvOptions are the declarations NewImageEnv adds: Kyverno's ivpol
// variables and the kyverno.imageverify functions, which the parser
// rewrites into member calls on the evaluation's ImageFunctions (so that a
// compiled program reaches the verifier of each evaluation).
func imageEnvOptions() []cel.EnvOption {
	macro := func(fn string, argc int) cel.Macro {
		return cel.GlobalMacro(fn, argc, func(eh cel.MacroExprFactory, _ celast.Expr, args []celast.Expr) (celast.Expr, *cel.Error) {
			return eh.NewMemberCall(fn, eh.NewIdent(varImageFuncs), args...), nil
		})
	}
	list := cel.ListType(cel.DynType)
	return []cel.EnvOption{
		cel.Variable(VarImages, cel.MapType(cel.StringType, cel.ListType(cel.StringType))),
		cel.Variable(VarAttestors, cel.MapType(cel.StringType, cel.DynType)),
		cel.Variable(VarAttestations, cel.MapType(cel.StringType, cel.StringType)),
		cel.Variable(varImageFuncs, imageFuncsType),
		cel.Function(FuncVerifyImageSignatures, cel.MemberOverload("verdict_verify_image_signatures",
			[]*cel.Type{imageFuncsType, cel.StringType, list}, cel.IntType,
			imageCall(1, func(f ImageFunctions, s []string, rest []ref.Val) (any, error) {
				return f.VerifyImageSignatures(s[0], nativeList(rest[0]))
			}))),
		cel.Function(FuncVerifyAttestationSignatures, cel.MemberOverload("verdict_verify_attestation_signatures",
			[]*cel.Type{imageFuncsType, cel.StringType, cel.StringType, list}, cel.IntType,
			imageCall(2, func(f ImageFunctions, s []string, rest []ref.Val) (any, error) {
				return f.VerifyAttestationSignatures(s[0], s[1], nativeList(rest[0]))
			}))),
		cel.Function(FuncExtractPayload, cel.MemberOverload("verdict_extract_payload",
			[]*cel.Type{imageFuncsType, cel.StringType, cel.StringType}, cel.DynType,
			imageCall(2, func(f ImageFunctions, s []string, _ []ref.Val) (any, error) {
				return f.ExtractPayload(s[0], s[1])
			}))),
		cel.Function(FuncGetImageData, cel.MemberOverload("verdict_get_image_data",
			[]*cel.Type{imageFuncsType, cel.StringType}, cel.DynType,
			imageCall(1, func(f ImageFunctions, s []string, _ []ref.Val) (any, error) {
				return f.GetImageData(s[0])
			}))),
		cel.Macros(
			macro(FuncVerifyImageSignatures, 2),
			macro(FuncVerifyAttestationSignatures, 3),
			macro(FuncExtractPayload, 2),
			macro(FuncGetImageData, 1),
		),
	}
}

// imageCall binds an overload whose arguments are the evaluation's
// ImageFunctions, n strings, then the rest; what call returns is converted
// to its CEL value, an error to a CEL error.
func imageCall(n int, call func(f ImageFunctions, s []string, rest []ref.Val) (any, error)) cel.OverloadOpt {
	return cel.FunctionBinding(func(args ...ref.Val) ref.Val {
		f, err := imageFuncs(args[0])
		if err != nil {
			return types.WrapErr(err)
		}
		s := make([]string, n)
		for i := range s {
			if s[i], err = nativeString(args[1+i]); err != nil {
				return types.WrapErr(err)
			}
		}
		out, err := call(f, s, args[1+n:])
		if err != nil {
			return types.WrapErr(err)
		}
		return types.DefaultTypeAdapter.NativeToValue(out)
	})
}

func imageFuncs(v ref.Val) (ImageFunctions, error) {
	iv, ok := v.(imageFuncsVal)
	if !ok || iv.f == nil {
		return nil, ErrNoImageFunctions
	}
	return iv.f, nil
}

func nativeString(v ref.Val) (string, error) {
	s, ok := v.(types.String)
	if !ok {
		return "", fmt.Errorf("expected a string, got %s", v.Type().TypeName())
	}
	return string(s), nil
}

// nativeList returns the elements of a CEL list as their Go values.
func nativeList(v ref.Val) []any {
	l, ok := v.(interface {
		Size() ref.Val
		Get(ref.Val) ref.Val
	})
	if !ok {
		return nil
	}
	n, _ := l.Size().(types.Int)
	out := make([]any, 0, n)
	for i := types.Int(0); i < n; i++ {
		e := l.Get(i)
		if m, err := e.ConvertToNative(reflect.TypeFor[map[string]any]()); err == nil {
			out = append(out, m)
			continue
		}
		out = append(out, e.Value())
	}
	return out
}
