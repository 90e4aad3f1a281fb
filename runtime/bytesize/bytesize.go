// Package bytesize reads and prints sizes in bytes as deployment.toml and
// the services' flags write them ("512MB", "1GiB", "64k").
package bytesize

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Size is a size in bytes, written in TOML as an integer or a string
// such as "512MB", "1GiB" or "64k".
type Size int64

// Size units, case-insensitive. Every unit is a power of 1024, as in Docker's
// memory limits: "512MB", "512MiB" and "512m" are the same size.
var sizeUnits = map[string]int64{
	"":    1,
	"b":   1,
	"k":   1 << 10,
	"kb":  1 << 10,
	"kib": 1 << 10,
	"m":   1 << 20,
	"mb":  1 << 20,
	"mib": 1 << 20,
	"g":   1 << 30,
	"gb":  1 << 30,
	"gib": 1 << 30,
	"t":   1 << 40,
	"tb":  1 << 40,
	"tib": 1 << 40,
}

// Parse reads "512MB", "1GiB", "64k" or a plain number of bytes.
// Units are case-insensitive; fractions are allowed ("1.5GiB").
func Parse(s string) (Size, error) {
	t := strings.TrimSpace(s)
	i := 0
	for i < len(t) && (t[i] >= '0' && t[i] <= '9' || t[i] == '.') {
		i++
	}
	num, unit := t[:i], strings.ToLower(strings.TrimSpace(t[i:]))
	mult, ok := sizeUnits[unit]
	if num == "" || !ok {
		return 0, fmt.Errorf("invalid size %q: want a number of bytes with an optional unit (B, kB, MB, GB, TB, KiB, MiB, GiB, TiB, k, m, g, t), e.g. \"512MB\" or \"1GiB\"", s)
	}
	if n, err := strconv.ParseInt(num, 10, 64); err == nil {
		if n > math.MaxInt64/mult {
			return 0, fmt.Errorf("invalid size %q: too large", s)
		}
		return Size(n * mult), nil
	}
	f, err := strconv.ParseFloat(num, 64)
	if err != nil {
		return 0, fmt.Errorf("invalid size %q: %q is not a number", s, num)
	}
	v := f * float64(mult)
	if v >= math.MaxInt64 {
		return 0, fmt.Errorf("invalid size %q: too large", s)
	}
	return Size(v), nil
}

// UnmarshalText decodes the string form; TOML integers decode directly.
func (b *Size) UnmarshalText(text []byte) error {
	v, err := Parse(string(text))
	if err != nil {
		return err
	}
	*b = v
	return nil
}

// String prints the size in the largest binary unit that divides it.
func (b Size) String() string {
	n := int64(b)
	for _, u := range []struct {
		name string
		size int64
	}{{"TiB", 1 << 40}, {"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}} {
		if n != 0 && n%u.size == 0 {
			return strconv.FormatInt(n/u.size, 10) + u.name
		}
	}
	return strconv.FormatInt(n, 10) + "B"
}
