module github.com/astraldeep/astralvessel-go/conformance

go 1.26.0

require github.com/astraldeep/astralvessel-go/vessel/client v0.0.0

require (
	github.com/a2aproject/a2a-go/v2 v2.4.0 // indirect
	github.com/decred/dcrd/dcrec/secp256k1/v4 v4.4.1 // indirect
	github.com/goccy/go-json v0.10.6 // indirect
	github.com/google/uuid v1.6.0 // indirect
	github.com/gowebpki/jcs v1.0.2 // indirect
	github.com/lestrrat-go/blackmagic v1.0.4 // indirect
	github.com/lestrrat-go/httpcc v1.0.1 // indirect
	github.com/lestrrat-go/httprc v1.0.6 // indirect
	github.com/lestrrat-go/iter v1.0.2 // indirect
	github.com/lestrrat-go/jwx/v2 v2.1.7 // indirect
	github.com/lestrrat-go/option v1.0.1 // indirect
	github.com/segmentio/asm v1.2.1 // indirect
	golang.org/x/crypto v0.53.0 // indirect
	golang.org/x/mod v0.35.0 // indirect
	golang.org/x/sys v0.46.0 // indirect
)

replace github.com/astraldeep/astralvessel-go/vessel/client => ../vessel/client

// a2a-go v2.4.0 with one patch (pooled gob copies): third_party/a2a-go/PATCHES.md
replace github.com/a2aproject/a2a-go/v2 => ../third_party/a2a-go
