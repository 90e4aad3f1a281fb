package auth

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"net/http"
	"testing"

	"github.com/astraldeep/astralvessel-go/vessel/settings"
)

func TestAppKeys(t *testing.T) {
	sum := sha256.Sum256([]byte("secret"))
	k, err := NewAppKeys([]settings.App{{ID: "app", KeySHA256: hex.EncodeToString(sum[:]), Agents: []string{"a"}}})
	if err != nil {
		t.Fatal(err)
	}
	chain := Chain{k}
	req := func(key string, users ...string) *http.Request {
		r, _ := http.NewRequest(http.MethodPost, "/", nil)
		if key != "" {
			r.Header.Set("Authorization", "Bearer "+key)
		}
		for _, u := range users {
			r.Header.Add(UserHeader, u)
		}
		return r
	}
	p, err := chain.Authenticate(context.Background(), req("secret", "alice"))
	if err != nil || p.Owner != "app/alice" || p.Kind != KindApp || !p.MayCall("a") || p.MayCall("b") {
		t.Fatalf("%+v %v", p, err)
	}
	for name, r := range map[string]*http.Request{
		"no key": req(""), "wrong key": req("nope", "alice"), "no user": req("secret"),
		"two users": req("secret", "a", "b"), "bad user": req("secret", "a\x7fb"), " padded": req("secret", " alice"),
	} {
		if _, err := chain.Authenticate(context.Background(), r); !errors.Is(err, ErrUnauthenticated) {
			t.Errorf("%s: %v", name, err)
		}
	}
	// Two Authorization headers are refused whichever of them is valid.
	for _, pair := range [][2]string{{"secret", "nope"}, {"nope", "secret"}, {"secret", "secret"}} {
		r := req(pair[0], "alice")
		r.Header.Add("Authorization", "Bearer "+pair[1])
		if _, err := chain.Authenticate(context.Background(), r); !errors.Is(err, ErrUnauthenticated) {
			t.Errorf("two Authorization headers %v: %v", pair, err)
		}
	}
	if _, err := NewAppKeys([]settings.App{{ID: "x", KeySHA256: "zz"}}); err == nil {
		t.Fatal("bad digest accepted")
	}
}

func TestValidUser(t *testing.T) {
	long := make([]byte, 129)
	for i := range long {
		long[i] = 'u'
	}
	for u, want := range map[string]bool{"alice": true, "Zoë Müller": true, "a@b.c": true, "": false, string(long): false, string(long[:128]): true, "a\nb": false, "a\tb": false} {
		if ValidUser(u) != want {
			t.Errorf("%q: want %v", u, want)
		}
	}
}
