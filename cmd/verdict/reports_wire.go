package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/pflag"
	"google.golang.org/grpc"

	"github.com/verdict-policy/verdict/client"
	verdictv1 "github.com/verdict-policy/verdict/proto/verdict/v1"
	"github.com/verdict-policy/verdict/publish"
	"github.com/verdict-policy/verdict/reportwriter"
	"github.com/verdict-policy/verdict/reportwriter/boltstore"
	"github.com/verdict-policy/verdict/server"
)

// reportFlags connect a decision server to a report writer: a remote one
// (verdict serve --report-writer) or one in the same process (verdict run).
type reportFlags struct {
	writer         string // --report-writer ADDR
	db             string // --reports-db FILE (run)
	embedded       bool   // run: the writer lives in the process
	noReports      bool   // run: --no-reports
	shards         int    // --report-shards N (serve)
	policyInterval time.Duration
	buffer         int             // --report-buffer
	conn           writerConnFlags // serve: --report-writer-tls, ...
}

// registerBuffer adds --report-buffer.
func (r *reportFlags) registerBuffer(fs *pflag.FlagSet) {
	fs.IntVar(&r.buffer, "report-buffer", publish.DefaultBuffer, "the most evaluations waiting for the report writer (the one queue between this server and the writer); when it is full, evaluations are dropped and counted in verdict_results_dropped_total")
}

func (r *reportFlags) registerServe(fs *pflag.FlagSet) {
	fs.StringVar(&r.writer, "report-writer", "", "send every evaluation to this report writer (host:port of verdict reports serve; with --report-shards, an address with {shard}, such as verdict-reports-{shard}.verdict-reports.verdict.svc:50052)")
	fs.IntVar(&r.shards, "report-shards", 1, "number of report writer shards: each evaluation goes to the writer of its namespace's shard, {shard} of --report-writer")
	fs.DurationVar(&r.policyInterval, "report-policy-interval", publish.DefaultPolicyInterval, "how often the report writer is told which policies are in use")
	r.registerBuffer(fs)
	r.conn.register(fs, "")
}

// writerConnFlags are a publisher's flags for its connection to the
// report writer: the client side of verdict reports serve's --tls-cert,
// --client-ca and --token-file.
type writerConnFlags struct {
	tls                                              bool
	caFile, certFile, keyFile, serverName, tokenFile string
}

// register adds the --report-writer-* flags; note is appended to the help
// of --report-writer-tls, the first of them.
func (c *writerConnFlags) register(fs *pflag.FlagSet, note string) {
	fs.BoolVar(&c.tls, "report-writer-tls", false, "connect to the report writer with TLS, checking it against the system's CAs (implied by --report-writer-ca-file, --report-writer-cert-file)"+note)
	fs.StringVar(&c.caFile, "report-writer-ca-file", "", "CA certificates (PEM) that sign the report writer's certificate")
	fs.StringVar(&c.certFile, "report-writer-cert-file", "", "client certificate (PEM) for a report writer that requires one (--client-ca: mTLS)")
	fs.StringVar(&c.keyFile, "report-writer-key-file", "", "key of --report-writer-cert-file (PEM)")
	fs.StringVar(&c.serverName, "report-writer-server-name", "", "name expected in the report writer's certificate (default: the host of --report-writer)")
	fs.StringVar(&c.tokenFile, "report-writer-token-file", "", "file holding the bearer token the report writer accepts (its --token-file); only over TLS, or to a writer on this machine")
}

// set reports whether any --report-writer-* connection flag was given.
func (c *writerConnFlags) set() bool {
	return c.tls || c.caFile != "" || c.certFile != "" || c.keyFile != "" || c.serverName != "" || c.tokenFile != ""
}

// clientOptions are the client options of the connection to the writer
// at addr. A token travels in plain text only to a writer on this
// machine.
func (c *writerConnFlags) clientOptions(addr string) (client.Options, error) {
	var o client.Options
	if c.tls || c.caFile != "" || c.certFile != "" || c.keyFile != "" || c.serverName != "" {
		cfg, err := client.TLSConfig(c.caFile, c.certFile, c.keyFile, c.serverName)
		if err != nil {
			return o, fmt.Errorf("--report-writer-*: %w", err)
		}
		o.TLS = cfg
	}
	if c.tokenFile != "" {
		b, err := os.ReadFile(c.tokenFile)
		if err != nil {
			return o, fmt.Errorf("--report-writer-token-file: %w", err)
		}
		if o.BearerToken = strings.TrimSpace(string(b)); o.BearerToken == "" {
			return o, fmt.Errorf("--report-writer-token-file %s: no token", c.tokenFile)
		}
	}
	o.AllowInsecureToken = loopback(addr)
	if err := checkWriterToken(addr, o); err != nil {
		return o, err
	}
	return o, nil
}

// checkWriterToken refuses to send a bearer token in plain text to a
// report writer on another machine.
func checkWriterToken(addr string, o client.Options) error {
	if o.BearerToken != "" && o.TLS == nil && !loopback(addr) {
		return fmt.Errorf("a bearer token for the report writer %s needs TLS: add --report-writer-tls or --report-writer-ca-file", addr)
	}
	return nil
}

func (r *reportFlags) registerRun(fs *pflag.FlagSet) {
	r.embedded = true
	fs.StringVar(&r.db, "reports-db", defaultReportsDB(), "the report writer's bbolt file")
	fs.BoolVar(&r.noReports, "no-reports", false, "run without the report writer")
	fs.DurationVar(&r.policyInterval, "report-policy-interval", publish.DefaultPolicyInterval, "how often the report writer is told which policies are in use")
	r.registerBuffer(fs)
}

// defaultReportsDB is $XDG_STATE_HOME/verdict/reports.db, or
// ~/.local/state/verdict/reports.db.
func defaultReportsDB() string {
	dir := os.Getenv("XDG_STATE_HOME")
	if dir == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return "verdict-reports.db"
		}
		dir = filepath.Join(home, ".local", "state")
	}
	return filepath.Join(dir, "verdict", "reports.db")
}

// reportWiring is a report writer connected to a decision server.
type reportWiring struct {
	flags      *reportFlags
	log        *slog.Logger
	store      *boltstore.Store
	writer     *reportwriter.Writer
	pub        publish.Sink // the queue to the writer: local (run) or remote (serve)
	closeConns func()       // closes the connections of a remote writer
	stop       context.CancelFunc
	done       chan struct{}
}

// setup creates the writer (run) or connects to it (serve
// --report-writer), and makes the queue to it the server's Reports. It
// returns nil when reports are off.
func (r *reportFlags) setup(opts *server.Options) (*reportWiring, error) {
	w := &reportWiring{flags: r, log: opts.Logger, done: make(chan struct{})}
	popts := publish.Options{Buffer: r.buffer, Logger: opts.Logger, Registry: opts.Registry}
	switch {
	case r.embedded && !r.noReports:
		if err := os.MkdirAll(filepath.Dir(r.db), 0o755); err != nil {
			return nil, fmt.Errorf("--reports-db: %w", err)
		}
		st, err := boltstore.Open(r.db, boltstore.Options{})
		if err != nil {
			return nil, fmt.Errorf("--reports-db: %w", err)
		}
		rw, err := reportwriter.New(reportwriter.Options{Store: st, Logger: opts.Logger, Registry: opts.Registry})
		if err != nil {
			st.Close()
			return nil, err
		}
		p, err := publish.NewLocal(writerApplier{rw}, popts)
		if err != nil {
			rw.Close(context.Background())
			st.Close()
			return nil, err
		}
		w.store, w.writer, w.pub = st, rw, p
	case r.writer != "":
		p, closeConns, err := dialReportWriters(r.writer, r.shards, r.conn.clientOptions, popts)
		if err != nil {
			return nil, err
		}
		w.pub, w.closeConns = p, closeConns
	default:
		return nil, nil
	}
	opts.Reports = w.pub
	return w, nil
}

// dialReportWriters connects to the report writers of the address
// template (publish.ShardAddresses) with the client options optsFor gives
// for each address, and starts a publisher per shard. The function
// returned closes the connections, after the publisher.
func dialReportWriters(template string, shards int, optsFor func(addr string) (client.Options, error), popts publish.Options) (*publish.Sharded, func(), error) {
	addrs, err := publish.ShardAddresses(template, shards)
	if err != nil {
		return nil, nil, fmt.Errorf("--report-writer: %w", err)
	}
	var clients []*client.Client
	closeConns := func() {
		for _, c := range clients {
			c.Close()
		}
	}
	var conns []grpc.ClientConnInterface
	for _, a := range addrs {
		copts, err := optsFor(a)
		if err != nil {
			closeConns()
			return nil, nil, err
		}
		// The writer reports no health for the decision service, which
		// the client checks by default.
		copts.DisableHealthCheck = true
		c, err := client.Dial(a, copts)
		if err != nil {
			closeConns()
			return nil, nil, fmt.Errorf("--report-writer %s: %w", a, err)
		}
		clients = append(clients, c)
		conns = append(conns, c.Conn())
	}
	p, err := publish.NewSharded(conns, popts)
	if err != nil {
		closeConns()
		return nil, nil, fmt.Errorf("--report-writer %s: %w", template, err)
	}
	return p, closeConns, nil
}

// attach serves the writer on the decision server's listener (run) and
// starts telling the writer which policies are in use. When ctx ends, the
// writer's Publish streams end so that the server can stop.
func (w *reportWiring) attach(ctx context.Context, srv *server.Server) {
	if w == nil {
		return
	}
	if w.writer != nil {
		srv.RegisterService(&verdictv1.ReportService_ServiceDesc, w.writer)
		go func() {
			<-ctx.Done()
			w.writer.Drain()
		}()
	}
	wctx, stop := context.WithCancel(ctx)
	w.stop = stop
	go func() {
		defer close(w.done)
		publish.WatchPolicies(wctx, srv.Ready(), srv.ListPolicies, publish.WatchOptions{Interval: w.flags.policyInterval}, w.pub, w.log)
	}()
}

// close runs after the server stopped: it delivers what the queue holds,
// then closes the writer (run) or the connections (serve).
func (w *reportWiring) close() {
	if w == nil {
		return
	}
	if w.stop != nil {
		w.stop()
		<-w.done
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := w.pub.Close(ctx); err != nil {
		w.log.Error("report writer", "error", err)
	}
	if w.writer != nil {
		if err := w.writer.Close(ctx); err != nil {
			w.log.Error("report writer", "error", err)
		}
		w.store.Close()
	}
	if w.closeConns != nil {
		w.closeConns()
	}
}

// writerApplier is the writer of verdict run as the Applier of the queue
// that feeds it.
type writerApplier struct{ w *reportwriter.Writer }

func (a writerApplier) Apply(ctx context.Context, items []*verdictv1.PublishItem) (publish.ApplyResult, error) {
	r, err := a.w.Apply(ctx, items)
	return publish.ApplyResult{Rejected: r.Rejected, Duplicates: r.Duplicates}, err
}
