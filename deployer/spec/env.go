package spec

import (
	"fmt"

	"github.com/astraldeep/astralvessel-go/runtime/envfile"
)

// LookupFile is the one reader of the NAME_FILE convention: NAME's value
// when env has NAME, else, when NAME_FILE names a file, that file's content
// with surrounding whitespace removed. Deploy gives containers their secrets
// this way (e.g. VESSEL_MODEL_KEY_FILE). A NAME_FILE that cannot be read is
// an error naming it, not a missing value.
func LookupFile(env Env, name string) (value string, found bool, err error) {
	return envfile.LookupFile(env, name)
}

// EnvWithFiles is env with the NAME_FILE convention (LookupFile) as an Env,
// for the loaders (envfile.WithFiles, which the vessel loads with). A
// NAME_FILE that cannot be read gives no value here, and the loaders then
// report that read error for the env:NAME they were resolving.
func EnvWithFiles(env Env) Env { return envfile.WithFiles(env) }

// missing says why env has no value for name: the read error of its
// NAME_FILE when env follows that convention and the file cannot be read,
// else that it is not set.
func missing(env Env, name string) string {
	if _, _, err := LookupFile(env, name); err != nil {
		return fmt.Sprintf("environment variable %s is not set, and %v", name, err)
	}
	return fmt.Sprintf("environment variable %s is not set", name)
}
