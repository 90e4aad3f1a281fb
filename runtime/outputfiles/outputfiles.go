// Package outputfiles is the one rule set for files that tools return:
// which names, types and sizes are allowed, what each type's content must
// be, and how many a call and a turn may return. The spec has files checked
// twice: sandboxd applies these rules to a call's outbox, and the vessel
// applies them again to whatever the sandbox sends before a file becomes an
// A2A artifact. Both import this package so the two checks cannot drift.
package outputfiles

import (
	"bytes"
	"encoding/csv"
	"encoding/xml"
	"fmt"
	"image/png"
	"io"
	"regexp"
	"strings"
	"unicode/utf8"
)

// Limits on returned files (decimal megabytes, like the spec's body limit).
const (
	MaxFileBytes = 4_000_000
	MaxPerCall   = 4
	MaxPerTurn   = 8
	MaxTurnBytes = 16_000_000
)

// Types are the file types an agent may list in [output] files, in the
// spec's order.
var Types = []string{"png", "svg", "csv", "pdf"}

var mediaTypes = map[string]string{
	"png": "image/png",
	"svg": "image/svg+xml",
	"csv": "text/csv",
	"pdf": "application/pdf",
}

// MediaType is the media type of a file type (an extension such as "png",
// any case, with or without its dot); "" for a type not in Types.
func MediaType(ext string) string {
	return mediaTypes[strings.ToLower(strings.TrimPrefix(ext, "."))]
}

// NamePattern is what a returned file's name must match: ASCII letters,
// digits, dot, dash and underscore only, so a name cannot hold a path
// separator, a control character or anything that is not UTF-8, and a
// first character that rules out dot-files.
var NamePattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$`)

// Why a file over the count limits is refused.
var (
	PerCallReason = fmt.Sprintf("a call may return at most %d files", MaxPerCall)
	PerTurnReason = fmt.Sprintf("a turn may return at most %d files and %d bytes", MaxPerTurn, MaxTurnBytes)
)

// Allowed is the set of file types an agent may return.
type Allowed map[string]bool

// AllowedTypes builds the set from a manifest's [output] files, keeping
// only types in Types.
func AllowedTypes(files []string) Allowed {
	set := Allowed{}
	for _, f := range files {
		ext := strings.ToLower(strings.TrimPrefix(f, "."))
		if mediaTypes[ext] != "" {
			set[ext] = true
		}
	}
	return set
}

// CheckName decides on a file's name: it returns the file's type (its
// extension, lower case) or, in reason, why the file is refused.
func CheckName(name string, allowed Allowed) (ext, reason string) {
	if !NamePattern.MatchString(name) {
		return "", "the name must be 1 to 128 of [A-Za-z0-9._-] and not start with a dot"
	}
	dot := strings.LastIndexByte(name, '.')
	if dot < 0 {
		return "", "the name has no extension"
	}
	ext = strings.ToLower(name[dot+1:])
	if !allowed[ext] || mediaTypes[ext] == "" {
		return "", fmt.Sprintf("files of type %q are not allowed for this agent", ext)
	}
	return ext, ""
}

// CheckSize refuses a file of n bytes over MaxFileBytes.
func CheckSize(n int64) string {
	if n > MaxFileBytes {
		return fmt.Sprintf("it is larger than %d bytes", MaxFileBytes)
	}
	return ""
}

// CheckContent decides on a file's content once its name gave its type:
// the size limit, then that the content really is of that type.
func CheckContent(ext string, content []byte) string {
	if why := CheckSize(int64(len(content))); why != "" {
		return why
	}
	return Sniff(ext, content)
}

// Check decides on a file held in memory, as the vessel receives it: it
// returns the media type the file goes out with (from its checked content,
// never from whoever sent it) or, in reason, why it is refused.
func Check(name string, content []byte, allowed Allowed) (mediaType, reason string) {
	ext, why := CheckName(name, allowed)
	if why != "" {
		return "", why
	}
	if why := CheckContent(ext, content); why != "" {
		return "", why
	}
	return mediaTypes[ext], ""
}

// Tally counts a turn's accepted files against MaxPerTurn and
// MaxTurnBytes. It is not safe for concurrent use: a caller sharing one
// between goroutines holds its own lock.
type Tally struct {
	files int
	bytes int64
}

// Reserve counts one more file of n bytes, returning false (and counting
// nothing) when it would exceed the turn's limits.
func (t *Tally) Reserve(n int64) bool {
	if t.files+1 > MaxPerTurn || t.bytes+n > MaxTurnBytes {
		return false
	}
	t.files++
	t.bytes += n
	return true
}

// Sniff checks that content really is of type ext; it returns why not.
func Sniff(ext string, content []byte) string {
	switch ext {
	case "png":
		if _, err := png.DecodeConfig(bytes.NewReader(content)); err != nil {
			return "the content is not a PNG image"
		}
	case "pdf":
		if !bytes.HasPrefix(content, []byte("%PDF-")) {
			return "the content is not a PDF (no %PDF- header)"
		}
		tail := content[max(0, len(content)-1024):]
		if !bytes.Contains(tail, []byte("%%EOF")) {
			return "the content is not a complete PDF (no %%EOF trailer)"
		}
	case "svg":
		if why := sniffSVG(content); why != "" {
			return why
		}
	case "csv":
		if why := sniffCSV(content); why != "" {
			return why
		}
	default:
		return fmt.Sprintf("files of type %q are not supported", ext)
	}
	return ""
}

func sniffSVG(content []byte) string {
	if !utf8.Valid(content) {
		return "the content is not UTF-8 XML"
	}
	dec := xml.NewDecoder(bytes.NewReader(content))
	root := ""
	depth := 0
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			return "the content is not well-formed XML"
		}
		switch t := tok.(type) {
		case xml.StartElement:
			if root == "" {
				root = t.Name.Local
			} else if depth == 0 {
				return "the XML has more than one root element"
			}
			depth++
		case xml.EndElement:
			depth--
		case xml.CharData:
			if depth == 0 && len(bytes.TrimSpace(t)) > 0 {
				return "the XML has text outside its root element"
			}
		}
	}
	if root != "svg" {
		return "the XML's root element is not <svg>"
	}
	return ""
}

func sniffCSV(content []byte) string {
	if !utf8.Valid(content) || bytes.IndexByte(content, 0) >= 0 {
		return "the content is not UTF-8 text"
	}
	r := csv.NewReader(bytes.NewReader(content))
	r.FieldsPerRecord = 0 // every row as wide as the first
	rows := 0
	for {
		_, err := r.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return fmt.Sprintf("the content is not valid CSV: %v", err)
		}
		rows++
	}
	if rows == 0 {
		return "the CSV is empty"
	}
	return ""
}
