package publish

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/grpc"

	"github.com/verdict-policy/verdict/internal/shard"
	verdictv1 "github.com/verdict-policy/verdict/proto/verdict/v1"
)

// ShardPlaceholder is replaced by the shard index in a sharded report
// writer address template, such as
// "verdict-reports-{shard}.verdict-reports.verdict.svc:50052".
const ShardPlaceholder = "{shard}"

// ShardAddresses expands an address template into the addresses of n
// shards: the template must hold ShardPlaceholder when n > 1.
func ShardAddresses(template string, n int) ([]string, error) {
	if n < 1 {
		return nil, fmt.Errorf("report shards %d: want at least 1", n)
	}
	if n > 1 && !strings.Contains(template, ShardPlaceholder) {
		return nil, fmt.Errorf("report writer %q: %d shards need %s in the address", template, n, ShardPlaceholder)
	}
	out := make([]string, n)
	for i := range n {
		out[i] = strings.ReplaceAll(template, ShardPlaceholder, strconv.Itoa(i))
	}
	return out, nil
}

// Sharded publishes to the report writers of n shards: each evaluation to
// the writer of its resource's namespace (internal/shard, as the writers
// shard), policy sets to every writer, a scan's end to the writer of its
// shard when the scan is sharded like the writers, else to every writer.
// It is a Sink, with a Publisher per shard.
type Sharded struct {
	pubs []*Publisher
}

var _ Sink = (*Sharded)(nil)

// NewSharded starts a Publisher per connection, conns[i] reaching the
// writer of shard i. With more than one, their metrics carry the label
// shard="i".
func NewSharded(conns []grpc.ClientConnInterface, opts Options) (*Sharded, error) {
	opts = opts.withDefaults()
	s := &Sharded{}
	for i, c := range conns {
		o := opts
		if len(conns) > 1 {
			var reg prometheus.Registerer = opts.Registry
			if opts.Registerer != nil {
				reg = opts.Registerer
			}
			o.Registerer = prometheus.WrapRegistererWith(prometheus.Labels{"shard": strconv.Itoa(i)}, reg)
			o.Logger = opts.Logger.With("shard", i)
		}
		p, err := New(c, o)
		if err != nil {
			s.Close(context.Background())
			return nil, err
		}
		s.pubs = append(s.pubs, p)
	}
	if len(s.pubs) == 0 {
		return nil, errors.New("sharded publisher: no connection")
	}
	return s, nil
}

// route returns the shards of an item: one, or every shard (-1).
func (s *Sharded) route(it *verdictv1.PublishItem) int {
	n := uint32(len(s.pubs))
	switch {
	case it.GetEvaluation() != nil:
		return int(shard.Of(it.GetEvaluation().GetResource().GetNamespace(), n))
	case it.GetScanDone() != nil:
		if d := it.GetScanDone(); d.GetShardCount() == n {
			return int(d.GetShardIndex())
		}
	}
	return -1
}

func (s *Sharded) split(items []*verdictv1.PublishItem) [][]*verdictv1.PublishItem {
	out := make([][]*verdictv1.PublishItem, len(s.pubs))
	for _, it := range items {
		if i := s.route(it); i >= 0 {
			out[i] = append(out[i], it)
			continue
		}
		for i := range out {
			out[i] = append(out[i], it)
		}
	}
	return out
}

// Offer queues items on their shards' publishers without waiting.
func (s *Sharded) Offer(items ...*verdictv1.PublishItem) error {
	var errs []error
	for i, part := range s.split(items) {
		if len(part) > 0 {
			if err := s.pubs[i].Offer(part...); err != nil {
				errs = append(errs, s.shardError(i, err))
			}
		}
	}
	return errors.Join(errs...)
}

// Publish queues items on their shards' publishers, waiting for room.
func (s *Sharded) Publish(ctx context.Context, items ...*verdictv1.PublishItem) error {
	for i, part := range s.split(items) {
		if len(part) > 0 {
			if err := s.pubs[i].Publish(ctx, part...); err != nil {
				return s.shardError(i, err)
			}
		}
	}
	return nil
}

// Flush waits until every shard acknowledged what was queued.
func (s *Sharded) Flush(ctx context.Context) error {
	for i, p := range s.pubs {
		if err := p.Flush(ctx); err != nil {
			return s.shardError(i, err)
		}
	}
	return nil
}

// Close closes every shard's publisher.
func (s *Sharded) Close(ctx context.Context) error {
	var errs []error
	for i, p := range s.pubs {
		if err := p.Close(ctx); err != nil {
			errs = append(errs, s.shardError(i, err))
		}
	}
	return errors.Join(errs...)
}

// shardError names the shard of err, when there are several.
func (s *Sharded) shardError(i int, err error) error {
	if len(s.pubs) == 1 {
		return err
	}
	return fmt.Errorf("shard %d: %w", i, err)
}
