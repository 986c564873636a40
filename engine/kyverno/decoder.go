package kyverno

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"strings"
	"sync"

	"github.com/verdict-policy/verdict/engine"
)

// DefaultMaxDocumentBytes is the limit a Decoder puts on one document when
// it is given none: 32 MiB, ten times the largest request the Kubernetes
// API server takes (3 MiB), so that any object, and a List of thousands of
// them, fits, while one document can never take more than a few hundred
// MB once decoded.
const DefaultMaxDocumentBytes = 32 << 20

// decoderBuffer is the read buffer of a Decoder: what it reads ahead of
// the document it returns.
const decoderBuffer = 64 << 10

// readers are the read buffers of the Decoders that reached the end of
// their input, for the next ones: a run that reads many small files
// allocates a few buffers, not one per file.
var readers = sync.Pool{New: func() any { return bufio.NewReaderSize(nil, decoderBuffer) }}

// maxInternedKeys bounds the mapping keys a Decoder interns across
// documents: past it the table starts again empty.
const maxInternedKeys = 4096

// DocumentTooLargeError is the error (inside a *DocumentError, which says
// where) of a document longer than the Decoder's limit. A line longer than
// the limit makes its document too large.
type DocumentTooLargeError struct {
	Limit int // bytes
}

func (e *DocumentTooLargeError) Error() string {
	return fmt.Sprintf("document larger than %d bytes, the limit on one document", e.Limit)
}

// Decoder reads the documents of a multi-document YAML or JSON input one at
// a time, as SplitDocuments cuts and decodes them, so that its memory
// depends on the largest document and not on the size of the input: it
// holds one document, and reads at most 64 KiB ahead of it.
//
//	dec := kyverno.NewDecoder(path, f, 0)
//	for dec.Next() {
//		for _, o := range dec.Objects() { ... }
//	}
//	if err := dec.Err(); err != nil { ... }
//
// A document that cannot be decoded is recorded (see Err) and the Decoder
// goes on with the next one, as SplitDocuments reports every bad document;
// an invalid separator line or a read error ends the input.
type Decoder struct {
	// Skip, when set, is called with the text of each YAML document
	// before it is decoded: a document it skips gives no objects and no
	// error, even one that would not decode, and counts as one document
	// in the index of later errors. A document that starts with "{"
	// (JSON, possibly several values) is always decoded.
	Skip func(doc string) bool

	source string
	r      *bufio.Reader
	max    int
	fast   *fastYAML

	lineNo int // number of the next line to read
	n      int // documents decoded or failed (DocumentError.Index)
	line   []byte
	objs   []Object
	errs   []error
	fatal  error
	done   bool
}

// NewDecoder returns a Decoder of r. source names the input in errors.
// maxDocumentBytes limits one document (the bytes between two separator
// lines); zero or less means DefaultMaxDocumentBytes.
func NewDecoder(source string, r io.Reader, maxDocumentBytes int) *Decoder {
	if maxDocumentBytes <= 0 {
		maxDocumentBytes = DefaultMaxDocumentBytes
	}
	return &Decoder{
		source: source,
		r:      newReader(r),
		max:    maxDocumentBytes,
		fast:   &fastYAML{keys: make(map[string]string)},
		lineNo: 1,
	}
}

func newReader(r io.Reader) *bufio.Reader {
	br := readers.Get().(*bufio.Reader)
	br.Reset(r)
	return br
}

// finish marks the end of the input and gives the read buffer back.
func (d *Decoder) finish() {
	d.done = true
	if d.r != nil {
		d.r.Reset(nil)
		readers.Put(d.r)
		d.r = nil
	}
}

// Next reads up to the next document that holds objects and reports
// whether there is one; Objects then returns them. It returns false at the
// end of the input, or when reading fails.
func (d *Decoder) Next() bool {
	d.objs = nil
	for !d.done {
		c, tooLarge, ok := d.nextChunk()
		if !ok {
			break
		}
		if len(d.fast.keys) > maxInternedKeys {
			d.fast.keys = make(map[string]string)
		}
		if tooLarge {
			d.n++
			d.errs = append(d.errs, docError(d.source, d.n, c.line, &DocumentTooLargeError{Limit: d.max}))
			continue
		}
		if d.Skip != nil {
			if i := firstNonSpace(c.data); (i == len(c.data) || c.data[i] != '{') && d.Skip(c.data) {
				d.n++
				continue
			}
		}
		vs, err := parseChunk(c, false, d.fast)
		if err != nil {
			d.n++
			d.errs = append(d.errs, docError(d.source, d.n, c.line, err))
			continue
		}
		for _, v := range vs {
			d.n++
			objs, err := objects(v)
			if err != nil {
				d.errs = append(d.errs, docError(d.source, d.n, v.line, err))
				continue
			}
			d.objs = append(d.objs, objs...)
		}
		if len(d.objs) > 0 {
			return true
		}
	}
	return false
}

// Objects are the objects of the document Next read: the document, or the
// items of a List (a chunk of JSON values back to back gives each).
func (d *Decoder) Objects() []Object { return d.objs }

// Err is the error of the input so far, as SplitDocuments would return it
// for what was read: the read error or invalid separator that ended it, or
// the errors of the documents that could not be decoded (one
// *DocumentError, or several joined).
func (d *Decoder) Err() error {
	if d.fatal != nil {
		return d.fatal
	}
	if len(d.errs) > 0 {
		return joinErrors(d.errs)
	}
	return nil
}

// nextChunk reads the next document that is not empty (blank lines and
// comments only). tooLarge reports a document over the limit, whose data
// is then not kept. ok is false at the end of the input or on a fatal
// error.
func (d *Decoder) nextChunk() (c chunk, tooLarge, ok bool) {
	var data strings.Builder
	start, content := d.lineNo, 0
	for {
		line, long, err := d.readLine()
		if err != nil {
			d.finish()
			if err != io.EOF {
				var pe *fs.PathError
				if !errors.As(err, &pe) {
					err = fmt.Errorf("read %s: %w", d.source, err)
				}
				d.fatal = err
				return chunk{}, false, false
			}
			if content == 0 {
				return chunk{}, false, false
			}
			return chunk{data: data.String(), first: start, line: content}, tooLarge, true
		}
		lineNo := d.lineNo
		d.lineNo++
		if bytes.HasPrefix(line, []byte("---")) {
			rest := bytes.TrimSpace(line[3:])
			if len(rest) > 0 && rest[0] != '#' {
				d.finish()
				d.fatal = fmt.Errorf("%s: %w", d.source, engine.Errorf(engine.CodeDecode, "", fmt.Sprintf("line %d: invalid document separator %q", lineNo, truncate(string(rest), 40))))
				return chunk{}, false, false
			}
			if content != 0 {
				return chunk{data: data.String(), first: start, line: content}, tooLarge, true
			}
			data.Reset()
			start, tooLarge = d.lineNo, false
			continue
		}
		if content == 0 {
			if t := bytes.TrimSpace(line); long || len(t) > 0 && t[0] != '#' {
				content = lineNo
			}
		}
		if tooLarge {
			continue
		}
		if long || data.Len()+len(line) > d.max {
			tooLarge = true
			data = strings.Builder{} // let the part read go
			continue
		}
		data.Write(line)
	}
}

// readLine reads one line, with its '\n' (the last line may lack it). A
// line longer than the limit is long: only its start is returned. err is
// io.EOF at the end of the input, with no line.
func (d *Decoder) readLine() (line []byte, long bool, err error) {
	d.line = d.line[:0]
	for {
		frag, err := d.r.ReadSlice('\n')
		switch {
		case len(d.line) == 0:
			d.line = append(d.line, frag...) // always keep the start
		case !long && len(d.line)+len(frag) <= d.max:
			d.line = append(d.line, frag...)
		default:
			long = true
		}
		if len(d.line) > d.max {
			long = true
		}
		switch {
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case err == io.EOF:
			if len(d.line) == 0 {
				return nil, false, io.EOF
			}
			return d.line, long, nil
		case err != nil:
			return nil, false, err
		}
		return d.line, long, nil
	}
}
