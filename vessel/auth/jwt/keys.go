package jwt

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/lestrrat-go/jwx/v3/jwa"
	"github.com/lestrrat-go/jwx/v3/jwk"

	"github.com/astraldeep/astralvessel-go/vessel/client/jwks"
)

// maxJWKSBytes bounds a key set document.
const maxJWKSBytes = jwks.DefaultMaxBytes

// newKeySet holds one issuer's keys in the project's key cache
// (vessel/client/jwks): loaded on first use, again when a token names an
// unknown kid or the set is older than maxAge, in the background every
// maxAge, and never twice within minInterval on a token's account, however
// many tokens ask, so made-up kids cannot turn the vessel into a load
// generator against the identity provider. A jwks_url is fetched with
// client (in the vessel, the one whose proxy is the egress), following no
// redirect, bounded by timeout and maxJWKSBytes; a jwks_file is read again
// on each load, so keys rotate by replacing the file.
func newKeySet(life context.Context, client *http.Client, url, file string, timeout, minInterval, maxAge time.Duration,
	now func() time.Time, onError func(error)) *jwks.Cache {
	src := jwks.File(file, maxJWKSBytes)
	if url != "" {
		src = jwks.URL(client, url, timeout, maxJWKSBytes)
	}
	return jwks.New(life, jwks.Config{
		Source:      src,
		Accept:      usableKeys,
		Refresh:     maxAge,
		MaxAge:      maxAge,
		MinInterval: minInterval,
		Now:         now,
		OnError:     onError,
	})
}

// usableKeys keeps the public part of each asymmetric signing key. Symmetric
// (oct) keys are dropped outright: a shared secret published in a key set is
// never a way to sign tokens for the vessel. So are keys meant for
// encryption.
func usableKeys(set jwk.Set) (jwk.Set, error) {
	keys := jwk.NewSet()
	for i := 0; i < set.Len(); i++ {
		k, ok := set.Key(i)
		if !ok {
			continue
		}
		switch k.KeyType() {
		case jwa.RSA(), jwa.EC(), jwa.OKP():
		default:
			continue
		}
		if u, ok := k.KeyUsage(); ok && u != "" && u != jwk.ForSignature.String() {
			continue
		}
		pub, err := jwk.PublicKeyOf(k)
		if err != nil {
			continue
		}
		if err := keys.AddKey(pub); err != nil {
			return nil, fmt.Errorf("key set: %w", err)
		}
	}
	if keys.Len() == 0 {
		return nil, errors.New("key set has no usable asymmetric signing key")
	}
	return keys, nil
}
