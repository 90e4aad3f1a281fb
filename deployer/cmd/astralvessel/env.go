package main

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/astraldeep/astralvessel-go/deployer/spec"
)

// operatorEnv looks variables up in the process environment first, then in
// an env file (by default the .env beside the deployment file, which is the
// file docker-compose reads too), so validate and deploy see what the
// containers will see.
func operatorEnv(deploymentFile, envFile string) (spec.Env, string, error) {
	explicit := envFile != ""
	if !explicit {
		envFile = filepath.Join(filepath.Dir(deploymentFile), ".env")
	}
	vars, err := readEnvFile(envFile)
	if err != nil {
		if !explicit && errors.Is(err, fs.ErrNotExist) {
			return os.LookupEnv, "", nil
		}
		return nil, "", err
	}
	return func(name string) (string, bool) {
		if v, ok := os.LookupEnv(name); ok {
			return v, true
		}
		v, ok := vars[name]
		return v, ok
	}, envFile, nil
}

// readEnvFile reads KEY=VALUE lines; # comments, blank lines, an optional
// "export " prefix and single or double quotes around the value are allowed.
func readEnvFile(path string) (map[string]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("env file: %w", err)
	}
	defer f.Close()
	vars := map[string]string{}
	sc := bufio.NewScanner(f)
	n := 0
	for sc.Scan() {
		n++
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		line = strings.TrimPrefix(line, "export ")
		k, v, ok := strings.Cut(line, "=")
		if !ok {
			return nil, fmt.Errorf("%s:%d: want KEY=VALUE", path, n)
		}
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		if len(v) >= 2 && (v[0] == '"' && v[len(v)-1] == '"' || v[0] == '\'' && v[len(v)-1] == '\'') {
			v = v[1 : len(v)-1]
		}
		vars[k] = v
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("env file %s: %w", path, err)
	}
	return vars, nil
}
