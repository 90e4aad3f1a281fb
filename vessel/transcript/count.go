package transcript

import (
	"bytes"

	"github.com/astraldeep/astralvessel-go/vessel/internal/jsonscan"
)

// CountMessages reads b, an envelope or only the start of one, as far as
// the list of its first member named exactly "messages", and counts that
// list's entries up to MaxMessages+1, each read whole as a JSON object
// (jsonscan.Skip: valid JSON, at most jsonscan.MaxDepth deep). It reads
// nothing after the (MaxMessages+1)th entry, so refusing a history over
// the cap costs what its first MaxMessages+1 messages cost to read, not
// what the whole history does.
//
// final reports that bytes after b cannot change n: the list
// holds more than MaxMessages entries (n is MaxMessages+1), or it ended,
// or something other than an object is where an entry should be (such a
// history is refused as malformed, not for its length), or b holds a
// whole object without the list (n is 0). A b cut before the list, even
// between two members, is not final. When b is a whole
// envelope, n over MaxMessages is exactly what Parse refuses for its
// length, whatever follows (another member named messages included:
// encoding/json would keep the last; Parse refuses the first when it is
// over the cap).
func CountMessages(b []byte) (n int, final bool) {
	var s jsonscan.Scanner
	s.Reset(b)
	if c := s.Peek(); c != '{' {
		return 0, c != 0
	}
	found := false
	whole := s.Object(func(key []byte) bool {
		if string(key) != "messages" {
			return s.Skip()
		}
		found = true
		n, final = countList(&s)
		return false
	})
	// Without the list, only an object read to its end is final: a cut
	// between two members stops Object with nothing left to read, and the
	// list may still follow.
	return n, final || (!found && whole)
}

// countList counts the entries of the list s is at (see CountMessages).
func countList(s *jsonscan.Scanner) (n int, final bool) {
	switch s.Peek() {
	case '[':
	case 0:
		return 0, false // cut before the list
	default:
		return 0, true // not a list
	}
	s.I++
	if s.Peek() == ']' {
		return 0, true
	}
	for {
		switch s.Peek() {
		case '{':
		case 0:
			return n, false
		default:
			return n, true
		}
		if !s.Skip() {
			return n, false // cut here, or malformed: only the whole history tells
		}
		n++
		if n > MaxMessages {
			return n, true
		}
		switch s.Peek() {
		case ',':
			s.I++
		case 0:
			return n, false
		default: // ']' ends the list; anything else makes it malformed
			return n, true
		}
	}
}

// overCap reports whether the whole envelope b holds more than MaxMessages
// messages by CountMessages. A list of that many entries holds at least
// as many '{', so a history with fewer is not read for it.
func overCap(b []byte) bool {
	if bytes.Count(b, []byte{'{'}) <= MaxMessages {
		return false
	}
	n, _ := CountMessages(b)
	return n > MaxMessages
}

// ErrOverCap is the reason a history over MaxMessages is refused.
var ErrOverCap error = invalid("the history holds more than %d messages; at most %d are allowed", MaxMessages, MaxMessages)
