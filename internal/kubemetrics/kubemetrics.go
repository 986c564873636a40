package kubemetrics

import (
	"net/http"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/client-go/rest"

	"github.com/verdict-policy/verdict/internal/promreg"
)

// DefaultMaxSeries is the default cap of New: the triples of client type,
// resource and namespace with a series of their own.
const DefaultMaxSeries = 20000

// Queries counts API requests. A nil *Queries counts nothing.
type Queries struct {
	queries  *prometheus.CounterVec
	overflow prometheus.Counter
	cap      *promreg.SeriesCap
}

// New registers kyverno_client_queries_total on reg. At most maxSeries
// (DefaultMaxSeries when not positive) triples of client type, resource
// and namespace have their own series; the requests of the others are
// counted with resource_kind and resource_namespace promreg.Overflow, and
// in verdict_client_queries_label_overflow_total. A path that names no
// resource (discovery, /version) is not counted, as Kyverno's clients
// count resource calls only.
func New(reg prometheus.Registerer, maxSeries int) (*Queries, error) {
	if maxSeries <= 0 {
		maxSeries = DefaultMaxSeries
	}
	b := promreg.New(reg)
	q := &Queries{
		queries:  b.Kyverno().CounterVec("kyverno_client_queries_total", "Requests to the Kubernetes API server, as Kyverno's kyverno_client_queries (resource_kind is the resource, as Kyverno's dynamic client names it).", "operation", "client_type", "resource_kind", "resource_namespace"),
		overflow: b.Counter("verdict_client_queries_label_overflow_total", "API requests counted in kyverno_client_queries_total with resource_kind and resource_namespace \""+promreg.Overflow+"\", past the cap on their series."),
		cap:      promreg.NewSeriesCap(maxSeries),
	}
	return q, b.Err()
}

// Wrap makes the clients built from cfg count their requests in q.
func (q *Queries) Wrap(cfg *rest.Config) {
	if q == nil || cfg == nil {
		return
	}
	cfg.Wrap(func(next http.RoundTripper) http.RoundTripper { return roundTripper{q: q, next: next} })
}

type roundTripper struct {
	q    *Queries
	next http.RoundTripper
}

func (rt roundTripper) RoundTrip(req *http.Request) (*http.Response, error) {
	rt.q.count(req.Method, req.URL.Path, req.URL.Query().Get("watch"))
	return rt.next.RoundTrip(req)
}

func (q *Queries) count(method, path, watch string) {
	c, ok := Classify(method, path, watch)
	if !ok {
		return
	}
	if !q.cap.Admit(c.ClientType + "/" + c.Resource + "/" + c.Namespace) {
		c.Resource, c.Namespace = promreg.Overflow, promreg.Overflow
		q.overflow.Inc()
	}
	q.queries.WithLabelValues(c.Operation, c.ClientType, c.Resource, c.Namespace).Inc()
}

// Call is what Classify reads of a request: Kyverno's labels.
type Call struct {
	// Operation is Kyverno's ClientQueryOperation: create, get, list,
	// update, update_status, delete, delete_collection, watch, patch.
	Operation string
	// ClientType is kyverno for the kyverno.io and policies.kyverno.io
	// groups, policyreport for wgpolicyk8s.io and openreports.io, dynamic
	// for the others (Verdict reads them with dynamic clients and
	// informers).
	ClientType string
	// Resource is the resource (pods, clusterpolicies), Namespace its
	// namespace ("" for a cluster-scoped call).
	Resource, Namespace string
}

// Classify reads a request to the API server: the method, the URL path
// and its watch parameter. ok is false for a path that names no resource.
func Classify(method, path, watch string) (c Call, ok bool) {
	parts := strings.Split(strings.Trim(path, "/"), "/")
	var group string
	switch {
	case len(parts) >= 3 && parts[0] == "api":
		parts = parts[2:] // api/v1
	case len(parts) >= 4 && parts[0] == "apis":
		group, parts = parts[1], parts[3:] // apis/group/version
	default:
		return Call{}, false
	}
	// namespaces/NS/RESOURCE...; namespaces/NAME alone is a Namespace.
	if len(parts) >= 3 && parts[0] == "namespaces" {
		c.Namespace, parts = parts[1], parts[2:]
	}
	c.Resource = parts[0]
	name, sub := "", ""
	if len(parts) > 1 {
		name = parts[1]
	}
	if len(parts) > 2 {
		sub = parts[2]
	}
	switch method {
	case http.MethodGet:
		switch {
		case name != "":
			c.Operation = "get"
		case watch == "true" || watch == "1":
			c.Operation = "watch"
		default:
			c.Operation = "list"
		}
	case http.MethodPost:
		c.Operation = "create"
	case http.MethodPut:
		c.Operation = "update"
		if sub == "status" {
			c.Operation = "update_status"
		}
	case http.MethodPatch:
		c.Operation = "patch"
	case http.MethodDelete:
		c.Operation = "delete"
		if name == "" {
			c.Operation = "delete_collection"
		}
	default:
		return Call{}, false
	}
	switch group {
	case "kyverno.io", "policies.kyverno.io":
		c.ClientType = "kyverno"
	case "wgpolicyk8s.io", "openreports.io":
		c.ClientType = "policyreport"
	default:
		c.ClientType = "dynamic"
	}
	return c, true
}
