// Package images checks the images a caller attaches to a turn and turns
// them into OpenAI image content parts.
//
// An image is accepted only as raw bytes (never a URL the vessel would have
// to fetch), only for agents whose model accepts images, at most MaxCount
// per turn and MaxBytes each, with a declared media type among PNG, JPEG,
// GIF and WebP that matches what the bytes decode as. Only the header is
// decoded (image.DecodeConfig), so checking costs little whatever the
// picture's size; dimensions are bounded too.
package images

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"image"
	_ "image/gif"  // registers GIF for DecodeConfig
	_ "image/jpeg" // registers JPEG
	_ "image/png"  // registers PNG
	"strings"

	_ "golang.org/x/image/webp" // registers WebP
)

// Limits of a turn's images.
const (
	MaxCount     = 8
	MaxBytes     = 5 << 20
	MaxDimension = 16384 // pixels per side
)

// formats maps an accepted media type to the name image.DecodeConfig
// reports for it.
var formats = map[string]string{
	"image/png":  "png",
	"image/jpeg": "jpeg",
	"image/gif":  "gif",
	"image/webp": "webp",
}

// MediaTypes lists the accepted media types (for the card's input modes).
func MediaTypes() []string { return []string{"image/png", "image/jpeg", "image/gif", "image/webp"} }

// Accepted reports whether mediaType (parameters and case ignored) is one
// of the accepted image types.
func Accepted(mediaType string) bool {
	_, ok := formats[normalize(mediaType)]
	return ok
}

// ErrRejected matches every refusal (errors.Is); the error's text is just
// the reason, a sentence meant for the caller.
var ErrRejected = errors.New("image rejected")

type rejection struct{ reason string }

func (r *rejection) Error() string        { return r.reason }
func (r *rejection) Is(target error) bool { return target == ErrRejected }

func rejectf(format string, args ...any) error {
	return &rejection{reason: fmt.Sprintf(format, args...)}
}

func normalize(mt string) string {
	mt = strings.ToLower(strings.TrimSpace(mt))
	if i := strings.IndexByte(mt, ';'); i >= 0 {
		mt = strings.TrimSpace(mt[:i])
	}
	return mt
}

// Check looks inside one image: the declared type is accepted, the size is
// within bounds, and the bytes decode as that same format with sane
// dimensions. It fits turn.Options.CheckImage.
func Check(mediaType string, data []byte) error {
	mt := normalize(mediaType)
	want, ok := formats[mt]
	if !ok {
		return rejectf("the type %q is not accepted; send PNG, JPEG, GIF or WebP", mediaType)
	}
	if len(data) == 0 {
		return rejectf("the image is empty")
	}
	if len(data) > MaxBytes {
		return rejectf("the image is %d bytes; at most %d (5 MB) are allowed", len(data), MaxBytes)
	}
	cfg, got, err := image.DecodeConfig(bytes.NewReader(data))
	if err != nil {
		return rejectf("the bytes are not a readable %s image", strings.ToUpper(want))
	}
	if got != want {
		return rejectf("it is declared as %s but the bytes are %s", mt, strings.ToUpper(got))
	}
	if cfg.Width <= 0 || cfg.Height <= 0 || cfg.Width > MaxDimension || cfg.Height > MaxDimension {
		return rejectf("it is %d×%d pixels; each side must be 1 to %d", cfg.Width, cfg.Height, MaxDimension)
	}
	return nil
}

// Image is an accepted image.
type Image struct {
	MediaType string
	Data      []byte
}

// Part is what the checks need to know of one message part.
type Part struct {
	MediaType string
	Data      []byte // raw bytes, for a raw part
	URL       string // set for a URL part
}

// Collect checks every image-like part of a turn, in order, and returns the
// accepted images. Parts whose media type is not image/* and that carry no
// URL are not images and are skipped. The first problem rejects the turn,
// with a sentence saying which image and why.
func Collect(parts []Part, acceptsImages bool) ([]Image, error) {
	var out []Image
	n := 0
	for _, p := range parts {
		mt := normalize(p.MediaType)
		isURL := p.URL != ""
		if !isURL && !strings.HasPrefix(mt, "image/") {
			continue
		}
		n++
		if isURL {
			return nil, rejectf("image %d is a URL; attach images as raw bytes instead", n)
		}
		if !acceptsImages {
			return nil, rejectf("this agent's model does not accept images")
		}
		if n > MaxCount {
			return nil, rejectf("at most %d images may be attached to one turn", MaxCount)
		}
		if err := Check(mt, p.Data); err != nil {
			return nil, fmt.Errorf("image %d: %w", n, err)
		}
		out = append(out, Image{MediaType: mt, Data: p.Data})
	}
	return out, nil
}

// DataURL is the image as a data: URL.
func (im Image) DataURL() string {
	return "data:" + im.MediaType + ";base64," + base64.StdEncoding.EncodeToString(im.Data)
}

// ContentPart is one OpenAI chat content part.
type ContentPart struct {
	Type     string    `json:"type"`
	Text     string    `json:"text,omitempty"`
	ImageURL *ImageURL `json:"image_url,omitempty"`
}

// ImageURL is an image_url content part's value.
type ImageURL struct {
	URL string `json:"url"`
}

// ContentParts builds a user message's content: the text, then each image
// as an image_url part carrying a data: URL.
func ContentParts(text string, imgs []Image) []ContentPart {
	parts := []ContentPart{{Type: "text", Text: text}}
	for _, im := range imgs {
		parts = append(parts, ContentPart{Type: "image_url", ImageURL: &ImageURL{URL: im.DataURL()}})
	}
	return parts
}

// UserContent is ContentParts encoded as a message content value (plain
// text when there are no images).
func UserContent(text string, imgs []Image) (json.RawMessage, error) {
	var v any = text
	if len(imgs) > 0 {
		v = ContentParts(text, imgs)
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("encode user content: %w", err)
	}
	return b, nil
}
