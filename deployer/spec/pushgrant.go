package spec

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"
)

// PushGrant is one entry of push_urls: webhooks may point at URLs with
// this scheme, host and port whose path starts with Path.
type PushGrant struct {
	Scheme string // http or https
	Host   string // lower case; an IP literal without brackets
	Port   int    // explicit, or 80/443 from the scheme
	Path   string // prefix; always starts with "/"
}

// MaxPushURLBytes is the longest webhook URL (and grant) accepted.
const MaxPushURLBytes = 2048

// ParsePushGrant reads a push_urls entry: http(s)://host[:port][/prefix],
// without credentials, query or fragment.
func ParsePushGrant(s string) (PushGrant, error) {
	if strings.Contains(s, "?") {
		return PushGrant{}, fmt.Errorf("push grant: %q: a query is not allowed in a grant", s)
	}
	g, err := parsePushURL(s)
	if err != nil {
		return PushGrant{}, fmt.Errorf("push grant: %w", err)
	}
	return g, nil
}

// ParsePushURL reads a webhook URL into the parts a grant is matched on.
func ParsePushURL(s string) (PushGrant, error) { return parsePushURL(s) }

func parsePushURL(s string) (PushGrant, error) {
	if len(s) > MaxPushURLBytes {
		return PushGrant{}, fmt.Errorf("URL is %d bytes, longer than %d", len(s), MaxPushURLBytes)
	}
	if s == "" {
		return PushGrant{}, errors.New("empty URL")
	}
	u, err := url.Parse(s)
	if err != nil {
		return PushGrant{}, fmt.Errorf("invalid URL %q: %w", s, err)
	}
	switch {
	case u.Scheme != "http" && u.Scheme != "https":
		return PushGrant{}, fmt.Errorf("%q: want an http:// or https:// URL", s)
	case u.Opaque != "" || u.Host == "":
		return PushGrant{}, fmt.Errorf("%q: the URL has no host", s)
	case u.User != nil:
		return PushGrant{}, fmt.Errorf("%q: credentials in the URL are not allowed", s)
	case u.Fragment != "" || strings.Contains(s, "#"):
		return PushGrant{}, fmt.Errorf("%q: a fragment is not allowed", s)
	}
	host := strings.ToLower(u.Hostname())
	if host == "" || strings.ContainsAny(host, "%") {
		return PushGrant{}, fmt.Errorf("%q: invalid host", s)
	}
	if strings.Contains(host, ":") && net.ParseIP(host) == nil {
		return PushGrant{}, fmt.Errorf("%q: invalid host", s)
	}
	port := 80
	if u.Scheme == "https" {
		port = 443
	}
	if p := u.Port(); p != "" {
		n, err := strconv.Atoi(p)
		if err != nil || n < 1 || n > 65535 {
			return PushGrant{}, fmt.Errorf("%q: invalid port %q", s, p)
		}
		port = n
	}
	path := u.EscapedPath()
	if path == "" {
		path = "/"
	}
	// Decoded as the receiver will decode it: no dot segments and no
	// backslashes, so the path cannot leave a granted prefix there.
	for _, p := range []string{path, u.Path} {
		if strings.Contains(p, "\\") || slicesContainsDot(strings.Split(p, "/")) {
			return PushGrant{}, fmt.Errorf("%q: dot segments and backslashes in the path are not allowed", s)
		}
	}
	if strings.Contains(strings.ToLower(path), "%2f") || strings.Contains(strings.ToLower(path), "%5c") {
		return PushGrant{}, fmt.Errorf("%q: encoded slashes in the path are not allowed", s)
	}
	return PushGrant{Scheme: u.Scheme, Host: host, Port: port, Path: path}, nil
}

// String is the grant as a URL.
func (g PushGrant) String() string {
	return g.Scheme + "://" + net.JoinHostPort(g.Host, strconv.Itoa(g.Port)) + g.Path
}

// Allows reports whether the webhook URL u (ParsePushURL) is within the
// grant: same scheme, host and port, and a path under the prefix. A prefix
// not ending in "/" matches itself and paths continuing it after a "/".
func (g PushGrant) Allows(u PushGrant) bool {
	if g.Scheme != u.Scheme || g.Host != u.Host || g.Port != u.Port {
		return false
	}
	if strings.HasSuffix(g.Path, "/") {
		return strings.HasPrefix(u.Path, g.Path)
	}
	return u.Path == g.Path || strings.HasPrefix(u.Path, g.Path+"/")
}

func slicesContainsDot(segs []string) bool {
	for _, s := range segs {
		if s == "." || s == ".." {
			return true
		}
	}
	return false
}
