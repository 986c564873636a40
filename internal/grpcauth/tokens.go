package grpcauth

import (
	"context"
	"crypto/subtle"
	"errors"

	"github.com/grpc-ecosystem/go-grpc-middleware/v2/interceptors"
	"github.com/grpc-ecosystem/go-grpc-middleware/v2/interceptors/auth"
	"github.com/grpc-ecosystem/go-grpc-middleware/v2/interceptors/selector"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"
)

// Tokens are the bearer tokens a service accepts in the
// "authorization: bearer <token>" metadata of every call except health
// checks; other calls fail with UNAUTHENTICATED.
type Tokens struct {
	tokens [][]byte
}

// NewTokens returns the tokens; an empty one is an error.
func NewTokens(tokens []string) (*Tokens, error) {
	t := &Tokens{}
	for _, tok := range tokens {
		if tok == "" {
			return nil, errors.New("empty bearer token")
		}
		t.tokens = append(t.tokens, []byte(tok))
	}
	return t, nil
}

// Authenticate accepts a call whose metadata carries one of the tokens
// (compared in constant time).
func (t *Tokens) Authenticate(ctx context.Context) (context.Context, error) {
	tok, err := auth.AuthFromMD(ctx, "bearer")
	if err != nil {
		return nil, err
	}
	for _, want := range t.tokens {
		if subtle.ConstantTimeCompare([]byte(tok), want) == 1 {
			return ctx, nil
		}
	}
	return nil, status.Error(codes.Unauthenticated, "invalid bearer token")
}

// notHealth selects every call but those of the health service.
var notHealth = selector.MatchFunc(func(_ context.Context, c interceptors.CallMeta) bool {
	return c.Service != healthpb.Health_ServiceDesc.ServiceName
})

// Unary is the interceptor that authenticates unary calls.
func (t *Tokens) Unary() grpc.UnaryServerInterceptor {
	return selector.UnaryServerInterceptor(auth.UnaryServerInterceptor(t.Authenticate), notHealth)
}

// Stream is the interceptor that authenticates streams.
func (t *Tokens) Stream() grpc.StreamServerInterceptor {
	return selector.StreamServerInterceptor(auth.StreamServerInterceptor(t.Authenticate), notHealth)
}
