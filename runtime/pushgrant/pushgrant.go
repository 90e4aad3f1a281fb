// Package pushgrant reads webhook destinations: the push_urls grants the
// deployer validates and the webhook URLs the vessel checks against them.
// One parser for both, so a grant means the same thing to each.
package pushgrant

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"
)

// Grant is one entry of push_urls: webhooks may point at URLs with
// this scheme, host and port whose path starts with Path.
type Grant struct {
	Scheme string // http or https
	Host   string // lower case; an IP literal without brackets
	Port   int    // explicit, or 80/443 from the scheme
	Path   string // prefix; always starts with "/"
}

// MaxURLBytes is the longest webhook URL (and grant) accepted.
const MaxURLBytes = 2048

// Parse reads a push_urls entry: http(s)://host[:port][/prefix],
// without credentials, query or fragment.
func Parse(s string) (Grant, error) {
	if strings.Contains(s, "?") {
		return Grant{}, fmt.Errorf("push grant: %q: a query is not allowed in a grant", s)
	}
	g, err := ParseURL(s)
	if err != nil {
		return Grant{}, fmt.Errorf("push grant: %w", err)
	}
	return g, nil
}

// ParseURL reads a webhook URL into the parts a grant is matched on.
func ParseURL(s string) (Grant, error) {
	if len(s) > MaxURLBytes {
		return Grant{}, fmt.Errorf("URL is %d bytes, longer than %d", len(s), MaxURLBytes)
	}
	if s == "" {
		return Grant{}, errors.New("empty URL")
	}
	u, err := url.Parse(s)
	if err != nil {
		return Grant{}, fmt.Errorf("invalid URL %q: %w", s, err)
	}
	switch {
	case u.Scheme != "http" && u.Scheme != "https":
		return Grant{}, fmt.Errorf("%q: want an http:// or https:// URL", s)
	case u.Opaque != "" || u.Host == "":
		return Grant{}, fmt.Errorf("%q: the URL has no host", s)
	case u.User != nil:
		return Grant{}, fmt.Errorf("%q: credentials in the URL are not allowed", s)
	case u.Fragment != "" || strings.Contains(s, "#"):
		return Grant{}, fmt.Errorf("%q: a fragment is not allowed", s)
	}
	host := strings.ToLower(u.Hostname())
	if host == "" || strings.ContainsAny(host, "%") {
		return Grant{}, fmt.Errorf("%q: invalid host", s)
	}
	if strings.Contains(host, ":") && net.ParseIP(host) == nil {
		return Grant{}, fmt.Errorf("%q: invalid host", s)
	}
	port := 80
	if u.Scheme == "https" {
		port = 443
	}
	if p := u.Port(); p != "" {
		n, err := strconv.Atoi(p)
		if err != nil || n < 1 || n > 65535 {
			return Grant{}, fmt.Errorf("%q: invalid port %q", s, p)
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
			return Grant{}, fmt.Errorf("%q: dot segments and backslashes in the path are not allowed", s)
		}
	}
	if strings.Contains(strings.ToLower(path), "%2f") || strings.Contains(strings.ToLower(path), "%5c") {
		return Grant{}, fmt.Errorf("%q: encoded slashes in the path are not allowed", s)
	}
	return Grant{Scheme: u.Scheme, Host: host, Port: port, Path: path}, nil
}

// String is the grant as a URL.
func (g Grant) String() string {
	return g.Scheme + "://" + net.JoinHostPort(g.Host, strconv.Itoa(g.Port)) + g.Path
}

// Allows reports whether the webhook URL u (ParseURL) is within the
// grant: same scheme, host and port, and a path under the prefix. A prefix
// not ending in "/" matches itself and paths continuing it after a "/".
func (g Grant) Allows(u Grant) bool {
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
