package leader

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"

	"github.com/verdict-policy/verdict/internal/options"
	"github.com/verdict-policy/verdict/internal/shard"
	verdictv1 "github.com/verdict-policy/verdict/proto/verdict/v1"
	"github.com/verdict-policy/verdict/reportwriter"
)

// Defaults of Options: client-go's leader election timing as Kyverno
// configures it.
const (
	DefaultLeaseDuration = 15 * time.Second
	DefaultRenewDeadline = 10 * time.Second
	DefaultRetryPeriod   = 2 * time.Second
)

// serviceAccountNamespace is the file of the pod's namespace.
const serviceAccountNamespace = "/var/run/secrets/kubernetes.io/serviceaccount/namespace"

// ErrLost is returned by Run when the Lease was lost: another replica may
// lead the shard now, so this one stopped without writing anything.
var ErrLost = errors.New("lost the lease of the report shard")

// Options configure a Replica.
type Options struct {
	// Client takes and renews the Lease (coordination.k8s.io). Required.
	Client kubernetes.Interface
	// Shard is the shard of namespaces the writer owns. Default: 0/1.
	Shard shard.Shard
	// LeaseNamespace is the namespace of the shard's Lease. Default: the
	// pod's namespace when InCluster, else "default".
	LeaseNamespace string
	InCluster      bool
	// LeaseName is the name of the shard's Lease. Default:
	// verdict-reports-I-of-N.
	LeaseName string
	// Identity is this replica in the Lease. Default: the host name and a
	// random suffix.
	Identity string
	// LeaseDuration is how long a standby waits after the last renewal
	// before it takes the Lease; RenewDeadline how long the leader retries
	// renewing before it gives the shard up; RetryPeriod how often
	// acquisition and renewal are tried. Defaults 15s, 10s and 2s.
	LeaseDuration, RenewDeadline, RetryPeriod time.Duration
	// Open opens the shard's writer once this replica leads (its store
	// and the writer on it) and returns the function that closes the
	// store after the writer. Required.
	Open func() (*reportwriter.Writer, func(context.Context) error, error)
	// Serving is told when the writer starts serving (true) and stops
	// (false), for the health service. Optional.
	Serving func(bool)
	// Logger receives the replica's logs. Default: discard.
	Logger *slog.Logger
}

func (o Options) withDefaults() Options {
	o.Shard = o.Shard.Normal()
	if o.LeaseNamespace == "" {
		o.LeaseNamespace = "default"
		if b, err := os.ReadFile(serviceAccountNamespace); err == nil && o.InCluster {
			o.LeaseNamespace = strings.TrimSpace(string(b))
		}
	}
	if o.LeaseName == "" {
		o.LeaseName = fmt.Sprintf("verdict-reports-%d-of-%d", o.Shard.Index, o.Shard.Count)
	}
	if o.Identity == "" {
		host, _ := os.Hostname()
		var b [4]byte
		rand.Read(b[:])
		o.Identity = host + "_" + hex.EncodeToString(b[:])
	}
	options.Positive(&o.LeaseDuration, DefaultLeaseDuration)
	options.Positive(&o.RenewDeadline, DefaultRenewDeadline)
	options.Positive(&o.RetryPeriod, DefaultRetryPeriod)
	if o.Serving == nil {
		o.Serving = func(bool) {}
	}
	o.Logger = cmp.Or(o.Logger, slog.New(slog.DiscardHandler))
	return o
}

// Replica is one replica of the report writer of a shard: it serves the
// writer (ReportService) only while it holds the shard's Lease.
type Replica struct {
	opts  Options
	gate  *gate
	elect *leaderelection.LeaderElector

	mu       sync.Mutex
	writer   *reportwriter.Writer
	close    func(context.Context) error
	err      error // Open's
	stopping bool
	lost     chan struct{}
	failed   context.CancelFunc // ends the election when Open fails
}

// New prepares a replica; Run runs it.
func New(opts Options) (*Replica, error) {
	if opts.Client == nil || opts.Open == nil {
		return nil, errors.New("leader: Client and Open are required")
	}
	o := opts.withDefaults()
	r := &Replica{opts: o, gate: &gate{shard: o.Shard.String()}, lost: make(chan struct{})}
	var err error
	r.elect, err = leaderelection.NewLeaderElector(leaderelection.LeaderElectionConfig{
		Lock: &resourcelock.LeaseLock{
			LeaseMeta:  metav1.ObjectMeta{Namespace: o.LeaseNamespace, Name: o.LeaseName},
			Client:     o.Client.CoordinationV1(),
			LockConfig: resourcelock.ResourceLockConfig{Identity: o.Identity},
		},
		LeaseDuration:   o.LeaseDuration,
		RenewDeadline:   o.RenewDeadline,
		RetryPeriod:     o.RetryPeriod,
		ReleaseOnCancel: true,
		Name:            o.LeaseName,
		Callbacks: leaderelection.LeaderCallbacks{
			OnStartedLeading: func(context.Context) { r.lead() },
			OnStoppedLeading: func() { close(r.lost) },
		},
	})
	if err != nil {
		return nil, fmt.Errorf("lease: %w", err)
	}
	return r, nil
}

// ReportService is the service to register on the replica's gRPC server:
// the writer while this replica leads, UNAVAILABLE otherwise, so that
// publishers retry (on the leader, once the standby is out of the
// Service's endpoints).
func (r *Replica) ReportService() verdictv1.ReportServiceServer { return r.gate }

// Lease names the shard's Lease and this replica in it, for logs.
func (r *Replica) Lease() (namespace, name, identity string) {
	return r.opts.LeaseNamespace, r.opts.LeaseName, r.opts.Identity
}

// lead opens the writer once this replica leads.
func (r *Replica) lead() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.stopping {
		return
	}
	log := r.opts.Logger
	log.Info("leading report shard", "shard", r.gate.shard, "lease", r.opts.LeaseNamespace+"/"+r.opts.LeaseName, "identity", r.opts.Identity)
	w, closeStore, err := r.opts.Open()
	if err != nil {
		r.err = err
		r.failed()
		return
	}
	r.writer, r.close = w, closeStore
	r.gate.w.Store(w)
	r.opts.Serving(true)
	log.Info("report writer serving", "shard", r.gate.shard, "reports", len(w.Reports("", "")))
}

// Server is the gRPC server the replica's ReportService is registered on
// (*grpc.Server).
type Server interface {
	GracefulStop()
	Stop()
}

// Run takes part in the election until ctx ends or the Lease is lost.
// When ctx ends, a leader stops serving, drains the writer's streams,
// stops srv gracefully (at once after timeout), writes what the writer
// holds within timeout, and then gives the Lease up. When the Lease is
// lost, Run stops serving and srv at once and returns ErrLost (or the
// error of Open, which ends the election).
func (r *Replica) Run(ctx context.Context, srv Server, timeout time.Duration) error {
	ectx, cancel := context.WithCancel(context.Background())
	defer cancel()
	r.failed = cancel
	done := make(chan struct{})
	go func() { defer close(done); r.elect.Run(ectx) }()
	select {
	case <-ctx.Done():
	case <-r.lost:
		r.mu.Lock()
		defer r.mu.Unlock()
		r.stopping = true
		r.gate.w.Store(nil)
		r.opts.Serving(false)
		srv.Stop()
		if r.err != nil {
			return r.err
		}
		return fmt.Errorf("%w %s", ErrLost, r.gate.shard)
	}
	// Stop serving, write what the writer holds while still leading, then
	// give the Lease up.
	r.mu.Lock()
	r.stopping = true
	w, closeStore := r.writer, r.close
	r.mu.Unlock()
	r.opts.Serving(false)
	if w != nil {
		w.Drain()
	}
	stopped := make(chan struct{})
	go func() { srv.GracefulStop(); close(stopped) }()
	select {
	case <-stopped:
	case <-time.After(timeout):
		srv.Stop()
	}
	r.gate.w.Store(nil)
	var err error
	if w != nil {
		cctx, ccancel := context.WithTimeout(context.Background(), timeout)
		defer ccancel()
		err = errors.Join(w.Close(cctx), closeStore(cctx))
	}
	cancel()
	<-done
	return err
}

// gate serves the ReportService of the writer while the replica leads the
// shard, and UNAVAILABLE otherwise.
type gate struct {
	verdictv1.UnimplementedReportServiceServer
	shard string
	w     atomic.Pointer[reportwriter.Writer]
}

func (g *gate) writer() (*reportwriter.Writer, error) {
	if w := g.w.Load(); w != nil {
		return w, nil
	}
	return nil, status.Errorf(codes.Unavailable, "not the leader of report shard %s", g.shard)
}

func (g *gate) Publish(st verdictv1.ReportService_PublishServer) error {
	w, err := g.writer()
	if err != nil {
		return err
	}
	return w.Publish(st)
}

func (g *gate) ListReports(ctx context.Context, req *verdictv1.ListReportsRequest) (*verdictv1.ListReportsResponse, error) {
	w, err := g.writer()
	if err != nil {
		return nil, err
	}
	return w.ListReports(ctx, req)
}

func (g *gate) GetReport(ctx context.Context, req *verdictv1.GetReportRequest) (*verdictv1.GetReportResponse, error) {
	w, err := g.writer()
	if err != nil {
		return nil, err
	}
	return w.GetReport(ctx, req)
}
