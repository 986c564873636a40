package grpccodec

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/mem"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/testing/protocmp"
	"google.golang.org/protobuf/types/known/timestamppb"

	verdictv1 "github.com/verdict-policy/verdict/proto/verdict/v1"
)

// messages are representative messages of the services; the stream
// response has n results.
func messages(n int) map[string]proto.Message {
	results := make([]*verdictv1.RuleResult, 0, 30)
	for i := range 30 {
		results = append(results, &verdictv1.RuleResult{
			Policy: "disallow-privilege-escalation", Rule: "privilege-escalation", Type: verdictv1.RuleType_RULE_TYPE_VALIDATION,
			Result: verdictv1.Result(i%4 + 1), Message: "validation rule 'privilege-escalation' passed.",
			Category: "Pod Security Standards (Restricted)", Severity: "medium", Scored: i%2 == 0,
			Properties: map[string]string{"process": "background scan"},
		})
	}
	resp := &verdictv1.EvaluateResponse{Allowed: false, Message: "denied", Results: results, Warnings: []string{"w"}, JsonPatch: []byte(`[{"op":"add"}]`),
		Policies: []*verdictv1.PolicyVersion{{Kind: "ClusterPolicy", Name: "p", ContentHash: "abc", Background: true}}}
	stream := &verdictv1.EvaluateStreamResponse{}
	for i := range n {
		stream.Results = append(stream.Results, &verdictv1.EvaluateStreamResult{Id: fmt.Sprint(i), Outcome: &verdictv1.EvaluateStreamResult_Response{Response: resp}})
	}
	return map[string]proto.Message{
		"empty request":   &verdictv1.EvaluateRequest{},
		"request":         &verdictv1.EvaluateRequest{Object: []byte(`{"kind":"Pod","metadata":{"name":"é"}}`), Operation: verdictv1.Operation_OPERATION_CREATE, NamespaceLabels: map[string]string{"a": "b"}},
		"response":        resp,
		"stream response": stream,
		"publish": &verdictv1.PublishRequest{Items: []*verdictv1.PublishItem{{Item: &verdictv1.PublishItem_Evaluation{Evaluation: &verdictv1.ResourceEvaluation{
			Resource: &verdictv1.ObjectReference{Kind: "Pod", Name: "web"}, Time: timestamppb.Now(), Results: results}}}}},
		"health (fallback)": &grpc_health_v1.HealthCheckResponse{Status: grpc_health_v1.HealthCheckResponse_SERVING},
	}
}

// TestCodecRoundTrip checks that the codec writes protobuf-go's bytes (the
// wire format is the same; field order may differ, so each side decodes
// the other's bytes) and reads them back into equal messages.
//
// Neither side's decoded messages may point into the buffer gRPC hands to
// Unmarshal: clients decode from a private copy, servers with protobuf-go,
// which copies (the server decodes request objects sharing their bytes,
// server.decodeObject).
func TestCodecRoundTrip(t *testing.T) {
	for _, trust := range []bool{true, false} {
		for name, m := range messages(500) {
			t.Run(fmt.Sprintf("%s/trustPeer=%v", name, trust), func(t *testing.T) {
				testRoundTrip(t, New(trust), m)
			})
		}
	}
}

func testRoundTrip(t *testing.T, c *Codec, m proto.Message) {
	data, err := c.Marshal(m)
	if err != nil {
		t.Fatalf("Marshal() = %v", err)
	}
	b := data.Materialize()
	data.Free()
	if got, want := len(b), proto.Size(m); got != want {
		t.Errorf("Marshal() = %d bytes, want %d (proto.Size)", got, want)
	}
	viaProto := m.ProtoReflect().New().Interface()
	if err := proto.Unmarshal(b, viaProto); err != nil {
		t.Fatalf("proto.Unmarshal(codec bytes) = %v", err)
	}
	if !proto.Equal(m, viaProto) {
		t.Errorf("proto.Unmarshal(codec bytes) differs from the message (proto.Equal)")
	}
	pb, err := proto.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	viaCodec := m.ProtoReflect().New().Interface()
	if err := c.Unmarshal(mem.BufferSlice{mem.SliceBuffer(pb)}, viaCodec); err != nil {
		t.Fatalf("Unmarshal(proto bytes) = %v", err)
	}
	if !proto.Equal(m, viaCodec) {
		t.Errorf("Unmarshal(proto bytes) differs from the message (proto.Equal)")
	}
	// gRPC reuses the buffers it hands to Unmarshal: the message
	// must not point into them.
	for i := range pb {
		pb[i] = 0xff
	}
	if !proto.Equal(m, viaCodec) {
		t.Errorf("Unmarshal(proto bytes) changed when its input buffer was overwritten: it aliases gRPC's buffer")
	}
}

// TestCodecReplaces checks that Unmarshal replaces what the message held,
// as proto.Unmarshal does, instead of merging into it.
func TestCodecReplaces(t *testing.T) {
	c := New(true)
	m := &verdictv1.EvaluateResponse{Message: "old", Warnings: []string{"old"}}
	b, _ := proto.Marshal(&verdictv1.EvaluateResponse{Warnings: []string{"new"}})
	if err := c.Unmarshal(mem.BufferSlice{mem.SliceBuffer(b)}, m); err != nil {
		t.Fatal(err)
	}
	want := &verdictv1.EvaluateResponse{Warnings: []string{"new"}}
	if diff := cmp.Diff(want, m, protocmp.Transform()); diff != "" {
		t.Errorf("Unmarshal() into a used message (-want +got):\n%s", diff)
	}
}

// TestCodecErrors checks that what is not a message, and bytes that are
// not one, are errors.
func TestCodecErrors(t *testing.T) {
	for _, trusted := range []bool{true, false} {
		c := New(trusted)
		if _, err := c.Marshal("not a message"); err == nil {
			t.Errorf("New(%v).Marshal(string) error = nil, want an error", trusted)
		}
		if err := c.Unmarshal(mem.BufferSlice{mem.SliceBuffer([]byte{0x0a, 0x05, 'a'})}, &verdictv1.EvaluateRequest{}); err == nil {
			t.Errorf("New(%v).Unmarshal(truncated) error = nil, want an error", trusted)
		}
	}
	// A server checks the strings of requests, as protobuf-go does.
	bad := []byte{0x22, 0x02, 0xff, 0xfe} // field 4 (namespace), invalid UTF-8
	if err := proto.Unmarshal(bad, &verdictv1.EvaluateRequest{}); err == nil {
		t.Fatalf("proto.Unmarshal(invalid UTF-8) error = nil; the test's bytes are wrong")
	}
	if err := New(false).Unmarshal(mem.BufferSlice{mem.SliceBuffer(bad)}, &verdictv1.EvaluateRequest{}); err == nil {
		t.Errorf("New(false).Unmarshal(invalid UTF-8) error = nil, want protobuf-go's error")
	}
}

// FuzzCodec decodes random bytes with the codecs and with proto.Unmarshal:
// a server's codec gives proto.Unmarshal's outcome; a client's gives
// proto.Unmarshal's message whenever proto.Unmarshal succeeds (it may also
// accept strings that are not UTF-8, which protobuf-go refuses).
//
//	go test ./internal/grpccodec -run '^$' -fuzz FuzzCodec -fuzztime 60s
func FuzzCodec(f *testing.F) {
	for _, m := range messages(2) {
		b, _ := proto.Marshal(m)
		f.Add(b)
	}
	client, server := New(true), New(false)
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, m := range []proto.Message{&verdictv1.EvaluateRequest{}, &verdictv1.EvaluateResponse{}, &verdictv1.EvaluateStreamResponse{}, &verdictv1.PublishRequest{}} {
			want := m.ProtoReflect().New().Interface()
			wantErr := proto.Unmarshal(b, want)
			for _, c := range []*Codec{client, server} {
				got := m.ProtoReflect().New().Interface()
				gotErr := c.Unmarshal(mem.BufferSlice{mem.SliceBuffer(b)}, got)
				if wantErr != nil {
					if !c.fast && gotErr == nil {
						t.Fatalf("New(false).Unmarshal(%x) into %T error = nil, proto.Unmarshal error = %v", b, m, wantErr)
					}
					continue
				}
				if gotErr != nil {
					t.Fatalf("New(%v).Unmarshal(%x) into %T error = %v, proto.Unmarshal error = nil", c.fast, b, m, gotErr)
				}
				// proto.Equal: cmp.Diff takes minutes on the messages of
				// hundreds of thousands of empty elements the fuzzer makes.
				// Unknown fields are not compared: their bytes may differ
				// (a tag written with a redundant varint byte is kept as
				// is by protobuf-go, re-encoded by the generated code), and
				// nothing reads them.
				discardUnknown(want.ProtoReflect())
				discardUnknown(got.ProtoReflect())
				if !proto.Equal(want, got) {
					t.Fatalf("New(%v).Unmarshal(%x) into %T = %v, proto.Unmarshal gives %v", c.fast, b, m, got, want)
				}
			}
		}
	})
}

// discardUnknown drops the unknown fields of m and of every message in it.
func discardUnknown(m protoreflect.Message) {
	m.SetUnknown(nil)
	m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		switch {
		case fd.IsList() && fd.Message() != nil:
			l := v.List()
			for i := range l.Len() {
				discardUnknown(l.Get(i).Message())
			}
		case fd.IsMap() && fd.MapValue().Message() != nil:
			v.Map().Range(func(_ protoreflect.MapKey, mv protoreflect.Value) bool {
				discardUnknown(mv.Message())
				return true
			})
		case fd.Message() != nil && !fd.IsList() && !fd.IsMap():
			discardUnknown(v.Message())
		}
		return true
	})
}

// BenchmarkCodec marshals and unmarshals a 30-result EvaluateResponse and
// a 500-item EvaluateStreamResponse with the codec and with gRPC's default
// proto codec.
//
//	go test ./internal/grpccodec -run '^$' -bench Codec -benchmem
func BenchmarkCodec(b *testing.B) {
	msgs := messages(500)
	codecs := []struct {
		name  string
		codec interface {
			Marshal(any) (mem.BufferSlice, error)
			Unmarshal(mem.BufferSlice, any) error
		}
	}{{"vtproto", New(true)}, {"proto", New(true).fallback}}
	for _, name := range []string{"response", "stream response"} {
		m := msgs[name]
		for _, c := range codecs {
			b.Run(name+"/marshal/"+c.name, func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					data, err := c.codec.Marshal(m)
					if err != nil {
						b.Fatal(err)
					}
					data.Free()
				}
			})
			data, _ := c.codec.Marshal(m)
			raw := data.Materialize()
			b.Run(name+"/unmarshal/"+c.name, func(b *testing.B) {
				b.ReportAllocs()
				b.SetBytes(int64(len(raw)))
				for b.Loop() {
					out := m.ProtoReflect().New().Interface()
					if err := c.codec.Unmarshal(mem.BufferSlice{mem.SliceBuffer(raw)}, out); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
