package a2aserver

import (
	"context"
	"fmt"
	"net/url"
	"strings"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2asrv"

	"github.com/astraldeep/astralvessel-go/runtime/pushgrant"
	"github.com/astraldeep/astralvessel-go/runtime/redact"
	"github.com/astraldeep/astralvessel-go/vessel/push/dest"
	"github.com/astraldeep/astralvessel-go/vessel/settings"
	"github.com/astraldeep/astralvessel-go/vessel/store"
)

// MaxPushTokenBytes is the longest push config token (and credentials).
const MaxPushTokenBytes = 512

// PushPolicy is where the webhooks of a task owner ("<app>/<user>" or
// "<issuer>|<subject>") may point: the push_urls and push_public of its
// [[apps]] or [[issuers]] entry.
func PushPolicy(d *settings.Deployment, owner string) (dest.Policy, error) {
	i := strings.IndexAny(owner, "/|")
	if i <= 0 {
		return dest.Policy{}, fmt.Errorf("%w: owner %q names no app or issuer", dest.ErrRefused, owner)
	}
	id := owner[:i]
	if owner[i] == '/' {
		for _, a := range d.Apps {
			if a.ID == id {
				return dest.NewPolicy(a.PushURLs, a.PushPublic)
			}
		}
	} else {
		for _, is := range d.Issuers {
			if is.ID == id {
				return dest.NewPolicy(is.PushURLs, is.PushPublic)
			}
		}
	}
	return dest.Policy{}, fmt.Errorf("%w: %q is no longer in the deployment", dest.ErrRefused, id)
}

// checkedPushConfigs refuses configs outside the caller's grant or limits
// before they are stored.
type checkedPushConfigs struct {
	store.PushConfigStore
	deployment *settings.Deployment
}

// check refuses a config outside the caller's grant or limits. Its errors
// name sizes and the URL's host, never the token or credentials.
func (c *checkedPushConfigs) check(ctx context.Context, cfg *a2a.PushConfig) error {
	if cfg == nil {
		return fmt.Errorf("no push notification config: %w", a2a.ErrInvalidParams)
	}
	if len(cfg.Token) > MaxPushTokenBytes {
		return fmt.Errorf("push notification token is %d bytes, longer than %d: %w", len(cfg.Token), MaxPushTokenBytes, a2a.ErrInvalidParams)
	}
	if cfg.Auth != nil && (len(cfg.Auth.Credentials) > MaxPushTokenBytes || len(cfg.Auth.Scheme) > 64) {
		return fmt.Errorf("push notification credentials longer than %d bytes: %w", MaxPushTokenBytes, a2a.ErrInvalidParams)
	}
	if len(cfg.URL) > pushgrant.MaxURLBytes {
		return fmt.Errorf("push notification URL is %d bytes, longer than %d: %w", len(cfg.URL), pushgrant.MaxURLBytes, a2a.ErrInvalidParams)
	}
	owner, err := store.Owner(ctx)
	if err != nil {
		return err
	}
	pol, err := PushPolicy(c.deployment, owner)
	if err != nil {
		return fmt.Errorf("%w: %w", err, a2a.ErrInvalidParams)
	}
	if _, err := pol.Check(cfg.URL); err != nil {
		return fmt.Errorf("%s: %w", redact.Scrub(err.Error(), pushSecrets(cfg)...), a2a.ErrInvalidParams)
	}
	return nil
}

// pushSecrets are the values of a config that must never be printed: its
// token, its credentials, and the password of a URL that carries one.
func pushSecrets(cfg *a2a.PushConfig) []string {
	if cfg == nil {
		return nil
	}
	out := []string{cfg.Token}
	if cfg.Auth != nil {
		out = append(out, cfg.Auth.Credentials)
	}
	if u, err := url.Parse(cfg.URL); err == nil && u.User != nil {
		if p, ok := u.User.Password(); ok {
			out = append(out, p)
		}
	}
	return out
}

// scrubPushConfig blanks a refused config's secrets in place. Auth goes
// whole: printed with %v it would be a bare pointer (a Go memory address
// in the caller's answer).
func scrubPushConfig(cfg *a2a.PushConfig) {
	if cfg == nil {
		return
	}
	cfg.Auth = nil
	if cfg.Token != "" {
		cfg.Token = redact.Mark
	}
	if u, err := url.Parse(cfg.URL); err == nil && u.User != nil {
		u.User = nil
		cfg.URL = u.String()
	}
}

func (c *checkedPushConfigs) Save(ctx context.Context, taskID a2a.TaskID, cfg *a2a.PushConfig) (saved *a2a.PushConfig, err error) {
	defer func() {
		if err != nil {
			// The SDK prints the config it tried to save into its error
			// (the caller's answer and the log): a refused config keeps no
			// secret to print. It is never used after a refusal.
			scrubPushConfig(cfg)
		}
	}()
	if err := c.check(ctx, cfg); err != nil {
		return nil, err
	}
	// The push-working extension, when the caller asks for it: the config
	// is sent WORKING updates too, and the response lists the extension
	// as activated (A2A-Extensions).
	// A refused save activates nothing.
	var opt store.SaveOptions
	e, ok := a2asrv.ExtensionsFrom(ctx)
	opt.Working = ok && requested(e, store.PushWorkingURI)
	saved, err = c.PushConfigStore.SaveWith(ctx, taskID, cfg, opt)
	if err == nil && opt.Working {
		ext := store.PushWorkingExtension()
		e.Activate(&ext)
	}
	return saved, err
}

// requested reports whether the call lists an extension in A2A-Extensions,
// in one header value each or comma-separated.
func requested(e *a2asrv.Extensions, uri string) bool {
	for _, v := range e.RequestedURIs() {
		for u := range strings.SplitSeq(v, ",") {
			// URNs compare their "urn" prefix and namespace id without
			// regard to case (RFC 8141); the rest as written.
			if urnEqual(strings.TrimSpace(u), uri) {
				return true
			}
		}
	}
	return false
}

// urnEqual compares two URNs as RFC 8141 says: the "urn:" prefix and the
// namespace identifier case-insensitively, the namespace-specific string
// exactly.
func urnEqual(a, b string) bool {
	ap, as, aok := splitURN(a)
	bp, bs, bok := splitURN(b)
	if !aok || !bok {
		return a == b
	}
	return strings.EqualFold(ap, bp) && as == bs
}

// splitURN splits "urn:<nid>:<nss>" into "urn:<nid>" and "<nss>".
func splitURN(u string) (string, string, bool) {
	if len(u) < 4 || !strings.EqualFold(u[:4], "urn:") {
		return "", "", false
	}
	i := strings.IndexByte(u[4:], ':')
	if i < 0 {
		return "", "", false
	}
	return u[:4+i], u[4+i+1:], true
}

// setPushCapability declares push notifications on a card, with the
// push-working extension, when the vessel delivers them.
func setPushCapability(card *a2a.AgentCard, on bool) {
	card.Capabilities.PushNotifications = on
	if on {
		card.Capabilities.Extensions = append(card.Capabilities.Extensions, store.PushWorkingExtension())
	}
}
