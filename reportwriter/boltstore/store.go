package boltstore

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io/fs"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"time"

	bolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"

	"github.com/verdict-policy/verdict/reportwriter"
)

// Defaults of Options.
const (
	DefaultLockTimeout = 2 * time.Second
	// DefaultInitialMmapSize is address space, not memory: only the
	// pages read are resident.
	DefaultInitialMmapSize = 1 << 30
)

// Options configure Open.
type Options struct {
	// LockTimeout bounds the wait for the file lock held by another
	// process. Default 2s.
	LockTimeout time.Duration
	// Verify reads every page of the store at open, under the same guard
	// as every read, then runs bbolt's consistency check (tx.Check: pages
	// reachable, freed or both); a problem is a *CorruptError. It costs a
	// read of the whole file. Default false: Open checks the file's header
	// and free list, and Load reads every record.
	Verify bool

	// InitialMmapSize is the size of bbolt's first mapping of the file.
	// bbolt maps the file again when it outgrows the mapping, and then
	// copies every value the transaction in progress holds to the heap
	// first: with a small mapping, a store growing under a large write
	// (the first flush of a scan: thousands of intermediaries) copies
	// that write, tens of MiB, to the heap at each doubling. The mapping
	// reserves address space, not memory. Default 1 GiB.
	InitialMmapSize int

	// noSync skips fsync (tests and the fuzz target only).
	noSync bool
}

var (
	bucketIntermediaries = []byte("intermediaries")
	bucketReports        = []byte("reports")
	bucketReportData     = []byte("reportdata")
	bucketTombstones     = []byte("tombstones")
	bucketMeta           = []byte("meta")
	keyPolicySets        = []byte("policysets")
	keyPolicies          = []byte("policies") // one policy set, before senders had one each
	keyFormat            = []byte("format")
	format               = []byte("1")
)

// Store is a reportwriter.Store in a bbolt file.
type Store struct {
	db   *bolt.DB
	path string
	sum  uint32 // of the values verify read (so that the reads stay)
}

var _ reportwriter.ReportReader = (*Store)(nil)

// Open opens the store file at path, or creates it when there is none.
//
// A file that exists is checked before bbolt maps it (see checkFile): an
// empty, short, truncated or damaged file is a *CorruptError naming the
// file and what to do, never a crash. A new file is created whole (written
// under a temporary name, then linked into place), so that an empty file
// at path is never one this package left.
func Open(path string, opts Options) (*Store, error) {
	if opts.LockTimeout <= 0 {
		opts.LockTimeout = DefaultLockTimeout
	}
	if opts.InitialMmapSize <= 0 {
		opts.InitialMmapSize = DefaultInitialMmapSize
	}
	switch _, err := os.Lstat(path); {
	case errors.Is(err, fs.ErrNotExist):
		if err := create(path, opts); err != nil {
			return nil, err
		}
	case err != nil:
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	if err := checkFile(path); err != nil {
		return nil, err
	}
	return open(path, opts, false)
}

// create writes a new, empty store to a temporary file next to path, and
// links it into place.
func create(path string, opts Options) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".new-*")
	if err != nil {
		return fmt.Errorf("create %s: %w", path, err)
	}
	name := tmp.Name()
	tmp.Close()
	defer os.Remove(name)
	s, err := open(name, opts, true)
	if err != nil {
		return err
	}
	if err := s.Close(); err != nil {
		return fmt.Errorf("create %s: %w", path, err)
	}
	if err := os.Link(name, path); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return nil // another process created it meanwhile
		}
		// No hard links on this file system.
		if err := os.Rename(name, path); err != nil {
			return fmt.Errorf("create %s: %w", path, err)
		}
	}
	if d, err := os.Open(filepath.Dir(path)); err == nil {
		d.Sync()
		d.Close()
	}
	return nil
}

// open opens a checked (or new) file with bbolt, under guard.
func open(path string, opts Options, isNew bool) (*Store, error) {
	var file *os.File
	s := &Store{path: path}
	err := s.guard("open", func() error {
		db, err := bolt.Open(path, 0o600, &bolt.Options{
			Timeout:         opts.LockTimeout,
			InitialMmapSize: opts.InitialMmapSize,
			NoSync:          opts.noSync,
			NoGrowSync:      opts.noSync,
			OpenFile: func(name string, flag int, mode os.FileMode) (*os.File, error) {
				f, err := os.OpenFile(name, flag, mode)
				file = f
				return f, err
			},
		})
		if err != nil {
			if errors.Is(err, berrors.ErrTimeout) {
				return fmt.Errorf("open %s: locked by another process (waited %s)", path, opts.LockTimeout)
			}
			if errors.Is(err, berrors.ErrInvalid) || errors.Is(err, berrors.ErrVersionMismatch) || errors.Is(err, berrors.ErrChecksum) {
				return &CorruptError{Path: path, Reason: err.Error()}
			}
			return fmt.Errorf("open %s: %w", path, err)
		}
		s.db = db
		return nil
	})
	if err != nil {
		if s.db == nil && file != nil {
			// bbolt panicked: release the file (and its lock).
			file.Close()
		}
		if s.db != nil {
			s.db.Close()
		}
		return nil, err
	}
	if opts.Verify && !isNew {
		if err := s.verify(); err != nil {
			s.db.Close()
			return nil, err
		}
	}
	err = s.guard("open", func() error {
		return s.db.Update(func(tx *bolt.Tx) error {
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
	})
	if err != nil {
		s.db.Close()
		return nil, fileError("open", path, err)
	}
	return s, nil
}

// fileError is err of op on the store's file at path: a *CorruptError as
// it is (it names the file), any other error prefixed with op and path.
func fileError(op, path string, err error) error {
	var ce *CorruptError
	if errors.As(err, &ce) {
		return err
	}
	return fmt.Errorf("%s %s: %w", op, path, err)
}

// guard runs fn, which reads the mapped file, with memory faults turned
// into panics (debug.SetPanicOnFault, on this goroutine only: a read past
// the end of the file, or through a damaged page id, is a SIGBUS or
// SIGSEGV that would otherwise stop the process), and turns a panic (such
// a fault, or one of bbolt's "assertion failed") into a *CorruptError.
func (s *Store) guard(op string, fn func() error) (err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if p := recover(); p != nil {
			err = &CorruptError{Path: s.path, Reason: fmt.Sprintf("%s: %v", op, p)}
		}
	}()
	return fn()
}

// verify reads every page reachable from the buckets, then runs bbolt's
// check (in a goroutine of bbolt's, which guard does not cover: hence the
// guarded read first).
func (s *Store) verify() error {
	err := s.guard("verify", func() error {
		return s.db.View(func(tx *bolt.Tx) error {
			return tx.ForEach(func(name []byte, b *bolt.Bucket) error { return s.walk(tx.Size(), b) })
		})
	})
	if err != nil {
		return err
	}
	return s.db.View(func(tx *bolt.Tx) error {
		var problems []string
		for err := range tx.Check() {
			if len(problems) < 10 {
				problems = append(problems, err.Error())
			}
		}
		if len(problems) > 0 {
			return &CorruptError{Path: s.path, Reason: "bbolt check: " + strings.Join(problems, "; ")}
		}
		return nil
	})
}

// walk reads every key and value of b and of its nested buckets; size is
// the size of the store (tx.Size).
func (s *Store) walk(size int64, b *bolt.Bucket) error {
	c := b.Cursor()
	for k, v := c.First(); k != nil; k, v = c.Next() {
		if err := s.checkLen(size, k, v); err != nil {
			return err
		}
		if v == nil {
			if nb := b.Bucket(k); nb != nil {
				if err := s.walk(size, nb); err != nil {
					return err
				}
			}
			continue
		}
		s.sum ^= crc32.ChecksumIEEE(v)
	}
	return nil
}

// checkLen refuses a key or value longer than the store (size bytes): a
// damaged length, which would read past the end of the file.
func (s *Store) checkLen(size int64, k, v []byte) error {
	if int64(len(k)) > size || int64(len(v)) > size {
		return &CorruptError{Path: s.path, Reason: fmt.Sprintf("a record of %d bytes (key %d bytes) in a store of %d bytes", len(v), len(k), size)}
	}
	return nil
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
	err := s.guard("load", func() error { return s.db.View(func(tx *bolt.Tx) error { return s.load(ctx, tx, st) }) })
	if err != nil {
		return nil, fileError("load", s.path, err)
	}
	return st, nil
}

func (s *Store) load(ctx context.Context, tx *bolt.Tx, st *reportwriter.State) error {
	for _, name := range [][]byte{bucketIntermediaries, bucketReports, bucketReportData, bucketTombstones, bucketMeta} {
		err := tx.Bucket(name).ForEach(func(k, v []byte) error { return s.checkLen(tx.Size(), k, v) })
		if err != nil {
			return err
		}
	}
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
	meta := tx.Bucket(bucketMeta)
	if v := meta.Get(keyPolicySets); v != nil {
		st.Policies = &reportwriter.PolicySets{}
		if err := json.Unmarshal(v, st.Policies); err != nil {
			return fmt.Errorf("policy sets: %w", err)
		}
	} else if v := meta.Get(keyPolicies); v != nil {
		// The one set of an older writer: of a sender without a name,
		// received at an unknown time (so not live).
		ps := &reportwriter.PolicySet{}
		if err := json.Unmarshal(v, ps); err != nil {
			return fmt.Errorf("policy set: %w", err)
		}
		st.Policies = &reportwriter.PolicySets{Sets: []*reportwriter.PolicySet{ps}}
	}
	return ctx.Err()
}

// ReadReport implements reportwriter.ReportReader.
func (s *Store) ReadReport(ctx context.Context, k reportwriter.ReportKey) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var out []byte
	err := s.guard("read", func() error {
		return s.db.View(func(tx *bolt.Tx) error {
			if v := tx.Bucket(bucketReportData).Get(reportKey(k)); v != nil {
				if err := s.checkLen(tx.Size(), nil, v); err != nil {
					return err
				}
				out = bytes.Clone(v)
			}
			return nil
		})
	})
	if err != nil {
		return nil, fileError("read", s.path, err)
	}
	return out, nil
}

// Write implements reportwriter.Store: one transaction.
func (s *Store) Write(ctx context.Context, c *reportwriter.Changes) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	// Encode outside the transaction: bbolt allows one writer at a time.
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
			return fmt.Errorf("policy sets: %w", err)
		}
	}
	err := s.guard("write", func() error {
		return s.db.Update(func(tx *bolt.Tx) error { return s.write(tx, c, inter, reps, policies) })
	})
	if err != nil {
		return fileError("write", s.path, err)
	}
	return nil
}

// kv is a record to put.
type kv struct{ k, v []byte }

func (s *Store) write(tx *bolt.Tx, c *reportwriter.Changes, inter, reps []kv, policies []byte) error {
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
		if err := tx.Bucket(bucketMeta).Delete(keyPolicies); err != nil {
			return err
		}
		return tx.Bucket(bucketMeta).Put(keyPolicySets, policies)
	}
	return nil
}

// Close implements reportwriter.Store.
func (s *Store) Close() error { return s.db.Close() }

// Path is the file of the store.
func (s *Store) Path() string { return s.path }

// String describes the store.
func (s *Store) String() string { return "bbolt:" + strings.TrimSpace(s.path) }
