package grpccodec

import (
	"fmt"

	"google.golang.org/grpc"
	"google.golang.org/grpc/encoding"
	_ "google.golang.org/grpc/encoding/proto" // registers the fallback codec
	"google.golang.org/grpc/mem"
)

// Name is the codec's name: the content-subtype "proto", as gRPC's default
// codec, so peers see no difference on the wire.
const Name = "proto"

// vtMessage is what protoc-gen-go-vtproto generates.
type vtMessage interface {
	SizeVT() int
	MarshalToSizedBufferVT(data []byte) (int, error)
	UnmarshalVTUnsafe(data []byte) error
}

// Codec marshals vtproto messages with their generated methods and
// everything else with gRPC's default proto codec. It unmarshals with the
// generated methods only when the peer is trusted (see New).
type Codec struct {
	fallback encoding.CodecV2
	fast     bool
}

// New returns the codec. With trustPeer, messages from the peer are
// unmarshalled by the generated methods, which, unlike protobuf-go, do
// not check that strings are valid UTF-8: clients trust their server's
// answers, which are built from strings the server checked. A server
// (trustPeer false) decodes requests with protobuf-go, which rejects
// invalid UTF-8 as before; it still marshals its answers with the
// generated methods.
func New(trustPeer bool) *Codec {
	return &Codec{fallback: encoding.GetCodecV2(Name), fast: trustPeer}
}

// Name implements encoding.CodecV2.
func (c *Codec) Name() string { return Name }

// Marshal implements encoding.CodecV2: the message's bytes in one buffer,
// from gRPC's buffer pool when large enough for pooling.
func (c *Codec) Marshal(v any) (mem.BufferSlice, error) {
	m, ok := v.(vtMessage)
	if !ok {
		return c.fallback.Marshal(v)
	}
	size := m.SizeVT()
	if mem.IsBelowBufferPoolingThreshold(size) {
		buf := make([]byte, size)
		if _, err := m.MarshalToSizedBufferVT(buf); err != nil {
			return nil, fmt.Errorf("marshal %T: %w", v, err)
		}
		return mem.BufferSlice{mem.SliceBuffer(buf)}, nil
	}
	pool := mem.DefaultBufferPool()
	buf := pool.Get(size)
	if _, err := m.MarshalToSizedBufferVT((*buf)[:size]); err != nil {
		pool.Put(buf)
		return nil, fmt.Errorf("marshal %T: %w", v, err)
	}
	return mem.BufferSlice{mem.NewBuffer(buf, pool)}, nil
}

// Unmarshal implements encoding.CodecV2. As proto.Unmarshal, it replaces
// the message's content (the generated code alone would merge into it).
// The decoded strings and bytes share a copy of the message's bytes, never
// gRPC's buffer, which gRPC reuses. Bytes the generated code refuses (a field with an unexpected wire type,
// which protobuf-go keeps as an unknown field) are decoded again by
// protobuf-go, whose result stands.
func (c *Codec) Unmarshal(data mem.BufferSlice, v any) error {
	m, ok := v.(vtMessage)
	if !ok || !c.fast {
		return c.fallback.Unmarshal(data, v)
	}
	r, ok := v.(interface{ Reset() })
	if !ok {
		return c.fallback.Unmarshal(data, v)
	}
	r.Reset()
	// One private copy of the message, which the decoded strings and
	// bytes alias instead of each being copied (gRPC's buffers return to
	// its pool): one allocation for the message instead of one per
	// string. The copy lives as long as any of them.
	buf := data.Materialize()
	if err := m.UnmarshalVTUnsafe(buf); err != nil {
		r.Reset()
		return c.fallback.Unmarshal(data, v)
	}
	return nil
}

// ServerOption makes a gRPC server use the codec for every call: answers
// marshalled by the generated methods, requests checked by protobuf-go.
func ServerOption() grpc.ServerOption {
	return grpc.ForceServerCodecV2(New(false))
}

// DialOption makes the calls of a connection use the codec, trusting the
// server's answers.
func DialOption() grpc.DialOption {
	return grpc.WithDefaultCallOptions(grpc.ForceCodecV2(New(true)))
}
