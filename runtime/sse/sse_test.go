package sse

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

func lines(t *testing.T, in string, max int) ([]string, error) {
	t.Helper()
	r := NewReader(iotest.OneByteReader(strings.NewReader(in)), max)
	defer r.Release()
	var out []string
	for {
		l, err := r.Line()
		if err != nil {
			if len(l) > 0 {
				out = append(out, string(l))
			}
			if errors.Is(err, io.EOF) {
				return out, nil
			}
			return out, err
		}
		out = append(out, string(l))
	}
}

func TestLine(t *testing.T) {
	got, err := lines(t, "data: a\r\n\nevent: x\n: c\ndata: last", 64)
	want := []string{"data: a", "", "event: x", ": c", "data: last"}
	if err != nil || strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("lines = %q, %v; want %q", got, err, want)
	}
}

// TestLineBound: the bound counts the line's end; a longer line fails
// without being held whole, also one longer than the buffer.
func TestLineBound(t *testing.T) {
	for _, tc := range []struct {
		in  string
		max int
		ok  bool
	}{
		{"12345\n", 6, true},
		{"123456\n", 6, false},
		{strings.Repeat("x", BufferSize+10) + "\n", BufferSize + 11, true},
		{strings.Repeat("x", BufferSize+10) + "\n", BufferSize + 10, false},
		{strings.Repeat("x", 3*BufferSize) + "\n", BufferSize + 10, false},
	} {
		r := NewReader(strings.NewReader(tc.in), tc.max)
		l, err := r.Line()
		if tc.ok && (err != nil || len(l) != len(tc.in)-1) {
			t.Errorf("%d bytes, bound %d: %d, %v; want the line", len(tc.in), tc.max, len(l), err)
		}
		if !tc.ok && (!errors.Is(err, ErrLineTooLong) || l != nil) {
			t.Errorf("%d bytes, bound %d: %d, %v; want ErrLineTooLong", len(tc.in), tc.max, len(l), err)
		}
		r.Release()
	}
}

func TestField(t *testing.T) {
	for _, tc := range []struct{ line, name, value string }{
		{"data: x", "data", "x"},
		{"data:x", "data", "x"},
		{"data:  x ", "data", " x "},
		{"data", "data", ""},
		{": comment", "", ""},
		{"", "", ""},
		{`error: {"a":1}`, "error", `{"a":1}`},
		{`{"error":"x"}`, `{"error"`, `"x"}`},
	} {
		n, v := Field([]byte(tc.line))
		if string(n) != tc.name || string(v) != tc.value {
			t.Errorf("Field(%q) = %q, %q; want %q, %q", tc.line, n, v, tc.name, tc.value)
		}
	}
}

func TestEvent(t *testing.T) {
	in := ": hello\n\nevent: status\nid: 7\ndata: {\"a\":\ndata: 1}\n\nretry: 5\n\ndata: two\r\n\r\ndata: cut"
	r := NewReader(strings.NewReader(in), 1<<10)
	defer r.Release()
	var got []string
	for {
		ev, err := r.Event()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, ev.Type+"/"+ev.ID+"/"+string(ev.Data))
	}
	want := []string{"status/7/{\"a\":\n1}", "//two"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("events = %q, want %q", got, want)
	}
}

// FuzzLine: the lines are the input split at LF, a CR before each LF
// dropped, each at most the bound with its end; nothing is lost or added.
func FuzzLine(f *testing.F) {
	f.Add([]byte("data: a\r\n\n: c\nerror: x\n{\"a\":1}\ndata: [DONE]"), 8)
	f.Add([]byte("\r\r\n\n\r"), 1)
	f.Fuzz(func(t *testing.T, in []byte, max int) {
		if max <= 0 || max > 1<<20 {
			return
		}
		r := NewReader(bytes.NewReader(in), max)
		defer r.Release()
		rest := in
		for {
			l, err := r.Line()
			if errors.Is(err, ErrLineTooLong) {
				i := bytes.IndexByte(rest, '\n')
				if i < 0 {
					i = len(rest) - 1
				}
				if i+1 <= max {
					t.Fatalf("a line of %d bytes refused under bound %d", i+1, max)
				}
				return
			}
			raw, after, found := bytes.Cut(rest, []byte{'\n'})
			want := bytes.TrimSuffix(raw, []byte{'\r'})
			if !bytes.Equal(l, want) {
				t.Fatalf("line %q, want %q", l, want)
			}
			if err != nil {
				if found || !errors.Is(err, io.EOF) {
					t.Fatalf("error %v with input left", err)
				}
				return
			}
			rest = after
		}
	})
}

func TestReadAll(t *testing.T) {
	got, err := ReadAll(strings.NewReader(": hi\n\ndata: 1\n\ndata: [DONE]\n\ndata: cut"), 64)
	if err != nil || len(got) != 2 || string(got[0]) != "1" || string(got[1]) != "[DONE]" {
		t.Fatalf("ReadAll = %q, %v", got, err)
	}
	if _, err := ReadAll(strings.NewReader("data: 12345678\n\n"), 8); !errors.Is(err, ErrLineTooLong) {
		t.Fatalf("over the bound: %v", err)
	}
}

func TestEventTooLarge(t *testing.T) {
	// many short data lines: each far under the line bound, together over the event bound
	body := strings.Repeat("data: abcdefgh\n", 100) + "\n"
	r := NewReader(strings.NewReader(body), 64)
	r.SetMaxEvent(100)
	_, err := r.Event()
	r.Release()
	if !errors.Is(err, ErrEventTooLarge) || !strings.Contains(err.Error(), "100 bytes") {
		t.Fatalf("over the event bound: %v, want ErrEventTooLarge naming the bound", err)
	}
	// exactly at the bound: 10 lines of 8 bytes and 9 LFs between them = 89
	body = strings.Repeat("data: abcdefgh\n", 10) + "\n"
	r = NewReader(strings.NewReader(body), 64)
	defer r.Release()
	r.SetMaxEvent(89)
	ev, err := r.Event()
	if err != nil || len(ev.Data) != 89 {
		t.Fatalf("at the bound: %d bytes, %v", len(ev.Data), err)
	}
	r.SetMaxEvent(0)
	if r.maxEvent != DefaultMaxEvent {
		t.Fatalf("SetMaxEvent(0): bound %d, want the default %d", r.maxEvent, DefaultMaxEvent)
	}
	if r := NewReader(strings.NewReader(""), DefaultMaxEvent*2); r.maxEvent != DefaultMaxEvent*2 {
		t.Fatalf("a line bound over the default: event bound %d", r.maxEvent)
	} else {
		r.Release()
	}
}

// FuzzEvent: no event's data passes the event bound, and the bound is
// only reported when the data lines really pass it.
func FuzzEvent(f *testing.F) {
	f.Add([]byte("data: a\ndata: b\n\nevent: x\ndata: c\r\n\n"), 3)
	f.Add([]byte("data:\ndata:\ndata:\n\n"), 1)
	f.Fuzz(func(t *testing.T, in []byte, maxEvent int) {
		if maxEvent <= 0 || maxEvent > 1<<20 {
			return
		}
		r := NewReader(bytes.NewReader(in), 1<<20)
		defer r.Release()
		r.SetMaxEvent(maxEvent)
		for {
			ev, err := r.Event()
			if errors.Is(err, ErrEventTooLarge) {
				if !bytes.Contains(in, []byte("data")) {
					t.Fatalf("event bound reported for input without data lines")
				}
				return
			}
			if err != nil {
				return
			}
			if len(ev.Data) > maxEvent {
				t.Fatalf("event of %d bytes under bound %d", len(ev.Data), maxEvent)
			}
		}
	})
}

// readLines is every line r gives until the stream's end, ErrLineTooLong
// as "!" (the reader passes over the rest of that line and goes on). Each
// whole line read (its end read too), ended, when set, is told how many
// lines, "!" included, were read with it.
func readLines(r *Reader, feed func() bool, ended func(n int)) []string {
	var out []string
	for {
		l, err := r.Line()
		switch {
		case errors.Is(err, ErrMore):
			if !feed() {
				r.End()
			}
			continue
		case errors.Is(err, ErrLineTooLong):
			out = append(out, "!")
			continue
		case err != nil:
			if len(l) > 0 {
				out = append(out, string(l))
			}
			return out
		}
		out = append(out, string(l))
		if ended != nil {
			ended(len(out))
		}
	}
}

// FuzzFedReader: a fed reader, handed the stream in pieces of any size,
// reads the same lines as a reader of the whole stream, refuses the same
// lines over the bound, and after each line counts as unread exactly the
// bytes fed after its end.
func FuzzFedReader(f *testing.F) {
	f.Add([]byte("data: a\r\n\n: c\nerror: x\n{\"a\":1}\ndata: [DONE]"), 8, uint8(3))
	f.Add([]byte("12345678901234\nab\n123456789"), 6, uint8(4))
	f.Add([]byte("\r\r\n\n\r"), 1, uint8(1))
	f.Fuzz(func(t *testing.T, in []byte, max int, piece uint8) {
		if max <= 0 || max > 1<<20 {
			return
		}
		whole := NewReader(bytes.NewReader(in), max)
		want := readLines(whole, nil, nil)
		whole.Release()
		n := int(piece)%23 + 1
		r := NewFedReader(max)
		defer r.Release()
		var ends []int // the offset just after each LF of in
		for i, c := range in {
			if c == '\n' {
				ends = append(ends, i+1)
			}
		}
		rest, fed := in, 0
		feed := func() bool {
			if len(rest) == 0 {
				return false
			}
			k := min(n, len(rest))
			r.Feed(rest[:k])
			rest, fed = rest[k:], fed+k
			return true
		}
		// The n-th line (one over the bound counted) ends at the n-th LF:
		// what was fed beyond it is what Unread counts.
		ended := func(lines int) {
			if got := fed - r.Unread(); got != ends[lines-1] {
				t.Fatalf("fed in pieces of %d: after line %d, %d bytes fed and %d unread: read up to %d, want %d",
					n, lines, fed, r.Unread(), got, ends[lines-1])
			}
		}
		got := readLines(r, feed, ended)
		if strings.Join(got, "\x00|") != strings.Join(want, "\x00|") {
			t.Fatalf("fed in pieces of %d: %q, want %q", n, got, want)
		}
	})
}

// TestFedReaderUnread: after a line, Unread is the bytes of the current
// piece that follow its end, where a caller cuts the stream.
func TestFedReaderUnread(t *testing.T) {
	r := NewFedReader(64)
	defer r.Release()
	r.Feed([]byte("data: a"))
	if _, err := r.Line(); !errors.Is(err, ErrMore) {
		t.Fatalf("a line without its end: %v, want ErrMore", err)
	}
	piece := []byte("bc\r\ndata: d\nda")
	r.Feed(piece)
	l, err := r.Line()
	if err != nil || string(l) != "data: abc" || r.Unread() != len("data: d\nda") {
		t.Fatalf("line %q, %v, unread %d", l, err, r.Unread())
	}
	l, err = r.Line()
	if err != nil || string(l) != "data: d" || len(piece)-r.Unread() != len(piece)-2 {
		t.Fatalf("line %q, %v, unread %d", l, err, r.Unread())
	}
	if _, err := r.Line(); !errors.Is(err, ErrMore) {
		t.Fatalf("%v, want ErrMore", err)
	}
	r.End()
	if l, err := r.Line(); !errors.Is(err, io.EOF) || string(l) != "da" {
		t.Fatalf("at the end: %q, %v", l, err)
	}
}

// TestFedReaderLargePiece: a piece larger than the reader's buffer is read
// whole, and after each line Unread is exactly what follows it.
func TestFedReaderLargePiece(t *testing.T) {
	line := "data: " + strings.Repeat("x", 90) + "\n"
	piece := []byte(strings.Repeat(line, 3*BufferSize/len(line)))
	r := NewFedReader(128)
	defer r.Release()
	r.Feed(piece)
	for i := 1; ; i++ {
		l, err := r.Line()
		if errors.Is(err, ErrMore) {
			if i-1 != len(piece)/len(line) {
				t.Fatalf("read %d lines of %d", i-1, len(piece)/len(line))
			}
			return
		}
		if err != nil || len(l) != len(line)-1 || r.Unread() != len(piece)-i*len(line) {
			t.Fatalf("line %d: %d bytes, %v, unread %d", i, len(l), err, r.Unread())
		}
	}
}

// TestFedReaderLongLineBounded: a fed reader handed megabytes with no line
// end holds no more than its bound and one buffer's worth beyond it (the
// line buffer's capacity, which append may have doubled), however the
// bytes come, holds no more once the line is refused, and reads the next
// line after that one.
func TestFedReaderLongLineBounded(t *testing.T) {
	const bound = 16 << 10
	for _, piece := range []int{1000, FedBufferSize, 3*FedBufferSize + 7, 1 << 20} {
		r := NewFedReader(bound)
		chunk := bytes.Repeat([]byte("x"), piece)
		tooLong, held := 0, 0
		for fed := 0; fed < 4<<20; fed += piece {
			r.Feed(chunk)
			for {
				_, err := r.Line()
				if errors.Is(err, ErrMore) {
					break
				}
				if !errors.Is(err, ErrLineTooLong) {
					t.Fatalf("pieces of %d: %v, want ErrLineTooLong or ErrMore", piece, err)
				}
				tooLong++
			}
			c := cap(r.long)
			if c > 2*(bound+FedBufferSize) || tooLong > 0 && held > 0 && c > held {
				t.Fatalf("pieces of %d: %d bytes fed, line buffer of %d (%d before), bound %d", piece, fed+piece, c, held, bound)
			}
			if tooLong > 0 {
				held = c
			}
			if r.br.Size() != FedBufferSize {
				t.Fatalf("fed reader's buffer is %d bytes, want %d", r.br.Size(), FedBufferSize)
			}
		}
		if tooLong != 1 {
			t.Fatalf("pieces of %d: %d lines refused, want 1", piece, tooLong)
		}
		r.Feed([]byte("\ndata: a\n"))
		if l, err := r.Line(); err != nil || string(l) != "data: a" {
			t.Fatalf("pieces of %d: after the long line: %q, %v", piece, l, err)
		}
		r.Release()
	}
}
