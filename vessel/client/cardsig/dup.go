package cardsig

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// ErrDuplicateMember is returned (wrapped) for JSON that names a member of
// one object twice.
var ErrDuplicateMember = errors.New("cardsig: a JSON object names a member twice")

// maxDepth bounds the nesting walked by noDuplicates.
const maxDepth = 64

// noDuplicates refuses JSON in which an object names a member twice. Go's
// encoding/json keeps the last, other readers the first: a signature over
// one reading proves nothing about the other.
func noDuplicates(doc []byte) error {
	dec := json.NewDecoder(bytes.NewReader(doc))
	dec.UseNumber()
	if err := walk(dec, 0); err != nil {
		return err
	}
	if _, err := dec.Token(); err != io.EOF {
		return errors.New("cardsig: trailing data after the JSON value")
	}
	return nil
}

func walk(dec *json.Decoder, depth int) error {
	if depth > maxDepth {
		return fmt.Errorf("cardsig: JSON nested deeper than %d", maxDepth)
	}
	tok, err := dec.Token()
	if err != nil {
		return fmt.Errorf("cardsig: read JSON: %w", err)
	}
	d, ok := tok.(json.Delim)
	if !ok {
		return nil
	}
	switch d {
	case '{':
		seen := map[string]bool{}
		for dec.More() {
			k, err := dec.Token()
			if err != nil {
				return fmt.Errorf("cardsig: read JSON: %w", err)
			}
			name, _ := k.(string)
			if seen[name] {
				return fmt.Errorf("%w: %q", ErrDuplicateMember, name)
			}
			seen[name] = true
			if err := walk(dec, depth+1); err != nil {
				return err
			}
		}
	case '[':
		for dec.More() {
			if err := walk(dec, depth+1); err != nil {
				return err
			}
		}
	}
	if _, err := dec.Token(); err != nil { // the closing delimiter
		return fmt.Errorf("cardsig: read JSON: %w", err)
	}
	return nil
}
