package spec

import "github.com/astraldeep/astralvessel-go/runtime/pushgrant"

// PushGrant is one entry of push_urls (runtime/pushgrant, which the vessel
// checks webhook URLs with).
type PushGrant = pushgrant.Grant

// MaxPushURLBytes is the longest webhook URL (and grant) accepted.
const MaxPushURLBytes = pushgrant.MaxURLBytes

// ParsePushGrant reads a push_urls entry (pushgrant.Parse).
func ParsePushGrant(s string) (PushGrant, error) { return pushgrant.Parse(s) }
