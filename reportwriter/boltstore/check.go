package boltstore

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"math/bits"
	"os"
)

// ErrCorrupt is the error a CorruptError matches with errors.Is.
var ErrCorrupt = errors.New("store file damaged")

// CorruptError says that a store file is not a usable store: empty, too
// short, not a bbolt file, truncated or damaged. Open returns it before
// bbolt maps the file when the file's header says so, and Open, Load and
// Write return it when bbolt finds the damage (a panic or a memory fault
// while reading the file, turned into this error).
type CorruptError struct {
	// Path is the store file.
	Path string
	// Reason says what is wrong.
	Reason string
}

func (e *CorruptError) Error() string {
	return fmt.Sprintf("store %s: %s; restore it from a backup, or move it away to start with an empty store "+
		"(background scans rebuild the reports of the resources they see; admission results come back as resources change)", e.Path, e.Reason)
}

// Is makes errors.Is(err, ErrCorrupt) true.
func (e *CorruptError) Is(target error) bool { return target == ErrCorrupt }

// The layout of a bbolt file (go.etcd.io/bbolt v1.4, internal/common:
// page.go, meta.go), in the machine's byte order: every page starts with
// a 16-byte header (id uint64, flags uint16, count uint16, overflow
// uint32); pages 0 and 1 hold a meta (magic, version, pageSize, flags
// uint32; root bucket: root pgid, sequence uint64; freelist, pgid (high
// water mark), txid, checksum uint64), whose checksum is the FNV-64a of
// the 56 bytes before it.
const (
	pageHeaderSize = 16
	metaSize       = 64
	metaSumOffset  = 56

	boltMagic        = 0xED0CDAED
	boltVersion      = 2
	noFreelist       = ^uint64(0)
	flagBranch       = 0x01
	flagLeaf         = 0x02
	flagMeta         = 0x04
	flagFreelist     = 0x10
	minPageSize      = 1 << 10
	maxPageSize      = 1 << 24 // the largest bbolt looks for
	freelistOverflow = 0xFFFF  // count of a freelist whose length is its first element
)

// pageHeader is the header of a page.
type pageHeader struct {
	id       uint64
	flags    uint16
	count    uint16
	overflow uint32
}

// meta is a decoded meta page.
type meta struct {
	magic, version, pageSize, flags uint32
	root, freelist, pgid, txid      uint64
	checksum, sum                   uint64
}

func decodePage(b []byte) pageHeader {
	ne := binary.NativeEndian
	return pageHeader{id: ne.Uint64(b), flags: ne.Uint16(b[8:]), count: ne.Uint16(b[10:]), overflow: ne.Uint32(b[12:])}
}

func decodeMeta(b []byte) meta {
	ne := binary.NativeEndian
	m := b[pageHeaderSize:]
	h := fnv.New64a()
	h.Write(m[:metaSumOffset])
	return meta{
		magic: ne.Uint32(m), version: ne.Uint32(m[4:]), pageSize: ne.Uint32(m[8:]), flags: ne.Uint32(m[12:]),
		root: ne.Uint64(m[16:]), freelist: ne.Uint64(m[32:]), pgid: ne.Uint64(m[40:]), txid: ne.Uint64(m[48:]),
		checksum: ne.Uint64(m[56:]), sum: h.Sum64(),
	}
}

// problem says why m is not a valid meta, or "".
func (m meta) problem() string {
	switch {
	case m.magic != boltMagic:
		return "not a bbolt meta page (magic)"
	case m.version != boltVersion:
		return fmt.Sprintf("bbolt format version %d, want %d", m.version, boltVersion)
	case m.checksum != m.sum:
		return "meta page checksum mismatch"
	}
	return ""
}

// checkFile checks an existing store file before bbolt maps it: bbolt
// trusts the file, and reading past its end through the map is a fault
// (SIGBUS) that stops the process, so the file is checked here with
// ordinary reads: the size, the page size, both meta pages (magic,
// version, checksum), the high water mark of the meta in use against the
// size, the freelist (its length and page ids), and the tree of pages from
// the root (treeCheck). It reads every page in use once. Reads of the map
// also run under guard, in case something passes these checks.
func checkFile(path string) error {
	bad := func(format string, args ...any) error {
		return &CorruptError{Path: path, Reason: fmt.Sprintf(format, args...)}
	}
	// A FIFO would block the open (checked again on the open file).
	fi, err := os.Stat(path)
	if err != nil {
		return fmt.Errorf("stat %s: %w", path, err)
	}
	if !fi.Mode().IsRegular() {
		return bad("not a regular file (%s)", fi.Mode().Type())
	}
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("open %s: %w", path, err)
	}
	defer f.Close()
	if fi, err = f.Stat(); err != nil {
		return fmt.Errorf("stat %s: %w", path, err)
	}
	if !fi.Mode().IsRegular() {
		return bad("not a regular file (%s)", fi.Mode().Type())
	}
	size := fi.Size()
	if size == 0 {
		return bad("empty (0 bytes), and not created by this writer (a new store is created whole)")
	}
	read := func(off int64, n int) ([]byte, error) {
		b := make([]byte, n)
		if _, err := f.ReadAt(b, off); err != nil {
			if errors.Is(err, io.EOF) {
				return nil, bad("truncated: %d bytes, %d needed to read %d bytes at offset %d", size, off+int64(n), n, off)
			}
			return nil, fmt.Errorf("read %s: %w", path, err)
		}
		return b, nil
	}
	if size < pageHeaderSize+metaSize {
		return bad("truncated: %d bytes, less than a bbolt meta page", size)
	}
	// The page size: from meta 0, else from a meta 1 found where bbolt
	// looks for it.
	var pageSize int64
	first := ""
	for _, off := range metaOffsets(size) {
		b, err := read(off, pageHeaderSize+metaSize)
		if err != nil {
			return err
		}
		m := decodeMeta(b)
		p := m.problem()
		if off == 0 {
			first = p
		}
		if p == "" {
			pageSize = int64(m.pageSize)
			break
		}
	}
	if pageSize == 0 {
		return bad("no valid bbolt meta page (page 0: %s)", first)
	}
	if pageSize < minPageSize || pageSize > maxPageSize || bits.OnesCount64(uint64(pageSize)) != 1 {
		return bad("page size %d: want a power of two from %d to %d", pageSize, minPageSize, maxPageSize)
	}
	if size < 2*pageSize {
		return bad("truncated: %d bytes, less than the two meta pages of %d bytes", size, pageSize)
	}
	var metas [2]meta
	var problems [2]string
	for i := range metas {
		b, err := read(int64(i)*pageSize, pageHeaderSize+metaSize)
		if err != nil {
			return err
		}
		metas[i] = decodeMeta(b)
		problems[i] = metas[i].problem()
		if problems[i] == "" && decodePage(b).flags != flagMeta {
			problems[i] = "not a meta page (flags)"
		}
	}
	// bbolt uses the valid meta with the highest transaction id.
	use := -1
	for i, m := range metas {
		if problems[i] == "" && (use < 0 || m.txid > metas[use].txid) {
			use = i
		}
	}
	if use < 0 {
		return bad("both meta pages are damaged (page 0: %s; page 1: %s)", problems[0], problems[1])
	}
	m := metas[use]
	if int64(m.pageSize) != pageSize {
		return bad("meta page %d: page size %d, the file's is %d", use, m.pageSize, pageSize)
	}
	hwm := m.pgid
	if hwm < 4 || hwm > uint64(size/pageSize) {
		return bad("truncated: %d bytes, but its meta page %d says it uses %d pages of %d bytes (%d bytes)", size, use, hwm, pageSize, hwm*uint64(pageSize))
	}
	// inFile checks that the page id (and its overflow pages) are in use.
	page := func(what string, id uint64, want ...uint16) (pageHeader, error) {
		if id < 2 || id >= hwm {
			return pageHeader{}, bad("%s page %d: outside the pages in use (2 to %d)", what, id, hwm-1)
		}
		b, err := read(int64(id)*pageSize, pageHeaderSize)
		if err != nil {
			return pageHeader{}, err
		}
		p := decodePage(b)
		if p.id != id {
			return pageHeader{}, bad("%s page %d: header says page %d", what, id, p.id)
		}
		if id+uint64(p.overflow) >= hwm {
			return pageHeader{}, bad("%s page %d: %d overflow pages go past the pages in use (%d)", what, id, p.overflow, hwm)
		}
		for _, f := range want {
			if p.flags == f {
				return p, nil
			}
		}
		return pageHeader{}, bad("%s page %d: flags %#x, want %#x", what, id, p.flags, want)
	}
	if _, err := page("root", m.root, flagLeaf, flagBranch); err != nil {
		return err
	}
	if m.freelist == noFreelist {
		return nil
	}
	fl, err := page("freelist", m.freelist, flagFreelist)
	if err != nil {
		return err
	}
	// The freelist: its length fits its pages, and it lists pages in use.
	capacity := ((int64(fl.overflow)+1)*pageSize - pageHeaderSize) / 8
	start, count := int64(m.freelist)*pageSize+pageHeaderSize, int64(fl.count)
	if fl.count == freelistOverflow {
		b, err := read(start, 8)
		if err != nil {
			return err
		}
		c := binary.NativeEndian.Uint64(b)
		if c > uint64(capacity-1) {
			return bad("freelist page %d: %d ids, more than its %d pages hold", m.freelist, c, fl.overflow+1)
		}
		start, count = start+8, int64(c)
	}
	if count > capacity {
		return bad("freelist page %d: %d ids, more than its %d pages hold", m.freelist, count, fl.overflow+1)
	}
	b, err := read(start, int(count*8))
	if err != nil {
		return err
	}
	tc := &treeCheck{pageSize: pageSize, hwm: hwm, used: make([]uint64, (hwm+63)/64), bad: bad, read: read}
	tc.mark(m.freelist, fl.overflow)
	for i := range count {
		id := binary.NativeEndian.Uint64(b[i*8:])
		if id < 2 || id >= hwm {
			return bad("freelist page %d: lists page %d, outside the pages in use (2 to %d)", m.freelist, id, hwm-1)
		}
		if tc.isUsed(id) {
			return bad("freelist page %d: lists page %d twice, or its own page", m.freelist, id)
		}
		tc.mark(id, 0)
	}
	return tc.checkPage(m.root, 0)
}

// The elements of a branch page (pos, ksize uint32, pgid uint64) and of a
// leaf page (flags, pos, ksize, vsize uint32) are 16 bytes each, after the
// page header; an element's key is at pos bytes from the element, a leaf's
// value follows its key. A leaf element with flag bucketLeafFlag is a
// bucket: its value starts with the bucket's root page id and sequence
// (16 bytes), and when the root is 0, the bucket's page follows inline.
const (
	elemSize       = 16
	bucketLeafFlag = 0x01
	bucketHeader   = 16
	maxTreeDepth   = 64
)

// treeCheck walks the pages of the tree from the root bucket with
// ordinary reads, before bbolt follows them through the map: every page id
// in use, every page reached once (no cycle, no page shared or also free),
// every element, key and value inside its page. A damaged tree would
// otherwise be a fault, an "assertion failed" panic, or, with a cycle, a
// cursor that descends forever until the process runs out of memory.
type treeCheck struct {
	pageSize int64
	hwm      uint64
	used     []uint64 // a bit per page: in the tree or free
	bad      func(format string, args ...any) error
	read     func(off int64, n int) ([]byte, error)
}

func (c *treeCheck) isUsed(id uint64) bool { return c.used[id/64]&(1<<(id%64)) != 0 }

func (c *treeCheck) mark(id uint64, overflow uint32) {
	for p := id; p <= id+uint64(overflow); p++ {
		c.used[p/64] |= 1 << (p % 64)
	}
}

// checkPage checks the page id of the tree and what it points to; depth
// counts the pages and buckets above it.
func (c *treeCheck) checkPage(id uint64, depth int) error {
	if depth > maxTreeDepth {
		return c.bad("page %d: more than %d levels of pages and buckets", id, maxTreeDepth)
	}
	if id < 2 || id >= c.hwm {
		return c.bad("page %d: outside the pages in use (2 to %d)", id, c.hwm-1)
	}
	h, err := c.read(int64(id)*c.pageSize, pageHeaderSize)
	if err != nil {
		return err
	}
	p := decodePage(h)
	switch {
	case p.id != id:
		return c.bad("page %d: header says page %d", id, p.id)
	case id+uint64(p.overflow) >= c.hwm:
		return c.bad("page %d: %d overflow pages go past the pages in use (%d)", id, p.overflow, c.hwm)
	}
	for q := id; q <= id+uint64(p.overflow); q++ {
		if c.isUsed(q) {
			return c.bad("page %d: reached twice, or also free (a damaged tree)", q)
		}
	}
	c.mark(id, p.overflow)
	b, err := c.read(int64(id)*c.pageSize, int((int64(p.overflow)+1)*c.pageSize))
	if err != nil {
		return err
	}
	return c.checkNode(id, b, depth)
}

// checkNode checks the elements of the branch or leaf page b (a page of
// the file, or a bucket's inline page).
func (c *treeCheck) checkNode(id uint64, b []byte, depth int) error {
	if len(b) < pageHeaderSize {
		return c.bad("page %d: %d bytes, less than a page header", id, len(b))
	}
	p := decodePage(b)
	if p.flags != flagBranch && p.flags != flagLeaf {
		return c.bad("page %d: flags %#x, want a branch or leaf page", id, p.flags)
	}
	n := int(p.count)
	if pageHeaderSize+n*elemSize > len(b) {
		return c.bad("page %d: %d elements do not fit its %d bytes", id, n, len(b))
	}
	ne := binary.NativeEndian
	for i := range n {
		off := pageHeaderSize + i*elemSize
		e := b[off : off+elemSize]
		if p.flags == flagBranch {
			pos, ksize := int64(ne.Uint32(e)), int64(ne.Uint32(e[4:]))
			if int64(off)+pos+ksize > int64(len(b)) {
				return c.bad("page %d: element %d: key outside the page", id, i)
			}
			if err := c.checkPage(ne.Uint64(e[8:]), depth+1); err != nil {
				return err
			}
			continue
		}
		flags, pos, ksize, vsize := ne.Uint32(e), int64(ne.Uint32(e[4:])), int64(ne.Uint32(e[8:])), int64(ne.Uint32(e[12:]))
		start := int64(off) + pos + ksize
		if start+vsize > int64(len(b)) {
			return c.bad("page %d: element %d: key or value outside the page", id, i)
		}
		if flags&bucketLeafFlag == 0 {
			continue
		}
		v := b[start : start+vsize]
		if len(v) < bucketHeader {
			return c.bad("page %d: element %d: a bucket of %d bytes", id, i, len(v))
		}
		if root := ne.Uint64(v); root != 0 {
			if err := c.checkPage(root, depth+1); err != nil {
				return err
			}
			continue
		}
		if depth+1 > maxTreeDepth {
			return c.bad("page %d: more than %d levels of pages and buckets", id, maxTreeDepth)
		}
		inline := v[bucketHeader:]
		if len(inline) < pageHeaderSize || decodePage(inline).flags != flagLeaf {
			return c.bad("page %d: element %d: an inline bucket without a leaf page", id, i)
		}
		if err := c.checkNode(id, inline, depth+1); err != nil {
			return err
		}
	}
	return nil
}

// metaOffsets are where the meta pages may be: page 0, then page 1 for
// each page size bbolt tries (1 KiB to 16 MiB).
func metaOffsets(size int64) []int64 {
	out := []int64{0}
	for i := range 15 {
		pos := int64(minPageSize) << i
		if pos+pageHeaderSize+metaSize > size {
			break
		}
		out = append(out, pos)
	}
	return out
}
