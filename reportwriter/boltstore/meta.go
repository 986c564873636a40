package boltstore

import (
	"bytes"

	bolt "go.etcd.io/bbolt"
)

// metaPrefix keeps the values of other packages apart from the store's
// own meta keys.
const metaPrefix = "x/"

// Meta returns the value stored under name by SetMeta, or nil. A store
// that keeps part of the state elsewhere (reportwriter/kubestore) records
// there what it wrote.
func (s *Store) Meta(name string) ([]byte, error) {
	var v []byte
	err := s.guard("read meta", func() error {
		return s.db.View(func(tx *bolt.Tx) error {
			v = bytes.Clone(tx.Bucket(bucketMeta).Get([]byte(metaPrefix + name)))
			return nil
		})
	})
	if err != nil {
		return nil, fileError("read", s.path, err)
	}
	return v, nil
}

// SetMeta stores v under name, in one transaction.
func (s *Store) SetMeta(name string, v []byte) error {
	err := s.guard("write meta", func() error {
		return s.db.Update(func(tx *bolt.Tx) error {
			return tx.Bucket(bucketMeta).Put([]byte(metaPrefix+name), v)
		})
	})
	if err != nil {
		return fileError("write", s.path, err)
	}
	return nil
}
