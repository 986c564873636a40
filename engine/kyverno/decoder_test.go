package kyverno

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"
	"testing/iotest"

	"github.com/google/go-cmp/cmp"
)

// decodeAll reads every document of data with a Decoder, as SplitDocuments
// returns them (nil objects on error).
func decodeAll(r io.Reader, max int) ([]Object, error) {
	dec := NewDecoder("r.yaml", r, max)
	var out []Object
	for dec.Next() {
		out = append(out, dec.Objects()...)
	}
	if err := dec.Err(); err != nil {
		return nil, err
	}
	return out, nil
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

var decoderInputs = []string{
	"",
	"\n\n# only comments\n",
	"apiVersion: v1\nkind: Pod\nmetadata:\n  name: a\n",
	"# header\n---\n\n---\n# c\napiVersion: v1\nkind: Pod\nmetadata: {name: a}\n--- # next\napiVersion: v1\nkind: Pod\nmetadata: {name: b}\n---\n---\n",
	"apiVersion: v1\nkind: Pod\nmetadata: {name: a}",
	"\n{\n  \"apiVersion\": \"v1\",\n  \"kind\": \"Pod\",\n  \"metadata\": {\"name\": \"a\"}\n}\n",
	"{\"a\": 1}\n\n{\"b\": 2}\n---\n{\"c\": 3}",
	"a: 1\n---\napiVersion: v1\nkind: List\nitems:\n- {apiVersion: v1, kind: Pod, metadata: {name: a}}\n- {apiVersion: v1, kind: Pod, metadata: {name: b}}\n",
	"apiVersion: v1\nkind: List\nitems: []\n---\nb: 1\n",
	"base: &b {x: 1}\ncopy: *b\nyes: key\n",
	"a: 1\n--- !tag\nb: 2\n",
	"a: [\n---\nb: 1\n---\nc: d: e\n",
	"- a\n---\nplain\n",
	"apiVersion: v1\nkind: List\nitems:\n- a\n- {b: 1}\n- [c]\n",
	"a: 1\n---\nb: 1\nc: [\n",
	"a: [\n---\nb: 1\n---x\n",
	"---\r\na: 1\r\n---\r\nb: 2\r\n",
	"a: |\n  ---\n  text\n---\nb: 2\n",
}

func TestDecoderMatchesSplitDocuments(t *testing.T) {
	readers := []struct {
		name string
		wrap func(io.Reader) io.Reader
	}{
		{"whole", func(r io.Reader) io.Reader { return r }},
		{"one byte at a time", iotest.OneByteReader},
		{"eof with the last data", iotest.DataErrReader},
	}
	for _, give := range decoderInputs {
		wantObjs, wantErr := SplitDocuments("r.yaml", []byte(give))
		for _, rd := range readers {
			got, err := decodeAll(rd.wrap(strings.NewReader(give)), 0)
			if errString(err) != errString(wantErr) {
				t.Errorf("Decoder(%q, %s) error = %v, want %v", give, rd.name, err, wantErr)
			}
			if len(got) == 0 && len(wantObjs) == 0 {
				continue
			}
			if diff := cmp.Diff(wantObjs, got); diff != "" {
				t.Errorf("Decoder(%q, %s) mismatch with SplitDocuments (-want +got):\n%s", give, rd.name, diff)
			}
		}
	}
}

func TestDecoderDocumentLimit(t *testing.T) {
	const limit = 64
	doc := func(n int) string { // a document of exactly n bytes
		d := "a: " + strings.Repeat("x", n-5) + "\n"
		return d[:n-1] + "\n"
	}
	tests := []struct {
		name      string
		give      string
		wantNames []string // the "a" values decoded (their length)
		wantLine  int      // line of the document over the limit; 0 for none
		wantIndex int
	}{
		{name: "at the limit", give: doc(limit) + "---\n" + doc(10), wantNames: []string{strings.Repeat("x", limit-5), strings.Repeat("x", 5)}},
		{name: "over the limit", give: doc(10) + "---\n# c\n" + doc(limit+1) + "---\n" + doc(10), wantNames: []string{strings.Repeat("x", 5), strings.Repeat("x", 5)}, wantLine: 5, wantIndex: 2},
		{name: "one long line", give: "a: " + strings.Repeat("x", 10*limit) + "\n---\n" + doc(10), wantNames: []string{strings.Repeat("x", 5)}, wantLine: 1, wantIndex: 1},
		{name: "long comments only", give: "#" + strings.Repeat("x", 10*limit) + "\n", wantLine: 1, wantIndex: 1},
		{name: "many lines of comments", give: strings.Repeat("# comment\n", limit) + "---\n" + doc(10), wantNames: []string{strings.Repeat("x", 5)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dec := NewDecoder("r.yaml", strings.NewReader(tt.give), limit)
			var names []string
			for dec.Next() {
				for _, o := range dec.Objects() {
					s, _ := o.Value["a"].(string)
					names = append(names, s)
				}
			}
			if diff := cmp.Diff(tt.wantNames, names); diff != "" {
				t.Errorf("Decoder(%q) documents mismatch (-want +got):\n%s", tt.give, diff)
			}
			err := dec.Err()
			if tt.wantLine == 0 {
				if err != nil {
					t.Errorf("Decoder(%q).Err() = %v, want nil", tt.give, err)
				}
				return
			}
			var de *DocumentError
			var tl *DocumentTooLargeError
			if !errors.As(err, &de) || !errors.As(err, &tl) {
				t.Fatalf("Decoder(%q).Err() = %v, want a *DocumentError holding a *DocumentTooLargeError", tt.give, err)
			}
			if de.Source != "r.yaml" || de.Line != tt.wantLine || de.Index != tt.wantIndex || tl.Limit != limit {
				t.Errorf("Decoder(%q).Err() = %s:%d document %d limit %d, want r.yaml:%d document %d limit %d", tt.give, de.Source, de.Line, de.Index, tl.Limit, tt.wantLine, tt.wantIndex, limit)
			}
		})
	}
}

// tripwire fails a read that goes past limit bytes of r before armed is
// false.
type tripwire struct {
	r     io.Reader
	read  int
	limit int
	armed bool
}

func (t *tripwire) Read(p []byte) (int, error) {
	if t.armed && t.read+len(p) > t.limit {
		p = p[:max(t.limit-t.read, 0)]
		if len(p) == 0 {
			return 0, fmt.Errorf("read past byte %d before the first document came out", t.limit)
		}
	}
	n, err := t.r.Read(p)
	t.read += n
	return n, err
}

func TestDecoderStreams(t *testing.T) {
	// The first document comes out once it and the separator after it are
	// read, and the Decoder reads at most its buffer ahead: never the
	// whole input.
	var b strings.Builder
	for i := range 20000 {
		fmt.Fprintf(&b, "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p%d\n---\n", i)
	}
	first := len("apiVersion: v1\nkind: Pod\nmetadata:\n  name: p0\n---\n")
	tw := &tripwire{r: strings.NewReader(b.String()), limit: first + decoderBuffer, armed: true}
	dec := NewDecoder("pods.yaml", tw, 0)
	if !dec.Next() {
		t.Fatalf("Decoder.Next() = false (%v), want the first document", dec.Err())
	}
	if got := dec.Objects()[0].Value["metadata"].(map[string]any)["name"]; got != "p0" {
		t.Errorf("first document = %v, want p0", got)
	}
	tw.armed = false
	n := 1
	for dec.Next() {
		n++
	}
	if err := dec.Err(); err != nil || n != 20000 {
		t.Errorf("Decoder read %d documents, error %v; want 20000, nil", n, err)
	}
}

func TestDecoderReadError(t *testing.T) {
	boom := errors.New("boom")
	r := io.MultiReader(strings.NewReader("a: 1\n---\nb: 2\n---\n"), iotest.ErrReader(boom))
	dec := NewDecoder("r.yaml", r, 0)
	n := 0
	for dec.Next() {
		n++
	}
	if n != 2 || !errors.Is(dec.Err(), boom) {
		t.Errorf("Decoder over a failing reader: %d documents, error %v; want 2, %v", n, dec.Err(), boom)
	}
}

// FuzzDecoder checks that a Decoder reads any input as SplitDocuments
// does, whatever the sizes of the reads.
func FuzzDecoder(f *testing.F) {
	for _, s := range decoderInputs {
		f.Add([]byte(s), false)
	}
	for _, s := range yamlSeeds {
		f.Add([]byte(s), true)
	}
	f.Fuzz(func(t *testing.T, data []byte, oneByte bool) {
		wantObjs, wantErr := SplitDocuments("r.yaml", data)
		var r io.Reader = strings.NewReader(string(data))
		if oneByte {
			r = iotest.OneByteReader(r)
		}
		got, err := decodeAll(r, len(data)+1)
		if errString(err) != errString(wantErr) {
			t.Fatalf("Decoder(%q) error = %v, want %v", data, err, wantErr)
		}
		if len(got) == 0 && len(wantObjs) == 0 {
			return
		}
		if diff := cmp.Diff(wantObjs, got); diff != "" {
			t.Fatalf("Decoder(%q) mismatch with SplitDocuments (-want +got):\n%s", data, diff)
		}
	})
}

// TestDecoderReusedBuffers decodes every input from several goroutines at
// once, one Decoder after another in each: the read buffers that finished
// Decoders give back must carry nothing into the next input.
func TestDecoderReusedBuffers(t *testing.T) {
	const goroutines = 4
	errs := make(chan string, goroutines*len(decoderInputs))
	var wg sync.WaitGroup
	for range goroutines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for _, give := range decoderInputs {
				wantObjs, wantErr := SplitDocuments("r.yaml", []byte(give))
				dec := NewDecoder("r.yaml", strings.NewReader(give), 0)
				var got []Object
				for dec.Next() {
					got = append(got, dec.Objects()...)
				}
				if dec.Next() {
					errs <- fmt.Sprintf("Decoder(%q).Next() after the end = true, want false", give)
				}
				err := dec.Err()
				if errString(err) != errString(wantErr) {
					errs <- fmt.Sprintf("Decoder(%q) error = %v, want %v", give, err, wantErr)
					continue
				}
				if err == nil && (len(got) > 0 || len(wantObjs) > 0) {
					if diff := cmp.Diff(wantObjs, got); diff != "" {
						errs <- fmt.Sprintf("Decoder(%q) mismatch with SplitDocuments (-want +got):\n%s", give, diff)
					}
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}
