package spec

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
)

// fingerprintVersion changes whenever the fingerprinted document changes
// shape, so old and new deployers never agree by accident.
const fingerprintVersion = 1

// fpDoc is what a fingerprint hashes. It holds no absolute paths and no
// secrets, so the same inputs give the same fingerprint on every machine.
type fpDoc struct {
	Version  int      `json:"version"`
	Agent    string   `json:"agent"`
	Sandbox  Sandbox  `json:"sandbox"` // as written: relative paths stay relative
	Manifest Manifest `json:"manifest"`
	// MCP are the agent's remote MCP grants without header values (they
	// hold credentials): the URL, the header names, the tools and scopes.
	MCP        map[string]MCPServer `json:"mcp,omitempty"`
	Dockerfile *fpContainer         `json:"dockerfile,omitempty"`
}

type fpContainer struct {
	SHA256 string   `json:"sha256"`
	Files  []fpFile `json:"files"` // everything COPY and ADD take from the build context
	URLs   []string `json:"urls,omitempty"`
}

type fpFile struct {
	Path   string `json:"path"` // slash-separated, relative to the build context
	SHA256 string `json:"sha256"`
	Exec   bool   `json:"exec"`
}

// Fingerprint returns the profile fingerprint of one agent, "sha256:<hex>":
// a hash of the agent id, its [agents.sandbox] grants, its manifest and
// declared tools as loaded (without the model key), its remote MCP grants
// (without header values), and, when it has its own
// sandbox image, the Dockerfile and every file that Dockerfile copies from
// its build context (the Dockerfile's folder). prompt.md and prompt_append
// files are read every turn and are not part of it.
func Fingerprint(d *Deployment, agentID string) (string, error) {
	var agent *Agent
	for i := range d.Agents {
		if d.Agents[i].ID == agentID {
			agent = &d.Agents[i]
		}
	}
	if agent == nil {
		return "", fmt.Errorf("fingerprint: no agent %q in the deployment", agentID)
	}
	if agent.Manifest == nil {
		return "", fmt.Errorf("fingerprint %s: manifest not loaded", agentID)
	}
	doc := fpDoc{Version: fingerprintVersion, Agent: agent.ID, Sandbox: agent.Sandbox, Manifest: *agent.Manifest}
	doc.Sandbox.Mounts = append([]Mount{}, agent.Sandbox.Mounts...)
	// Which uids the calls run as is the host's business, not the profile's.
	doc.Sandbox.CallUIDs, doc.Sandbox.UIDs = "", UIDRange{}
	doc.Manifest.Model.APIKey = "" // the key, or the name of its variable, is not part of the profile
	doc.Manifest.Declared = make([]Tool, len(agent.Manifest.Declared))
	for i, t := range agent.Manifest.Declared {
		t.File = "" // an absolute path on this machine
		doc.Manifest.Declared[i] = t
	}
	doc.Manifest.MCP = make([]Tool, len(agent.Manifest.MCP))
	for i, t := range agent.Manifest.MCP {
		t.File = ""
		doc.Manifest.MCP[i] = t
	}
	for n, m := range agent.MCP {
		if doc.MCP == nil {
			doc.MCP = map[string]MCPServer{}
		}
		h := make(map[string]string, len(m.Headers))
		for k := range m.Headers {
			h[k] = ""
		}
		m.Headers = h
		doc.MCP[n] = m
	}
	if df := agent.Sandbox.Dockerfile; df != "" {
		if !filepath.IsAbs(df) {
			df = filepath.Join(filepath.Dir(d.Path), df)
		}
		c, err := hashDockerfile(df)
		if err != nil {
			return "", fmt.Errorf("fingerprint %s: %w", agentID, err)
		}
		doc.Dockerfile = c
	}
	// encoding/json writes struct fields in declaration order and map keys
	// sorted, which makes this a canonical form.
	b, err := json.Marshal(doc)
	if err != nil {
		return "", fmt.Errorf("fingerprint %s: %w", agentID, err)
	}
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:]), nil
}

func hashDockerfile(file string) (*fpContainer, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("read sandbox Dockerfile: %w", err)
	}
	sum := sha256.Sum256(data)
	c := &fpContainer{SHA256: hex.EncodeToString(sum[:]), Files: []fpFile{}}
	ctx := filepath.Dir(file)
	srcs, urls, err := copySources(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	c.URLs = urls
	seen := map[string]bool{}
	for _, src := range srcs {
		matches, err := filepath.Glob(filepath.Join(ctx, filepath.FromSlash(src)))
		if err != nil || len(matches) == 0 {
			return nil, fmt.Errorf("%s: COPY/ADD source %q not found in the build context %s", file, src, ctx)
		}
		for _, m := range matches {
			err := filepath.WalkDir(m, func(p string, de fs.DirEntry, err error) error {
				if err != nil {
					return err
				}
				if de.IsDir() {
					return nil
				}
				rel, err := filepath.Rel(ctx, p)
				if err != nil {
					return err
				}
				rel = filepath.ToSlash(rel)
				if seen[rel] {
					return nil
				}
				seen[rel] = true
				f, err := hashFile(p)
				if err != nil {
					return err
				}
				f.Path = rel
				c.Files = append(c.Files, f)
				return nil
			})
			if err != nil {
				return nil, fmt.Errorf("%s: hash COPY/ADD source %q: %w", file, src, err)
			}
		}
	}
	sort.Slice(c.Files, func(i, j int) bool { return c.Files[i].Path < c.Files[j].Path })
	return c, nil
}

func hashFile(p string) (fpFile, error) {
	st, err := os.Stat(p)
	if err != nil {
		return fpFile{}, err
	}
	b, err := os.ReadFile(p)
	if err != nil {
		return fpFile{}, err
	}
	sum := sha256.Sum256(b)
	return fpFile{SHA256: hex.EncodeToString(sum[:]), Exec: st.Mode()&0o111 != 0}, nil
}

// copySources lists the build-context sources of every COPY and ADD in a
// Dockerfile (skipping COPY --from, which copies from another image), and
// the URLs ADD fetches.
func copySources(data []byte) (srcs, urls []string, err error) {
	for _, line := range logicalLines(data) {
		fields := strings.Fields(line)
		if len(fields) == 0 {
			continue
		}
		instr := strings.ToUpper(fields[0])
		if instr != "COPY" && instr != "ADD" {
			continue
		}
		rest := strings.TrimSpace(line[len(fields[0]):])
		fromOtherStage := false
		for strings.HasPrefix(rest, "--") {
			flag, after, _ := strings.Cut(rest, " ")
			if strings.HasPrefix(flag, "--from") {
				fromOtherStage = true
			}
			rest = strings.TrimSpace(after)
		}
		if fromOtherStage {
			continue
		}
		var args []string
		if strings.HasPrefix(rest, "[") {
			if err := json.Unmarshal([]byte(rest), &args); err != nil {
				return nil, nil, fmt.Errorf("%s %s: invalid JSON form: %w", instr, rest, err)
			}
		} else {
			args = strings.Fields(rest)
		}
		if len(args) < 2 {
			return nil, nil, fmt.Errorf("%s needs a source and a destination: %q", instr, line)
		}
		for _, s := range args[:len(args)-1] {
			if strings.Contains(s, "://") || strings.HasPrefix(s, "git@") {
				urls = append(urls, s)
				continue
			}
			clean := path.Clean("/" + s)[1:]
			if clean == "" {
				clean = "."
			}
			if strings.HasPrefix(s, "<<") {
				continue // a heredoc: its text is in the Dockerfile itself
			}
			srcs = append(srcs, clean)
		}
	}
	return srcs, urls, nil
}

// logicalLines joins continuation lines and drops comments.
func logicalLines(data []byte) []string {
	var out []string
	var cur strings.Builder
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 64*1024), 4<<20)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if strings.HasPrefix(line, "#") {
			continue
		}
		if s, ok := strings.CutSuffix(line, "\\"); ok {
			cur.WriteString(s)
			cur.WriteString(" ")
			continue
		}
		cur.WriteString(line)
		out = append(out, cur.String())
		cur.Reset()
	}
	if cur.Len() > 0 {
		out = append(out, cur.String())
	}
	return out
}
