// Package issuers holds the checks of a trusted token issuer's entry that
// the deployer's validation and the vessel's JWT verifier share, so the
// verifier refuses exactly what validate would, and the id and URL rules
// those checks use (also the deployer's for its other ids and URLs).
package issuers

import (
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"strings"
)

var idPattern = regexp.MustCompile(`^[a-z0-9][a-z0-9-]{0,62}$`)

// ValidID reports whether id may name an agent, app, issuer, service or
// project: lowercase letters, digits and -, starting with a letter or
// digit, at most 63 bytes.
func ValidID(id string) bool { return idPattern.MatchString(id) }

// CheckURL returns "" for an acceptable absolute http(s) URL (https only
// when httpsOnly), else why not.
func CheckURL(s string, httpsOnly bool) string {
	u, err := url.Parse(s)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		if httpsOnly {
			return fmt.Sprintf("invalid URL %q; want https://host/...", s)
		}
		return fmt.Sprintf("invalid URL %q; want http:// or https:// with a host", s)
	}
	if httpsOnly && u.Scheme != "https" {
		return fmt.Sprintf("%q must use https", s)
	}
	if u.User != nil {
		return fmt.Sprintf("%q must not carry credentials in the URL", s)
	}
	return ""
}

// Entry is what of one trusted issuer the checks look at.
type Entry struct {
	ID, Issuer, Audience, JWKSURL, JWKSFile string
	AuthorizedParties                       []string
}

// Problem is one thing wrong with an entry: the field (issuers[i].name)
// and why.
type Problem struct{ Field, Msg string }

// Problems is what is wrong with the entries of list on their own: ids
// (valid, unique), the issuer URL, the audience, exactly one key source,
// no empty authorized party.
func Problems(list []Entry) []Problem {
	var out []Problem
	add := func(field, format string, a ...any) {
		out = append(out, Problem{field, fmt.Sprintf(format, a...)})
	}
	ids := map[string]bool{}
	for i, is := range list {
		f := fmt.Sprintf("issuers[%d]", i)
		switch {
		case !ValidID(is.ID):
			add(f+".id", "invalid or missing id %q; allowed: lowercase letters, digits and -, starting with a letter or digit", is.ID)
		case ids[is.ID]:
			add(f+".id", "duplicate issuer id %q", is.ID)
		}
		ids[is.ID] = true
		if is.Issuer == "" {
			add(f+".issuer", "required: the token issuer (iss) URL")
		} else if msg := CheckURL(is.Issuer, true); msg != "" {
			add(f+".issuer", "%s", msg)
		}
		if is.Audience == "" {
			add(f+".audience", "required: the audience (aud) tokens must carry")
		}
		switch {
		case is.JWKSURL != "" && is.JWKSFile != "":
			add(f+".jwks_file", "set exactly one of jwks_url and jwks_file, not both")
		case is.JWKSURL == "" && is.JWKSFile == "":
			add(f+".jwks_url", "required: set jwks_url (https) or jwks_file (a JWK set on disk)")
		}
		for j, p := range is.AuthorizedParties {
			if strings.TrimSpace(p) == "" {
				add(fmt.Sprintf("%s.authorized_parties[%d]", f, j), "must not be empty")
			}
		}
	}
	return out
}

// Validate joins Problems into one error, nil when there are none.
func Validate(list []Entry) error {
	var errs []error
	for _, p := range Problems(list) {
		errs = append(errs, fmt.Errorf("%s: %s", p.Field, p.Msg))
	}
	return errors.Join(errs...)
}
