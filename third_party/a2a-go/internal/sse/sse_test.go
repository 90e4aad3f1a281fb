// Copyright 2025 The A2A Authors
//
// Licensed under the Apache License, Version 2.0 (the "License");
// you may not use this file except in compliance with the License.
// You may obtain a copy of the License at
//
//     http://www.apache.org/licenses/LICENSE-2.0
//
// Unless required by applicable law or agreed to in writing, software
// distributed under the License is distributed on an "AS IS" BASIS,
// WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
// See the License for the specific language governing permissions and
// limitations under the License.

package sse

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
)

func TestSSE_Success(t *testing.T) {
	wantEvents := 10
	makeEvent := func(i int) string { return "hello " + strconv.Itoa(i) }
	server := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, req *http.Request) {
		ctx := req.Context()
		sse, err := NewWriter(rw)
		if err != nil {
			t.Fatalf("NewWriter() error = %v", err)
		}
		sse.WriteHeaders()
		for i := range wantEvents {
			if err := sse.WriteData(ctx, []byte(makeEvent(i))); err != nil {
				t.Fatalf("WriteKeepAlive() error = %v", err)
			}
			if i%3 == 0 {
				if err := sse.WriteKeepAlive(ctx); err != nil {
					t.Fatalf("WriteKeepAlive() error = %v", err)
				}
			}
		}
	}))

	ctx := t.Context()
	req, err := http.NewRequestWithContext(ctx, "POST", server.URL, nil)
	if err != nil {
		t.Fatalf("http.NewRequestWithContext() error = %v", err)
	}
	req.Header.Set("Accept", ContentEventStream)
	client := http.Client{}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("client.Do() error = %v", err)
	}
	defer func() { _ = resp.Body.Close() }()

	eventCount := 0
	for data, err := range ParseDataStream(resp.Body) {
		if err != nil {
			t.Fatalf("ParseDataStream() error = %v", err)
		}
		want := makeEvent(eventCount)
		if string(data) != want {
			t.Fatalf("ParseDataStream() = %q at %d, want %q", string(data), eventCount, want)
		}
		eventCount++
	}
	if eventCount != wantEvents {
		t.Fatalf("ParseDataStream() emitted %d events, want %d", eventCount, wantEvents)
	}

}

func TestSSE_LargePayload(t *testing.T) {
	// Create a payload larger than the default 64KB bufio.Scanner buffer
	// to verify that the increased buffer size works correctly.
	const payloadSize = 100 * 1024 // 100KB
	largePayload := strings.Repeat("x", payloadSize)

	server := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, req *http.Request) {
		ctx := req.Context()
		sse, err := NewWriter(rw)
		if err != nil {
			t.Fatalf("NewWriter() error = %v", err)
		}
		sse.WriteHeaders()
		if err := sse.WriteData(ctx, []byte(largePayload)); err != nil {
			t.Fatalf("WriteData() error = %v", err)
		}
	}))
	defer server.Close()

	ctx := t.Context()
	req, err := http.NewRequestWithContext(ctx, "POST", server.URL, nil)
	if err != nil {
		t.Fatalf("http.NewRequestWithContext() error = %v", err)
	}
	req.Header.Set("Accept", ContentEventStream)
	client := http.Client{}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("client.Do() error = %v", err)
	}
	defer func() { _ = resp.Body.Close() }()

	eventCount := 0
	for data, err := range ParseDataStream(resp.Body) {
		if err != nil {
			t.Fatalf("ParseDataStream() error = %v", err)
		}
		if len(data) != payloadSize {
			t.Fatalf("ParseDataStream() payload size = %d, want %d", len(data), payloadSize)
		}
		if string(data) != largePayload {
			t.Fatalf("ParseDataStream() payload content mismatch")
		}
		eventCount++
	}
	if eventCount != 1 {
		t.Fatalf("ParseDataStream() emitted %d events, want 1", eventCount)
	}
}

func TestSSE_MultiLineDataFieldsJoined(t *testing.T) {
	server := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, req *http.Request) {
		flusher, ok := rw.(http.Flusher)
		if !ok {
			t.Fatalf("streaming not supported")
		}
		rw.Header().Set("Content-Type", "text/event-stream")
		rw.WriteHeader(http.StatusOK)
		body := "data: {\ndata:   \"a\": 1,\ndata:   \"b\": [1,2,3]\ndata: }\n\n"
		if _, err := fmt.Fprint(rw, body); err != nil {
			t.Fatalf("Fprint() error = %v", err)
		}
		flusher.Flush()
	}))
	defer server.Close()

	ctx := t.Context()
	req, err := http.NewRequestWithContext(ctx, "POST", server.URL, nil)
	if err != nil {
		t.Fatalf("http.NewRequestWithContext() error = %v", err)
	}
	req.Header.Set("Accept", ContentEventStream)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("Do() error = %v", err)
	}
	defer func() { _ = resp.Body.Close() }()

	events := 0
	for data, err := range ParseDataStream(resp.Body) {
		if err != nil {
			t.Fatalf("ParseDataStream() error = %v", err)
		}
		want := "{\n  \"a\": 1,\n  \"b\": [1,2,3]\n}"
		if string(data) != want {
			t.Fatalf("ParseDataStream() = %q, want %q", string(data), want)
		}
		events++
	}
	if events != 1 {
		t.Fatalf("ParseDataStream() emitted %d events, want 1", events)
	}
}

func TestSSE_NoSpaceCompatibility(t *testing.T) {
	// Some frameworks (e.g. Spring) emit "data:foo" instead of "data: foo".
	// We need to support this for compatibility.
	server := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, req *http.Request) {
		// To test compatibility with non-standard SSE streams that omit the space
		// after "data:", we write the response manually instead of using SSEWriter.
		flusher, ok := rw.(http.Flusher)
		if !ok {
			t.Fatalf("streaming not supported")
		}

		rw.Header().Set("Content-Type", "text/event-stream")
		rw.Header().Set("Cache-Control", "no-cache")
		rw.Header().Set("Connection", "keep-alive")
		rw.WriteHeader(http.StatusOK)

		if _, err := fmt.Fprintf(rw, "id: %s\n", "1"); err != nil {
			t.Fatalf("fmt.Fprintf(id) error = %v", err)
		}
		if _, err := fmt.Fprintf(rw, "data:%s\n\n", "payload-without-space"); err != nil {
			t.Fatalf("fmt.Fprintf(data) error = %v", err)
		}
		flusher.Flush()
	}))
	defer server.Close()

	ctx := t.Context()
	req, err := http.NewRequestWithContext(ctx, "POST", server.URL, nil)
	if err != nil {
		t.Fatalf("http.NewRequestWithContext() error = %v", err)
	}
	req.Header.Set("Accept", ContentEventStream)
	client := http.Client{}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("client.Do() error = %v", err)
	}
	defer func() { _ = resp.Body.Close() }()

	eventCount := 0
	for data, err := range ParseDataStream(resp.Body) {
		if err != nil {
			t.Fatalf("ParseDataStream() error = %v", err)
		}
		if string(data) != "payload-without-space" {
			t.Fatalf("ParseDataStream() = %q, want %q", string(data), "payload-without-space")
		}
		eventCount++
	}
	if eventCount != 1 {
		t.Fatalf("ParseDataStream() emitted %d events, want 1", eventCount)
	}
}
