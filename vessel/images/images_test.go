package images

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"hash/crc32"
	"image"
	"image/color"
	"image/gif"
	"image/jpeg"
	"image/png"
	"strings"
	"testing"
)

func pic(w, h int) image.Image {
	im := image.NewRGBA(image.Rect(0, 0, w, h))
	im.Set(0, 0, color.RGBA{R: 255, A: 255})
	return im
}

func pngBytes(t testing.TB, w, h int) []byte {
	var b bytes.Buffer
	if err := png.Encode(&b, pic(w, h)); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func jpegBytes(t testing.TB) []byte {
	var b bytes.Buffer
	if err := jpeg.Encode(&b, pic(4, 3), nil); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func gifBytes(t testing.TB) []byte {
	var b bytes.Buffer
	if err := gif.Encode(&b, pic(4, 3), nil); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// webpBytes is a 1×1 lossless WebP (no encoder in the standard library;
// these 44 bytes are a complete VP8L file built by hand: RIFF header, a
// VP8L chunk with a 1×1 image).
func webpBytes(t testing.TB) []byte {
	b, err := base64.StdEncoding.DecodeString("UklGRiQAAABXRUJQVlA4TBgAAAAvAAAAEAcQERGIiP4HAA==")
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// pngHeader is a PNG whose IHDR claims the given size; DecodeConfig reads
// only the header, which is what the dimension check uses.
func pngHeader(t testing.TB, w, h uint32) []byte {
	b := pngBytes(t, 1, 1)
	out := append([]byte(nil), b...)
	put := func(off int, v uint32) {
		out[off], out[off+1], out[off+2], out[off+3] = byte(v>>24), byte(v>>16), byte(v>>8), byte(v)
	}
	put(16, w)
	put(20, h)
	put(29, crc32.ChecksumIEEE(out[12:29])) // IHDR's CRC covers type and data
	return out
}

func TestAcceptsEveryFormat(t *testing.T) {
	cases := map[string][]byte{
		"image/png":  pngBytes(t, 4, 3),
		"image/jpeg": jpegBytes(t),
		"image/gif":  gifBytes(t),
		"image/webp": webpBytes(t),
		// Parameters and case are ignored.
		"Image/PNG; charset=binary": pngBytes(t, 1, 1),
	}
	for mt, data := range cases {
		if err := Check(mt, data); err != nil {
			t.Errorf("%s refused: %v", mt, err)
		}
	}
	var parts []Part
	for mt, data := range cases {
		parts = append(parts, Part{MediaType: mt, Data: data})
	}
	parts = append(parts, Part{MediaType: "text/plain", Data: []byte("not an image")})
	got, err := Collect(parts, true)
	if err != nil || len(got) != 5 {
		t.Fatalf("Collect = %d images, %v", len(got), err)
	}
}

func TestRejections(t *testing.T) {
	png1 := pngBytes(t, 2, 2)
	nine := make([]Part, 9)
	for i := range nine {
		nine[i] = Part{MediaType: "image/png", Data: png1}
	}
	big := append(append([]byte(nil), png1...), make([]byte, MaxBytes)...)
	cases := []struct {
		name    string
		parts   []Part
		accepts bool
		want    string
	}{
		{"model does not accept images", []Part{{MediaType: "image/png", Data: png1}}, false, "this agent's model does not accept images"},
		{"URL part", []Part{{MediaType: "image/png", URL: "https://example.invalid/a.png"}}, true, "image 1 is a URL; attach images as raw bytes"},
		{"URL part without type", []Part{{URL: "file:///etc/passwd"}}, true, "is a URL"},
		{"too many", nine, true, "at most 8 images"},
		{"too large", []Part{{MediaType: "image/png", Data: big}}, true, "at most 5242880 (5 MB)"},
		{"empty", []Part{{MediaType: "image/png"}}, true, "the image is empty"},
		{"unsupported type", []Part{{MediaType: "image/svg+xml", Data: []byte("<svg/>")}}, true, `the type "image/svg+xml" is not accepted`},
		{"bmp", []Part{{MediaType: "image/bmp", Data: []byte("BM")}}, true, "not accepted; send PNG, JPEG, GIF or WebP"},
		{"not an image", []Part{{MediaType: "image/png", Data: []byte("hello, world")}}, true, "not a readable PNG image"},
		{"truncated", []Part{{MediaType: "image/jpeg", Data: jpegBytes(t)[:10]}}, true, "not a readable JPEG image"},
		{"declared png is jpeg", []Part{{MediaType: "image/png", Data: jpegBytes(t)}}, true, "declared as image/png but the bytes are JPEG"},
		{"declared webp is gif", []Part{{MediaType: "image/webp", Data: gifBytes(t)}}, true, "declared as image/webp but the bytes are GIF"},
		{"declared gif is webp", []Part{{MediaType: "image/gif", Data: webpBytes(t)}}, true, "declared as image/gif but the bytes are WEBP"},
		{"huge dimensions", []Part{{MediaType: "image/png", Data: pngHeader(t, 100000, 10)}}, true, "each side must be 1 to 16384"},
		{"second image bad", []Part{{MediaType: "image/png", Data: png1}, {MediaType: "image/gif", Data: png1}}, true, "image 2: it is declared as image/gif but the bytes are PNG"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := Collect(c.parts, c.accepts)
			if err == nil {
				t.Fatalf("accepted %d images", len(got))
			}
			if !errors.Is(err, ErrRejected) {
				t.Fatalf("error does not wrap ErrRejected: %v", err)
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %q, want it to contain %q", err, c.want)
			}
		})
	}
}

func TestContentParts(t *testing.T) {
	png1 := pngBytes(t, 1, 1)
	c, err := UserContent("what is this?", []Image{{MediaType: "image/png", Data: png1}})
	if err != nil {
		t.Fatal(err)
	}
	var parts []map[string]any
	if err := json.Unmarshal(c, &parts); err != nil {
		t.Fatal(err)
	}
	if len(parts) != 2 || parts[0]["type"] != "text" || parts[0]["text"] != "what is this?" || parts[1]["type"] != "image_url" {
		t.Fatalf("parts = %s", c)
	}
	url := parts[1]["image_url"].(map[string]any)["url"].(string)
	if url != "data:image/png;base64,"+base64.StdEncoding.EncodeToString(png1) {
		t.Fatalf("url = %.60s", url)
	}
	plain, _ := UserContent("hi", nil)
	if string(plain) != `"hi"` {
		t.Fatalf("no images: %s", plain)
	}
}

func FuzzCheck(f *testing.F) {
	f.Add("image/png", pngBytes(f, 1, 1))
	f.Add("image/webp", webpBytes(f))
	f.Add("image/gif", gifBytes(f))
	f.Add("image/jpeg", []byte{0xff, 0xd8, 0xff})
	f.Fuzz(func(t *testing.T, mt string, data []byte) {
		if err := Check(mt, data); err != nil && !errors.Is(err, ErrRejected) {
			t.Fatalf("unwrapped error: %v", err)
		}
	})
}
