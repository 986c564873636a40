package kyvernotest

import (
	"context"
	"fmt"
	"strings"

	"github.com/verdict-policy/verdict/engine"
	"github.com/verdict-policy/verdict/engine/eval"
)

// lookup is the cluster data of the CLI: there is no cluster. As in
// Kyverno's CLI, configMap and imageRegistry context entries load nothing
// (their values come from the values file), apiCall entries load only the
// test's apiCallResponses mocks, and globalReference entries only the
// test's globalContextEntries mocks. Every other lookup returns an error
// wrapping engine.ErrNotFound.
type lookup struct {
	// calls is keyed by "METHOD:url" and "url" (an entry without method).
	calls map[string]APICallResponse
	// globals is keyed by GlobalContextEntry name.
	globals map[string]any
	// params are the test's paramResources (see extras.go).
	params []*Resource
	// objects are the cluster objects mutate targets and generate rules
	// read (see mutations.go).
	objects []*Resource
}

// key is the mock's key: "METHOD:url" with a method, "url" without (url
// or else urlPath).
func (c *APICallResponse) key() string {
	url := strings.TrimSpace(c.URL)
	if url == "" {
		url = strings.TrimSpace(c.URLPath)
	}
	if m := strings.ToUpper(strings.TrimSpace(c.Method)); m != "" {
		return m + ":" + url
	}
	return url
}

// newLookup serves the test's apiCallResponses and its globalContextEntries
// mocks resolved by runner.globalMocks.
func newLookup(calls []APICallResponse, globals map[string]any) *lookup {
	l := &lookup{globals: globals}
	for _, c := range calls {
		key := c.key()
		if l.calls == nil {
			l.calls = map[string]APICallResponse{}
		}
		l.calls[key] = c
	}
	return l
}

func (l *lookup) ConfigMap(_ context.Context, namespace, name string) (map[string]any, error) {
	return nil, fmt.Errorf("configMap %s/%s: no cluster in the CLI, give its values in the values file: %w", namespace, name, engine.ErrNotFound)
}

func (l *lookup) APICall(_ context.Context, call eval.APICall) (any, error) {
	url := call.URLPath
	if call.ServiceURL != "" {
		url = call.ServiceURL
	}
	method := strings.ToUpper(call.Method)
	if method == "" {
		method = "GET"
	}
	c, ok := l.calls[method+":"+url]
	if !ok {
		c, ok = l.calls[url]
	}
	if !ok {
		return nil, fmt.Errorf("apiCall %s %s: no apiCallResponses mock: %w", method, url, engine.ErrNotFound)
	}
	if sc := c.Response.StatusCode; sc != 0 && (sc < 200 || sc >= 300) {
		return nil, fmt.Errorf("apiCall %s %s: HTTP %d from apiCallResponses mock", method, url, sc)
	}
	return c.Response.Body, nil
}

// GlobalContext serves a globalReference entry from the mocks: name is
// "entry" or "entry.projection" (see globalMock).
func (l *lookup) GlobalContext(_ context.Context, name string) (any, error) {
	if v, ok, err := globalMock(l.globals, name); ok {
		if err != nil {
			return nil, fmt.Errorf("global context entry %s: %w", name, err)
		}
		return v, nil
	}
	return nil, fmt.Errorf("global context entry %s: no globalContextEntries mock: %w", name, engine.ErrNotFound)
}

// ImageData is undefined: Kyverno's CLI has no registry client, and its
// context loader factory then disables imageRegistry entries (the entry is
// not declared: `{{ entry.x || ” }}` gives ”), as eval.ErrUndefined does.
func (l *lookup) ImageData(_ context.Context, reference string) (any, error) {
	return nil, fmt.Errorf("image %s: registry access is off in the CLI: %w", reference, eval.ErrUndefined)
}
