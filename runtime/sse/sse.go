// Package sse reads text/event-stream bodies (server-sent events): the one
// reader of the repository. The vessel's model adapter reads its
// provider's stream line by line through it (Reader.Line) and matches the
// field prefixes itself (vessel/model/stream.go: it trims the space around
// a value and tolerates lines that are not SSE, which Field does not), the
// conformance suite reads whole events (Reader.Event), tests read a whole
// answer's events (ReadAll), the egress's usage count feeds the bytes it
// passes on to a fed reader (NewFedReader) and reads the lines going by,
// and the vessel's HTTP+JSON error check reads lines it already holds
// with Field.
//
// A line ends at LF; a CR before it is dropped (CRLF). A lone CR does not
// end a line: no server the services read sends one. Lines are bounded:
// a longer one is never held whole (ErrLineTooLong). So is an event's
// joined data, which many short data lines could otherwise grow without
// end (ErrEventTooLarge; Reader.SetMaxEvent).
package sse

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"sync"
)

// BufferSize is the size of the buffer a stream is read through; longer
// lines (up to the reader's bound) go to a buffer of their own.
const BufferSize = 64 << 10

// FedBufferSize is the size of a fed reader's buffer (NewFedReader). A fed
// reader lives as long as the stream it watches, so its buffer is held
// for the stream's whole life: it is kept small, and a longer line (up
// to the reader's bound) goes to the buffer of its own as in any reader.
const FedBufferSize = 4 << 10

// ErrLineTooLong is returned once a line passes the reader's bound.
var ErrLineTooLong = errors.New("sse: line too long")

// ErrEventTooLarge is returned (wrapped, with the bound) once an event's
// joined data passes the reader's event bound.
var ErrEventTooLarge = errors.New("sse: event too large")

// DefaultMaxEvent bounds an event's joined data unless SetMaxEvent says
// otherwise; a reader whose line bound is larger takes that instead, so
// an event of one data line is never refused below its line bound.
const DefaultMaxEvent = 16 << 20

// Reader reads one stream. Its lines and events are valid until the next
// call.
type Reader struct {
	br *bufio.Reader
	// long is a line longer than br's buffer, reused; in a fed reader it
	// also holds the start of a line whose end is not fed yet (non-empty
	// only then).
	long []byte
	// skip: the rest of a line over the bound is still to be passed over.
	skip bool
	fed  feed // a fed reader's source (NewFedReader)
	max  int
	data []byte // Event's data, reused
	// maxEvent bounds len(data) (SetMaxEvent)
	maxEvent int
	fedPool  bool // Release puts it in fedReaders, not readers
}

// ErrMore is a fed reader's (NewFedReader) answer when the bytes fed so
// far hold no further whole line: Feed the next bytes, or End.
var ErrMore = errors.New("sse: more bytes needed")

// feed is a fed reader's source: the bytes Feed handed over that the
// buffer has not taken yet.
type feed struct {
	b   []byte
	end bool
}

func (f *feed) Read(p []byte) (int, error) {
	if len(f.b) == 0 {
		if f.end {
			return 0, io.EOF
		}
		return 0, ErrMore
	}
	n := copy(p, f.b)
	f.b = f.b[n:]
	return n, nil
}

// readers holds the readers of finished streams: the model adapter reads
// a stream per step of a turn, and each would otherwise allocate its
// buffer. The buffer's size is fixed, so a pooled reader holds at most
// BufferSize beyond its longest line's buffer, which Release drops when
// it grew past BufferSize.
var readers = sync.Pool{New: func() any { return &Reader{br: bufio.NewReaderSize(nil, BufferSize)} }}

// fedReaders holds the fed readers of finished streams, whose buffer is
// FedBufferSize: a pool of their own, so that a fed reader never takes a
// reader with the larger buffer.
var fedReaders = sync.Pool{New: func() any { return &Reader{br: bufio.NewReaderSize(nil, FedBufferSize), fedPool: true} }}

// NewReader reads r with lines of at most maxLine bytes, their end (LF or
// CRLF) included. Release gives it back for reuse.
func NewReader(r io.Reader, maxLine int) *Reader {
	sr := readers.Get().(*Reader)
	sr.init(r, maxLine)
	return sr
}

func (r *Reader) init(src io.Reader, maxLine int) {
	r.br.Reset(src)
	r.max = maxLine
	r.maxEvent = max(DefaultMaxEvent, maxLine)
}

// NewFedReader is a reader of the bytes its caller hands it (Feed) rather
// than of a stream of its own: for a caller that passes a stream on
// unchanged, as its pieces come, and reads the lines going by (the
// egress's usage count). Its Line answers ErrMore once the bytes fed are
// read up to the last whole line; the start of a line whose end is not
// fed yet is kept for the next Feed. Event is not for a fed reader.
// Its buffer is FedBufferSize, held for the stream's whole life.
func NewFedReader(maxLine int) *Reader {
	sr := fedReaders.Get().(*Reader)
	sr.init(&sr.fed, maxLine)
	return sr
}

// Feed hands a fed reader the next bytes of the stream, to be read by
// Line until it answers ErrMore; b must stay unchanged until then. Feed
// before that (bytes fed before still unread) panics: they would be lost.
func (r *Reader) Feed(b []byte) {
	if len(r.fed.b) > 0 {
		panic("sse: Feed before the bytes fed before were read")
	}
	r.fed.b = b
}

// End tells a fed reader the stream ended: Line then answers what is
// left (a last line without its end) with io.EOF.
func (r *Reader) End() { r.fed.end = true }

// Unread is how many of the bytes fed no line returned so far covers:
// right after a line, the bytes fed after its end.
func (r *Reader) Unread() int { return len(r.fed.b) + r.br.Buffered() + len(r.long) }

// SetMaxEvent bounds the joined data of each event Event returns to n
// bytes (the LFs between data lines counted); n <= 0 restores the
// default (NewReader).
func (r *Reader) SetMaxEvent(n int) {
	if n <= 0 {
		n = max(DefaultMaxEvent, r.max)
	}
	r.maxEvent = n
}

// Release ends the reader's use: nothing it returned may be used after.
// A buffer grown for a long line is dropped, not pooled.
func (r *Reader) Release() {
	r.br.Reset(nil)
	r.long = nil
	r.skip = false
	r.fed = feed{}
	if cap(r.data) > BufferSize {
		r.data = nil
	}
	if r.fedPool {
		fedReaders.Put(r)
		return
	}
	readers.Put(r)
}

// Line reads the next line, its end removed. An error (io.EOF when the
// stream ended) comes with what the stream held after the last line end,
// possibly nothing; ErrLineTooLong comes with no line, as soon as the
// bound is passed, and the next call passes over the rest of that line
// first. A fed reader answers ErrMore (no line) where its bytes run out.
func (r *Reader) Line() ([]byte, error) {
	if r.skip {
		if err := r.skipRest(); err != nil {
			return nil, err
		}
	}
	line, err := r.br.ReadSlice('\n')
	if len(r.long) > 0 || err != nil && !errors.Is(err, io.EOF) {
		line, err = r.gather(line, err)
	}
	if len(line) > r.max || errors.Is(err, ErrLineTooLong) {
		return nil, ErrLineTooLong
	}
	if errors.Is(err, ErrMore) {
		return nil, ErrMore
	}
	if n := len(line); n > 0 && line[n-1] == '\n' {
		line = line[:n-1]
	}
	if n := len(line); n > 0 && line[n-1] == '\r' {
		line = line[:n-1]
	}
	return line, err
}

// gather joins in r.long a line that did not come whole from one read of
// the buffer: one longer than the buffer, or in a fed reader one whose
// start was fed before (held in r.long) or whose end is not fed yet (then
// held, ErrMore). It stops once the line passes the bound.
func (r *Reader) gather(first []byte, err error) ([]byte, error) {
	b := append(r.long, first...)
	for {
		if len(b) > r.max {
			r.long = b[:0]
			r.skip = errors.Is(err, bufio.ErrBufferFull) || errors.Is(err, ErrMore)
			return nil, ErrLineTooLong
		}
		if !errors.Is(err, bufio.ErrBufferFull) {
			break
		}
		var more []byte
		more, err = r.br.ReadSlice('\n')
		b = append(b, more...)
	}
	if errors.Is(err, ErrMore) {
		r.long = b
		return nil, ErrMore
	}
	r.long = b[:0]
	return b, err
}

// skipRest passes over the rest of a line that passed the bound.
func (r *Reader) skipRest() error {
	for {
		_, err := r.br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if !errors.Is(err, ErrMore) {
			r.skip = false
		}
		return err
	}
}

// Field splits a line into its field name and value: "data: x" is data
// and x (one space after the colon dropped, as SSE says), a line without a
// colon is a field with no value, a comment (":...") and a blank line have
// no name (tell them apart by the line's length). Names the SSE format
// does not define (error:, a JSON line) come back as they are, for a
// reader that tolerates them.
func Field(line []byte) (name, value []byte) {
	if len(line) == 0 || line[0] == ':' {
		return nil, nil
	}
	i := bytes.IndexByte(line, ':')
	if i < 0 {
		return line, nil
	}
	name, value = line[:i], line[i+1:]
	if len(value) > 0 && value[0] == ' ' {
		value = value[1:]
	}
	return name, value
}

// Event is one dispatched event: its type (event:, empty for the default
// "message"), id and data (the data lines joined by LF).
type Event struct {
	Type string
	ID   string
	Data []byte
}

// Event reads the next event: the lines up to a blank line that carried
// at least one data line (an event without data is not dispatched, as SSE
// says). io.EOF ends the stream; an event the stream ended inside is
// dropped. An event whose joined data would pass the event bound ends
// the read with ErrEventTooLarge (the rest of the event is not read).
// Data is valid until the next call.
func (r *Reader) Event() (Event, error) {
	var ev Event
	r.data = r.data[:0]
	hasData := false
	for {
		line, err := r.Line()
		if err != nil && (len(line) == 0 || !errors.Is(err, io.EOF)) {
			return Event{}, err
		}
		if err != nil {
			return Event{}, io.EOF // an unterminated last event is not dispatched
		}
		if len(line) == 0 {
			if hasData {
				ev.Data = r.data
				return ev, nil
			}
			ev = Event{}
			continue
		}
		name, value := Field(line)
		switch string(name) {
		case "data":
			sep := 0
			if hasData {
				sep = 1
			}
			if len(r.data)+sep+len(value) > r.maxEvent {
				return Event{}, fmt.Errorf("%w: its data passes %d bytes", ErrEventTooLarge, r.maxEvent)
			}
			if hasData {
				r.data = append(r.data, '\n')
			}
			r.data = append(r.data, value...)
			hasData = true
		case "event":
			ev.Type = string(value)
		case "id":
			ev.ID = string(value)
		}
	}
}

// ReadAll reads every event of a whole body (a test's answer, a held
// stream) and returns each one's data, copied, in order; an event the body
// ends inside is dropped, as Event drops it.
func ReadAll(body io.Reader, maxLine int) ([][]byte, error) {
	r := NewReader(body, maxLine)
	defer r.Release()
	var out [][]byte
	for {
		ev, err := r.Event()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		out = append(out, bytes.Clone(ev.Data))
	}
}
