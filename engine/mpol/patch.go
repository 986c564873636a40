package mpol

import (
	"context"
	gojson "encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strconv"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	"github.com/google/cel-go/common/types/traits"
	"google.golang.org/protobuf/types/known/structpb"
	jsonpatch "gopkg.in/evanphx/json-patch.v4"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	k8smutation "k8s.io/apiserver/pkg/cel/mutation"
	"k8s.io/apiserver/pkg/cel/mutation/dynamic"
	kjson "sigs.k8s.io/json"
	"sigs.k8s.io/structured-merge-diff/v6/typed"

	"github.com/verdict-policy/verdict/engine/kyvernocel"
	"github.com/verdict-policy/verdict/engine/vpol"
)

// The patch types of a mutation.
const (
	PatchTypeApplyConfiguration = "ApplyConfiguration"
	PatchTypeJSONPatch          = "JSONPatch"
)

// mutation is one compiled spec.mutations entry.
type mutation struct {
	patchType string
	path      string // of the expression, for errors
	prog      cel.Program
	// allowAtomic is evaluation.useServerSideApply: an
	// ApplyConfiguration may set atomic fields.
	allowAtomic bool
}

// apply evaluates the mutation on act (whose object is obj) and returns
// the patched object, as Kubernetes' patchers do (Kyverno uses them):
// obj itself is never modified. An ApplyConfiguration merges with the
// type types gives (nil: the built-in kinds').
func (m *mutation) apply(ctx context.Context, act *kyvernocel.Activation, obj map[string]any, types vpol.ApplyTypes) (map[string]any, error) {
	out, _, err := m.prog.ContextEval(ctx, act)
	if err != nil {
		return nil, err
	}
	if m.patchType == PatchTypeJSONPatch {
		return applyJSONPatch(out, obj)
	}
	typeOf := builtinType
	if types != nil {
		typeOf = types.TypeOf
	}
	return applyObject(out, obj, typeOf, m.allowAtomic)
}

// builtinType is the type of obj's kind among the built-in kinds
// (builtins.yaml).
func builtinType(obj map[string]any) (*typed.ParseableType, error) {
	ts, err := builtins()
	if err != nil {
		return nil, err
	}
	return ts.typeOf(gvkOf(obj))
}

// applyObject merges the Object of an ApplyConfiguration expression into
// obj, typed with typeOf, as Kubernetes' ApplyConfiguration patcher does:
// the Object's type names checked against its fields, the patch given
// obj's kind. Unless allowAtomic, a patch that sets atomic fields is
// refused.
func applyObject(out ref.Val, obj map[string]any, typeOf func(map[string]any) (*typed.ParseableType, error), allowAtomic bool) (map[string]any, error) {
	// The compiler checked that the expression is an Object.
	objVal, ok := out.(*dynamic.ObjectVal)
	if !ok {
		return nil, fmt.Errorf("unsupported return type from ApplyConfiguration expression: %v", out.Type())
	}
	if err := objVal.CheckTypeNamesMatchFieldPathNames(); err != nil {
		return nil, fmt.Errorf("type mismatch: %w", err)
	}
	patch, ok := objVal.Value().(map[string]any)
	if !ok {
		return nil, fmt.Errorf("invalid return type: %T", out)
	}
	u := unstructured.Unstructured{Object: patch}
	u.SetGroupVersionKind(gvkOf(obj))
	t, err := typeOf(obj)
	if err == nil {
		obj, err = mergeTyped(*t, obj, patch, allowAtomic)
	}
	if err != nil {
		return nil, fmt.Errorf("error applying patch: %w", err)
	}
	return obj, nil
}

// applyJSONPatch applies the JSONPatch values of a JSONPatch expression
// to obj as Kubernetes' JSON patcher does: the values become an RFC 6902
// patch, applied to obj's JSON; a test operation that fails leaves obj
// as it is.
func applyJSONPatch(out ref.Val, obj map[string]any) (map[string]any, error) {
	patch, err := jsonPatchOf(out)
	if err != nil {
		return nil, err
	}
	if len(patch) == 0 {
		return obj, nil // nothing to apply: the object is not re-encoded
	}
	doc, err := gojson.Marshal(obj)
	if err != nil {
		return nil, fmt.Errorf("failed to create JSON patch: %w", err)
	}
	patched, err := applyOps(patch, doc)
	if err != nil {
		if errors.Is(err, jsonpatch.ErrTestFailed) {
			return obj, nil
		}
		return nil, fmt.Errorf("JSON Patch: %w", err)
	}
	// Decoded as Kubernetes' JSON serializer decodes an unstructured
	// object: whole numbers are int64, and the object needs a kind.
	var res map[string]any
	if err := kjson.UnmarshalCaseSensitivePreserveInts(patched, &res); err != nil {
		//lint:ignore ST1005 Kubernetes' wording (apierrors.NewInternalError)
		return nil, fmt.Errorf("Internal error occurred: %w", err)
	}
	if kind, _ := res["kind"].(string); kind == "" {
		//lint:ignore ST1005 Kubernetes' wording (apierrors.NewInternalError)
		return nil, fmt.Errorf("Internal error occurred: %w", runtime.NewMissingKindErr(string(patched)))
	}
	return res, nil
}

// MaxJSONPatchCopyBytes bounds the bytes the copy operations of one
// JSONPatch mutation may add to the object (3 MiB: the API server's
// default JSONPatchMaxCopyBytes, which bounds the JSON patches of its
// mutating admission policies): a few copies of a part of the object into
// itself would otherwise double it each time. Past it the mutation is an
// error, worded as the JSON patch library words it.
const MaxJSONPatchCopyBytes = 3 << 20

// applyOps applies a patch to doc. A patch with copy operations is applied
// one operation at a time, so that what the copies add is counted
// against MaxJSONPatchCopyBytes (the library's own limit is a variable of
// the process).
func applyOps(patch jsonpatch.Patch, doc []byte) ([]byte, error) {
	return applyOpsWithin(patch, doc, MaxJSONPatchCopyBytes)
}

func applyOpsWithin(patch jsonpatch.Patch, doc []byte, limit int64) ([]byte, error) {
	isCopy := func(o jsonpatch.Operation) bool { return o.Kind() == "copy" }
	if !slices.ContainsFunc(patch, isCopy) {
		return patch.Apply(doc)
	}
	var copied int64
	for i, o := range patch {
		next, err := patch[i : i+1].Apply(doc)
		if err != nil {
			return nil, err
		}
		if isCopy(o) {
			copied += max(0, int64(len(next)-len(doc)))
			if copied > limit {
				return nil, jsonpatch.NewAccumulatedCopySizeError(limit, copied)
			}
		}
		doc = next
	}
	return doc, nil
}

// jsonPatchOf converts the list of JSONPatch values of an expression into
// a JSON patch, as Kubernetes' JSON patcher does.
func jsonPatchOf(out ref.Val) (jsonpatch.Patch, error) {
	list, ok := out.(traits.Lister)
	if !ok {
		return nil, fmt.Errorf("type mismatch: JSONPatchType.expression should evaluate to array")
	}
	var patch jsonpatch.Patch
	for it := list.Iterator(); it.HasNext() == types.True; {
		native, err := it.Next().ConvertToNative(reflect.TypeFor[*k8smutation.JSONPatchVal]())
		if err != nil {
			return nil, fmt.Errorf("type mismatch: JSONPatchType.expression should evaluate to array of JSONPatch: %w", err)
		}
		op, ok := native.(*k8smutation.JSONPatchVal)
		if !ok {
			return nil, fmt.Errorf("type mismatch: JSONPatchType.expression should evaluate to array of JSONPatch, got element of %T", native)
		}
		o := jsonpatch.Operation{"op": rawString(op.Op), "path": rawString(op.Path)}
		if op.From != "" {
			o["from"] = rawString(op.From)
		}
		if op.Val != nil {
			v, err := jsonValue(op.Val)
			if err != nil {
				return nil, err
			}
			o["value"] = v
		}
		patch = append(patch, o)
	}
	return patch, nil
}

// jsonValue is the JSON of a JSONPatch value: any CEL value that converts
// to a protobuf Value (an Object literal's type names checked first).
func jsonValue(v ref.Val) (*gojson.RawMessage, error) {
	if objVal, ok := v.(*dynamic.ObjectVal); ok {
		if err := objVal.CheckTypeNamesMatchFieldPathNames(); err != nil {
			return nil, fmt.Errorf("type mismatch: %w", err)
		}
	}
	pb, err := v.ConvertToNative(reflect.TypeFor[*structpb.Value]())
	if err != nil {
		return nil, fmt.Errorf("JSONPath valueExpression evaluated to a type that could not marshal to JSON: %w", err)
	}
	b, err := gojson.Marshal(pb)
	if err != nil {
		return nil, fmt.Errorf("JSONPath valueExpression evaluated to a type that could not marshal to JSON: %w", err)
	}
	raw := gojson.RawMessage(b)
	return &raw, nil
}

func rawString(s string) *gojson.RawMessage {
	raw := gojson.RawMessage(strconv.Quote(s))
	return &raw
}
