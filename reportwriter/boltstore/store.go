package boltstore

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	bolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"

	"github.com/verdict-policy/verdict/reportwriter"
)

// DefaultLockTimeout is the default of Options.LockTimeout.
const DefaultLockTimeout = 2 * time.Second

// Options configure Open.
type Options struct {
	// LockTimeout bounds the wait for the file lock held by another
	// process. Default 2s.
	LockTimeout time.Duration
}

var (
	bucketIntermediaries = []byte("intermediaries")
	bucketReports        = []byte("reports")
	bucketReportData     = []byte("reportdata")
	bucketTombstones     = []byte("tombstones")
	bucketMeta           = []byte("meta")
	keyPolicies          = []byte("policies")
	keyFormat            = []byte("format")
	format               = []byte("1")
)

// Store is a reportwriter.Store in a bbolt file.
type Store struct {
	db *bolt.DB
}

var _ reportwriter.Store = (*Store)(nil)

// Open opens (or creates) the store file at path.
func Open(path string, opts Options) (*Store, error) {
	if opts.LockTimeout <= 0 {
		opts.LockTimeout = DefaultLockTimeout
	}
	db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: opts.LockTimeout})
	if err != nil {
		if errors.Is(err, berrors.ErrTimeout) {
			return nil, fmt.Errorf("open %s: locked by another process (waited %s)", path, opts.LockTimeout)
		}
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	err = db.Update(func(tx *bolt.Tx) error {
		for _, b := range [][]byte{bucketIntermediaries, bucketReports, bucketReportData, bucketTombstones, bucketMeta} {
			if _, err := tx.CreateBucketIfNotExists(b); err != nil {
				return err
			}
		}
		meta := tx.Bucket(bucketMeta)
		if f := meta.Get(keyFormat); f != nil && string(f) != string(format) {
			return fmt.Errorf("store format %q, want %q", f, format)
		}
		return meta.Put(keyFormat, format)
	})
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	return &Store{db: db}, nil
}

func intermediaryKey(s reportwriter.Source, resource string) []byte {
	return []byte(string(s) + "/" + resource)
}

func reportKey(k reportwriter.ReportKey) []byte {
	return []byte(k.Namespace + "/" + k.Name)
}

// Load implements reportwriter.Store.
func (s *Store) Load(ctx context.Context) (*reportwriter.State, error) {
	st := &reportwriter.State{Tombstones: map[string]time.Time{}}
	err := s.db.View(func(tx *bolt.Tx) error {
		err := tx.Bucket(bucketIntermediaries).ForEach(func(k, v []byte) error {
			in := &reportwriter.Intermediary{}
			if err := json.Unmarshal(v, in); err != nil {
				return fmt.Errorf("intermediary %s: %w", k, err)
			}
			st.Intermediaries = append(st.Intermediaries, in)
			return nil
		})
		if err != nil {
			return err
		}
		data := tx.Bucket(bucketReportData)
		err = tx.Bucket(bucketReports).ForEach(func(k, v []byte) error {
			sr := &reportwriter.StoredReport{}
			if err := json.Unmarshal(v, sr); err != nil {
				return fmt.Errorf("report %s: %w", k, err)
			}
			sr.Report = bytes.Clone(data.Get(k))
			st.Reports = append(st.Reports, sr)
			return nil
		})
		if err != nil {
			return err
		}
		err = tx.Bucket(bucketTombstones).ForEach(func(k, v []byte) error {
			var t time.Time
			if err := t.UnmarshalText(v); err != nil {
				return fmt.Errorf("tombstone %s: %w", k, err)
			}
			st.Tombstones[string(k)] = t
			return nil
		})
		if err != nil {
			return err
		}
		if v := tx.Bucket(bucketMeta).Get(keyPolicies); v != nil {
			st.Policies = &reportwriter.PolicySet{}
			if err := json.Unmarshal(v, st.Policies); err != nil {
				return fmt.Errorf("policy set: %w", err)
			}
		}
		return ctx.Err()
	})
	if err != nil {
		return nil, fmt.Errorf("load %s: %w", s.db.Path(), err)
	}
	return st, nil
}

// Write implements reportwriter.Store: one transaction.
func (s *Store) Write(ctx context.Context, c *reportwriter.Changes) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	// Encode outside the transaction: bbolt allows one writer at a time.
	type kv struct{ k, v []byte }
	inter := make([]kv, 0, len(c.PutIntermediaries))
	for _, in := range c.PutIntermediaries {
		v, err := json.Marshal(in)
		if err != nil {
			return fmt.Errorf("intermediary %s: %w", in.Owner.Key(), err)
		}
		inter = append(inter, kv{intermediaryKey(in.Source, in.Owner.Key()), v})
	}
	reps := make([]kv, 0, len(c.PutReports))
	for _, sr := range c.PutReports {
		v, err := json.Marshal(sr)
		if err != nil {
			return fmt.Errorf("report %s: %w", sr.Key.Name, err)
		}
		reps = append(reps, kv{reportKey(sr.Key), v})
	}
	var policies []byte
	if c.Policies != nil {
		var err error
		if policies, err = json.Marshal(c.Policies); err != nil {
			return fmt.Errorf("policy set: %w", err)
		}
	}
	err := s.db.Update(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketIntermediaries)
		for _, x := range inter {
			if err := b.Put(x.k, x.v); err != nil {
				return err
			}
		}
		for _, k := range c.DeleteIntermediaries {
			if err := b.Delete(intermediaryKey(k.Source, k.Resource)); err != nil {
				return err
			}
		}
		b, data := tx.Bucket(bucketReports), tx.Bucket(bucketReportData)
		for i, x := range reps {
			if err := b.Put(x.k, x.v); err != nil {
				return err
			}
			if err := data.Put(x.k, c.PutReports[i].Report); err != nil {
				return err
			}
		}
		for _, k := range c.DeleteReports {
			if err := b.Delete(reportKey(k)); err != nil {
				return err
			}
			if err := data.Delete(reportKey(k)); err != nil {
				return err
			}
		}
		b = tx.Bucket(bucketTombstones)
		for k, t := range c.PutTombstones {
			v, err := t.MarshalText()
			if err != nil {
				return err
			}
			if err := b.Put([]byte(k), v); err != nil {
				return err
			}
		}
		for _, k := range c.DeleteTombstones {
			if err := b.Delete([]byte(k)); err != nil {
				return err
			}
		}
		if policies != nil {
			return tx.Bucket(bucketMeta).Put(keyPolicies, policies)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("write %s: %w", s.db.Path(), err)
	}
	return nil
}

// Close implements reportwriter.Store.
func (s *Store) Close() error { return s.db.Close() }

// Path is the file of the store.
func (s *Store) Path() string { return s.db.Path() }

// String describes the store.
func (s *Store) String() string { return "bbolt:" + strings.TrimSpace(s.db.Path()) }
