package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/astraldeep/astralvessel-go/deployer/compose"
	"github.com/astraldeep/astralvessel-go/deployer/spec"
)

func init() {
	register(&command{
		name:    "deploy",
		usage:   "deploy FILE [--target compose|kubernetes] [--out DIR] [--source DIR] [--seccomp FILE] [--env-file F] [--metrics-subnet CIDR]",
		summary: "write compose.generated.yml (or Kubernetes manifests) and the generated secrets",
		run:     runDeploy,
	})
}

func runDeploy(args []string, stdout, stderr io.Writer) int {
	fs := newFlags("deploy", stderr)
	out := fs.String("out", "", "folder for compose.generated.yml and .generated/ (default: the deployment file's folder)")
	source := fs.String("source", "", "the source tree, holding go.work (default: found above the deployment file)")
	seccomp := fs.String("seccomp", "", "sandbox seccomp profile (default: SOURCE/"+compose.SeccompRel+")")
	envFile := fs.String("env-file", "", "read env: references from this file too (default: .env beside FILE, if present)")
	metricsSubnet := fs.String("metrics-subnet", "", "Compose: the internal metrics network's IPv4 /24 (default: one of 10.254.0.0/16 derived from the project name)")
	target := fs.String("target", "compose", "compose or kubernetes (docs/kubernetes.md)")
	kf := addKubeFlags(fs)
	pos, code, ok := parseFlags(fs, args, stdout, stderr)
	if !ok {
		return code
	}
	if len(pos) != 1 {
		usageError("deploy", stderr)
		return 2
	}
	d, usedEnv, ok := loadChecked(pos[0], *envFile, stderr)
	if !ok {
		return 1
	}
	var err error
	switch *target {
	case "compose":
		err = deploy(d, compose.Options{OutDir: *out, SourceDir: *source, SeccompProfile: *seccomp, MetricsSubnet: *metricsSubnet}, usedEnv, stdout)
	case "kubernetes":
		err = deployTarget(d, *out, *source, *seccomp, func(out, source, seccomp string) error {
			return deployKube(d, kf, out, source, seccomp, usedEnv, stdout)
		})
	default:
		fmt.Fprintf(stderr, "astralvessel deploy: --target %q: want compose or kubernetes\n", *target)
		return 2
	}
	if err != nil {
		fmt.Fprintf(stderr, "astralvessel deploy: %v\n", err)
		return 1
	}
	return 0
}

func deploy(d *spec.Deployment, opts compose.Options, envFile string, stdout io.Writer) error {
	return deployTarget(d, opts.OutDir, opts.SourceDir, opts.SeccompProfile, func(out, source, seccomp string) error {
		opts.OutDir, opts.SourceDir, opts.SeccompProfile = out, source, seccomp
		return deployCompose(d, opts, envFile, stdout)
	})
}

// deployTarget fills in the folders and the seccomp profile, then writes
// one target's files.
func deployTarget(d *spec.Deployment, out, source, seccomp string, write func(out, source, seccomp string) error) error {
	var err error
	if out == "" {
		out = filepath.Dir(d.Path)
	}
	if source == "" {
		if source, err = findSource(filepath.Dir(d.Path)); err != nil {
			return err
		}
	}
	if seccomp == "" {
		seccomp = filepath.Join(source, filepath.FromSlash(compose.SeccompRel))
	}
	if seccomp, err = filepath.Abs(seccomp); err != nil {
		return err
	}
	if _, err := os.Stat(seccomp); err != nil {
		return fmt.Errorf("sandbox seccomp profile: %w (pass --seccomp FILE)", err)
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	return write(out, source, seccomp)
}

func deployCompose(d *spec.Deployment, opts compose.Options, envFile string, stdout io.Writer) error {
	out := opts.OutDir
	// Each service runs as its own uid and reads only its own secrets; only
	// root can give the files to those uids.
	_, handedOver, err := compose.WriteSecrets(out, d)
	if err != nil {
		return err
	}
	yml, err := compose.Generate(d, opts)
	if err != nil {
		return err
	}
	// The operator API's URL, Prometheus's targets and the records folders
	// (docs/operations.md, "Operating a generated deployment").
	recordsOwned, err := compose.WriteOperator(out, d, opts)
	if err != nil {
		return err
	}
	file := filepath.Join(out, compose.FileName)
	if err := writeAtomic(file, yml, 0o644); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "wrote %s and %s/\n", file, filepath.Join(out, compose.GeneratedDir))
	envArg := filepath.Join(out, ".env")
	if envFile != "" {
		envArg = envFile
	}
	if rel, err := filepath.Rel(out, envArg); err == nil {
		envArg = rel
	}
	fmt.Fprintf(stdout, "next: build the images (deploy/images.sh --project %s), then\n  cd %s && docker-compose -p %s -f %s --env-file %s up -d\n",
		d.Vessel.Project, out, d.Vessel.Project, compose.FileName, envArg)
	fmt.Fprintf(stdout, "(add --build after a change to an agent's sandbox Dockerfile)\n")
	fmt.Fprintf(stdout, "operator API: %s (astralvessel turns --deploy-dir %s); metrics targets: %s; records: %s (group %s, gid %d)\n",
		readURL(filepath.Join(out, compose.OperatorURLFile)), out, filepath.Join(out, compose.MetricsTargetsFile),
		filepath.Join(out, compose.RecordsDir), compose.OperatorGroup, compose.OperatorGID)
	if !handedOver || !recordsOwned {
		fmt.Fprintf(stdout, "not run as root: the secrets in %s are still yours, and each container runs as its own uid;\n"+
			"before up, give them to their services (or run deploy as root):\n  %s\n",
			filepath.Join(out, compose.GeneratedDir), strings.Join(compose.ChownCommands(out, d), "\n  "))
	}
	return nil
}

// readURL returns the first line of an operator.url file, or "?".
func readURL(p string) string {
	b, err := os.ReadFile(p)
	if err != nil {
		return "?"
	}
	return strings.TrimSpace(string(b))
}

// findSource walks up from dir to the folder holding go.work.
func findSource(dir string) (string, error) {
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.work")); err == nil {
			return d, nil
		}
		if filepath.Dir(d) == d {
			return "", errors.New("no go.work above the deployment file; pass --source DIR (the source tree)")
		}
	}
}
