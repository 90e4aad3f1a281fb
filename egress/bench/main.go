// Command bench measures the egress web proxy against a direct connection
// and against Debian's tinyproxy, all on loopback: a 10 MB body and 1,000
// small requests, over plain HTTP (absolute-URI) and HTTPS (CONNECT). It
// prints a Markdown table and can write it into docs/performance.md.
//
// Every byte goes to origins this program starts on 127.0.0.1; the egress
// runs with an explicit allow for 127.0.0.0/8 and the origins' ports, since
// loopback is refused by default.
package main

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/astraldeep/astralvessel-go/runtime/benchenv"
)

func main() {
	out := flag.String("out", "", "performance.md to update (its \"## Egress\" section)")
	egressBin := flag.String("egress", "", "egress binary (built by the Makefile)")
	tinyproxy := flag.String("tinyproxy", "/usr/bin/tinyproxy", "tinyproxy binary")
	bigReps := flag.Int("big-reps", 30, "10 MB downloads per mode (spread over the rounds)")
	small := flag.Int("small", 1000, "small requests per mode")
	flag.Parse()
	if err := run(*out, *egressBin, *tinyproxy, *bigReps, *small); err != nil {
		fmt.Fprintln(os.Stderr, "bench-egress:", err)
		os.Exit(1)
	}
}

const bigSize = 10 << 20

type mode struct {
	name  string
	proxy *url.URL // nil = direct
	pid   int      // proxy process, for its CPU time
}

type row struct {
	scenario, mode string
	value          float64 // MB/s or ms per request
	unit           string
	cpuMS          float64 // proxy CPU per 10 MB download or per request; <0 when unknown
}

func run(out, egressBin, tinyBin string, bigReps, small int) error {
	loadStart := benchenv.LoadAvg()
	tmp, err := os.MkdirTemp("", "bench-egress-")
	if err != nil {
		return fmt.Errorf("temp dir: %w", err)
	}
	defer os.RemoveAll(tmp)

	big := bytes.Repeat([]byte("0123456789abcdef"), bigSize/16)
	mux := http.NewServeMux()
	mux.HandleFunc("/big", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/octet-stream")
		w.Header().Set("Content-Length", strconv.Itoa(len(big)))
		_, _ = w.Write(big)
	})
	mux.HandleFunc("/small", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		_, _ = io.WriteString(w, "hello from the origin, a small body of about a hundred bytes for the latency run.\n")
	})
	plain := httptest.NewServer(mux)
	defer plain.Close()
	secure := httptest.NewTLSServer(mux)
	defer secure.Close()
	ports := []string{port(plain.Listener.Addr()), port(secure.Listener.Addr())}

	var modes []mode
	modes = append(modes, mode{name: "direct"})

	if egressBin == "" {
		return errors.New("-egress is required")
	}
	eg, egURL, err := startEgress(egressBin, tmp, ports)
	if err != nil {
		return err
	}
	defer stop(eg)
	modes = append(modes, mode{name: "egress (goproxy + guard)", proxy: egURL, pid: eg.Process.Pid})

	tp, tpURL, err := startTinyproxy(tinyBin, tmp)
	if err != nil {
		fmt.Fprintln(os.Stderr, "tinyproxy not measured:", err)
	} else {
		defer stop(tp)
		modes = append(modes, mode{name: "tinyproxy " + tinyVersion(tinyBin), proxy: tpURL, pid: tp.Process.Pid})
	}

	// Modes are interleaved round by round so that load from other work on
	// the machine hits all of them alike; each figure is the median of the
	// rounds.
	const rounds = 5
	type scenario struct {
		name      string
		target    string
		keepAlive bool
		big       bool
		reps      int
	}
	scenarios := []scenario{
		{"10 MB body, HTTP (absolute-URI)", plain.URL + "/big", true, true, max(1, bigReps/rounds)},
		{fmt.Sprintf("%d small requests, HTTP (absolute-URI), keep-alive", small), plain.URL + "/small", true, false, max(1, small/rounds)},
		{"10 MB body, HTTPS (CONNECT)", secure.URL + "/big", true, true, max(1, bigReps/rounds)},
		{fmt.Sprintf("%d small requests, HTTPS (CONNECT), keep-alive", small), secure.URL + "/small", true, false, max(1, small/rounds)},
		// The webfetch pattern: a new connection (and so a new CONNECT the
		// proxy checks) for every request.
		{fmt.Sprintf("%d small requests, HTTPS, new connection each", small), secure.URL + "/small", false, false, max(1, small/rounds)},
	}
	var rows []row
	for _, sc := range scenarios {
		clients := make([]*http.Client, len(modes))
		for i, m := range modes {
			clients[i] = client(m.proxy, sc.keepAlive)
			if _, err := fetch(clients[i], sc.target); err != nil { // warm-up
				return fmt.Errorf("%s via %s: %w", sc.name, m.name, err)
			}
		}
		samples := make([][]float64, len(modes))
		cpu := make([]float64, len(modes))
		for r := 0; r < rounds; r++ {
			for i, m := range modes {
				var v float64
				var err error
				before := cpuMS(m.pid)
				if sc.big {
					v, err = bigRun(clients[i], sc.target, sc.reps)
				} else {
					v, err = smallRun(clients[i], sc.target, sc.reps)
				}
				if err != nil {
					return fmt.Errorf("%s via %s: %w", sc.name, m.name, err)
				}
				cpu[i] += cpuMS(m.pid) - before
				samples[i] = append(samples[i], v)
			}
		}
		for i, m := range modes {
			unit := "ms/request"
			if sc.big {
				unit = "MB/s"
			}
			per := -1.0
			if m.pid != 0 {
				per = cpu[i] / float64(rounds*sc.reps)
			}
			rows = append(rows, row{sc.name, m.name, median(samples[i]), unit, per})
			clients[i].CloseIdleConnections()
		}
		fmt.Fprintln(os.Stderr, "done:", sc.name)
	}
	table := render(rows, modes, bigReps, loadStart, benchenv.LoadAvg()) + renderCPU(rows, modes) + verdict(rows, modes)
	fmt.Print(table)
	if out != "" {
		if err := writeSection(out, table); err != nil {
			return err
		}
		fmt.Fprintln(os.Stderr, "updated", out)
	}
	return nil
}

// cpuMS is the user+system CPU time of a process so far, in ms (0 for pid
// 0, the direct mode). /proc counts every thread of the process.
func cpuMS(pid int) float64 {
	if pid == 0 {
		return 0
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+2:])
	if len(f) < 13 {
		return 0
	}
	ut, _ := strconv.ParseFloat(f[11], 64)
	st, _ := strconv.ParseFloat(f[12], 64)
	return (ut + st) * 10 // USER_HZ is 100 on Linux
}

func port(a net.Addr) string {
	_, p, _ := net.SplitHostPort(a.String())
	return p
}

func client(proxy *url.URL, keepAlive bool) *http.Client {
	tr := &http.Transport{
		DisableKeepAlives:   !keepAlive,
		MaxIdleConnsPerHost: 4,
		DisableCompression:  true,
	}
	if proxy != nil {
		tr.Proxy = http.ProxyURL(proxy)
	}
	tr.TLSClientConfig = &tls.Config{InsecureSkipVerify: true} //nolint:gosec // loopback test origin with a throwaway certificate
	return &http.Client{Transport: tr, Timeout: 2 * time.Minute}
}

func fetch(c *http.Client, u string) (int64, error) {
	resp, err := c.Get(u)
	if err != nil {
		return 0, fmt.Errorf("get: %w", err)
	}
	defer resp.Body.Close()
	n, err := io.Copy(io.Discard, resp.Body)
	if err != nil {
		return n, fmt.Errorf("read: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		return n, fmt.Errorf("status %s (%s)", resp.Status, resp.Header.Get("X-Egress-Denied"))
	}
	return n, nil
}

// bigRun returns the median throughput of reps 10 MB downloads.
func bigRun(c *http.Client, u string, reps int) (float64, error) {
	var rates []float64
	for i := 0; i < reps; i++ {
		start := time.Now()
		n, err := fetch(c, u)
		if err != nil {
			return 0, err
		}
		if n != bigSize {
			return 0, fmt.Errorf("got %d bytes", n)
		}
		rates = append(rates, float64(n)/(1<<20)/time.Since(start).Seconds())
	}
	return median(rates), nil
}

// smallRun returns the mean time per request of n sequential requests.
func smallRun(c *http.Client, u string, n int) (float64, error) {
	start := time.Now()
	for i := 0; i < n; i++ {
		if _, err := fetch(c, u); err != nil {
			return 0, err
		}
	}
	return float64(time.Since(start).Microseconds()) / 1000 / float64(n), nil
}

// median of v; for an even count the mean of the middle two (taking the
// upper one would report the better of two downloads).
func median(v []float64) float64 {
	slices.Sort(v)
	if len(v)%2 == 0 {
		return (v[len(v)/2-1] + v[len(v)/2]) / 2
	}
	return v[len(v)/2]
}

func freePort() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", fmt.Errorf("free port: %w", err)
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}

func startEgress(bin, tmp string, ports []string) (*exec.Cmd, *url.URL, error) {
	proxyAddr, err := freePort()
	if err != nil {
		return nil, nil, err
	}
	modelAddr, err := freePort()
	if err != nil {
		return nil, nil, err
	}
	cmd := exec.Command(bin, "--proxy-listen", proxyAddr, "--model-listen", modelAddr)
	cmd.Env = append(os.Environ(),
		"VESSEL_UPSTREAM_MODEL_URL=http://127.0.0.1:9/v1", // never called by the bench
		"VESSEL_EGRESS_ALLOW_HTTP_UPSTREAM=1",
		"VESSEL_EGRESS_TOKEN=bench-token",
		"VESSEL_EGRESS_ALLOW_CIDRS=127.0.0.0/8",
		"VESSEL_EGRESS_ALLOW_PORTS="+strings.Join(ports, ","),
	)
	logf, err := os.Create(filepath.Join(tmp, "egress.log"))
	if err != nil {
		return nil, nil, fmt.Errorf("egress log: %w", err)
	}
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		return nil, nil, fmt.Errorf("start egress: %w", err)
	}
	if err := waitListen(proxyAddr); err != nil {
		stop(cmd)
		b, _ := os.ReadFile(logf.Name())
		return nil, nil, fmt.Errorf("egress did not start: %w\n%s", err, b)
	}
	return cmd, &url.URL{Scheme: "http", Host: proxyAddr}, nil
}

func startTinyproxy(bin, tmp string) (*exec.Cmd, *url.URL, error) {
	if _, err := os.Stat(bin); err != nil {
		return nil, nil, fmt.Errorf("tinyproxy: %w", err)
	}
	addr, err := freePort()
	if err != nil {
		return nil, nil, err
	}
	conf := filepath.Join(tmp, "tinyproxy.conf")
	cfg := fmt.Sprintf(`Port %s
Listen 127.0.0.1
Timeout 600
MaxClients 200
Allow 127.0.0.1
LogFile "%s"
LogLevel Critical
DisableViaHeader Yes
`, port(mustAddr(addr)), filepath.Join(tmp, "tinyproxy.log"))
	if os.Geteuid() == 0 {
		cfg += "User nobody\nGroup nogroup\n"
	}
	if err := os.WriteFile(conf, []byte(cfg), 0o644); err != nil {
		return nil, nil, fmt.Errorf("tinyproxy config: %w", err)
	}
	_ = os.Chmod(tmp, 0o755)
	cmd := exec.Command(bin, "-d", "-c", conf)
	cmd.Stdout, cmd.Stderr = io.Discard, io.Discard
	if err := cmd.Start(); err != nil {
		return nil, nil, fmt.Errorf("start tinyproxy: %w", err)
	}
	if err := waitListen(addr); err != nil {
		stop(cmd)
		return nil, nil, fmt.Errorf("tinyproxy did not start: %w", err)
	}
	return cmd, &url.URL{Scheme: "http", Host: addr}, nil
}

func tinyVersion(bin string) string {
	b, err := exec.Command(bin, "-v").CombinedOutput()
	if err != nil {
		return ""
	}
	f := strings.Fields(string(b))
	if len(f) >= 2 {
		return f[1]
	}
	return ""
}

func mustAddr(s string) net.Addr {
	a, _ := net.ResolveTCPAddr("tcp", s)
	return a
}

func waitListen(addr string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	for {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			c.Close()
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("nothing listens on %s: %w", addr, err)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

func stop(c *exec.Cmd) {
	if c.Process != nil {
		_ = c.Process.Signal(os.Interrupt)
		done := make(chan struct{})
		go func() { _ = c.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			_ = c.Process.Kill()
		}
	}
}

func render(rows []row, modes []mode, bigReps int, loadStart, loadEnd string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Measured by `make bench-egress` on %s (%s/%s, %d CPUs, Go %s; load average %s at the start, %s at the end): loopback origins, one client, sequential requests; modes interleaved in 5 rounds; each figure is the median over the rounds (%d 10 MB downloads per mode in all, the median download of each round; small-request figures are the mean time per request within a round). Direct = no proxy.\n\n",
		time.Now().UTC().Format("2006-01-02 15:04 MST"), runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), runtime.Version(), loadStart, loadEnd, bigReps)
	b.WriteString("| scenario |")
	for _, m := range modes {
		fmt.Fprintf(&b, " %s |", m.name)
	}
	b.WriteString(" egress vs direct | egress speed ÷ tinyproxy (>1: egress faster) |\n|---|")
	for range modes {
		b.WriteString("---:|")
	}
	b.WriteString("---:|---:|\n")
	var order []string
	byKey := map[string]map[string]row{}
	for _, r := range rows {
		if byKey[r.scenario] == nil {
			byKey[r.scenario] = map[string]row{}
			order = append(order, r.scenario)
		}
		byKey[r.scenario][r.mode] = r
	}
	for _, sc := range order {
		fmt.Fprintf(&b, "| %s |", sc)
		var unit string
		for _, m := range modes {
			r, ok := byKey[sc][m.name]
			if !ok {
				b.WriteString(" – |")
				continue
			}
			unit = r.unit
			if r.unit == "MB/s" {
				fmt.Fprintf(&b, " %.0f MB/s |", r.value)
			} else {
				fmt.Fprintf(&b, " %.3f ms |", r.value)
			}
		}
		direct := byKey[sc][modes[0].name].value
		eg := byKey[sc][modes[1].name].value
		if unit == "MB/s" {
			fmt.Fprintf(&b, " %.2f× |", eg/direct)
		} else {
			fmt.Fprintf(&b, " %+.3f ms/request |", eg-direct)
		}
		if len(modes) > 2 {
			tp := byKey[sc][modes[2].name].value
			if unit == "MB/s" {
				fmt.Fprintf(&b, " %.2f× |", eg/tp)
			} else {
				fmt.Fprintf(&b, " %.2f× |", tp/eg)
			}
		} else {
			b.WriteString(" – |")
		}
		b.WriteString("\n")
	}
	return b.String()
}

// renderCPU is the proxies' own CPU cost, which the machine's other load
// does not distort the way it distorts wall-clock figures.
func renderCPU(rows []row, modes []mode) string {
	var b strings.Builder
	b.WriteString("\nCPU time used by the proxy process itself (user + system, from /proc; less sensitive to other load on the machine than the wall-clock figures):\n\n| scenario |")
	var ms []mode
	for _, m := range modes {
		if m.pid != 0 {
			ms = append(ms, m)
			fmt.Fprintf(&b, " %s |", m.name)
		}
	}
	b.WriteString("\n|---|")
	for range ms {
		b.WriteString("---:|")
	}
	b.WriteString("\n")
	seen := map[string]bool{}
	for _, r := range rows {
		if seen[r.scenario] {
			continue
		}
		seen[r.scenario] = true
		fmt.Fprintf(&b, "| %s |", r.scenario)
		for _, m := range ms {
			for _, q := range rows {
				if q.scenario == r.scenario && q.mode == m.name {
					if q.unit == "MB/s" {
						fmt.Fprintf(&b, " %.0f ms per 10 MB |", q.cpuMS)
					} else {
						fmt.Fprintf(&b, " %.0f µs per request |", q.cpuMS*1000)
					}
				}
			}
		}
		b.WriteString("\n")
	}
	return b.String()
}

// verdict states, from this run's numbers, which targets were met.
func verdict(rows []row, modes []mode) string {
	get := func(sc, m string) (row, bool) {
		for _, r := range rows {
			if r.scenario == sc && r.mode == m {
				return r, true
			}
		}
		return row{}, false
	}
	var b strings.Builder
	b.WriteString("\nAgainst the targets in this run:\n\n")
	seen := map[string]bool{}
	for _, r := range rows {
		if seen[r.scenario] {
			continue
		}
		seen[r.scenario] = true
		d, _ := get(r.scenario, modes[0].name)
		e, _ := get(r.scenario, modes[1].name)
		var parts []string
		if r.unit == "MB/s" {
			ok := e.value >= 0.9*d.value
			parts = append(parts, fmt.Sprintf("%.2f× direct (target 0.9×: %s)", e.value/d.value, met(ok)))
		} else {
			parts = append(parts, fmt.Sprintf("%+.3f ms per request over direct", e.value-d.value))
		}
		if len(modes) > 2 {
			t, _ := get(r.scenario, modes[2].name)
			ok := e.value >= t.value
			if r.unit != "MB/s" {
				ok = e.value <= t.value
			}
			parts = append(parts, "at least as fast as tinyproxy: "+met(ok))
		}
		fmt.Fprintf(&b, "- %s: %s.\n", r.scenario, strings.Join(parts, "; "))
	}
	return b.String()
}

func met(ok bool) string {
	if ok {
		return "met"
	}
	return "not met"
}

// writeSection replaces the "## Egress" section of a Markdown file (from
// its heading to the next level-2 heading), keeping every other section.
func writeSection(path, table string) error {
	old, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("read %s: %w", path, err)
	}
	section := "## Egress\n\n" + egressIntro + "\n" + table + "\n" + egressNotes
	text := string(old)
	if text == "" {
		text = "# Performance\n"
	}
	start := strings.Index(text, "\n## Egress\n")
	if strings.HasPrefix(text, "## Egress\n") {
		start = 0
	} else if start >= 0 {
		start++
	}
	if start < 0 {
		if !strings.HasSuffix(text, "\n") {
			text += "\n"
		}
		text += "\n" + section
	} else {
		rest := text[start+len("## Egress\n"):]
		end := strings.Index(rest, "\n## ")
		if end < 0 {
			text = text[:start] + section
		} else {
			text = text[:start] + section + "\n" + rest[end+1:]
		}
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("mkdir: %w", err)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

const egressIntro = "Throughput and added latency of the egress web proxy (`egress/webproxy`, goproxy with the address guard: " +
	"strict host parsing, one DNS lookup, policy check, dial of the checked address, one structured log line per request) " +
	"against a direct connection and against Debian's tinyproxy, in one run of `make bench-egress`. " +
	"Targets: at least 0.9× direct throughput, and no slower than tinyproxy.\n"

const egressNotes = "Reading: client, proxy and origin share the machine's CPUs, and on loopback the origin and " +
	"client cost almost nothing, so every hop the proxy adds shows. Both paths relay in user space with 1 MB reads: " +
	"plain-HTTP bodies are copied from the origin's response into the client's connection, and CONNECT tunnels use " +
	"read(2)/write(2) directly on the non-blocking sockets, which on this machine beat splice(2) and avoid a runtime " +
	"wake-up per message. For plain HTTP the proxy's extra hop is the slow stage (the origin writes faster than any " +
	"relay passes bytes on): measured separately on the same 2-CPU machine, a bare Go TCP relay with no HTTP " +
	"handling at all reached about 0.7× direct (0.65–0.8× over several runs) and a splice(2) relay about 0.55×, so " +
	"0.9× is out of reach for plain HTTP on loopback here; across a real network the round trip dominates and the " +
	"proxy's share shrinks. For HTTPS the " +
	"origin's TLS encryption is the slow stage and the tunnel mostly keeps up (0.91× to 1.02× direct in three quiet " +
	"runs on 2026-11-30). The small-request rows show the per-request cost of the policy (parsing, check, one JSON " +
	"log line); the CONNECT keep-alive row is set mostly by the wake-ups of the machine's two virtual CPUs per " +
	"message (the egress spends about as much CPU per request as tinyproxy), so it is close to a tie that can fall " +
	"either way (0.97× to 1.35× of tinyproxy's speed in those runs); the new-connection row adds a CONNECT per " +
	"request, which is what webfetch does (a fresh tunnel per hop so the egress checks every hop). Wall-clock figures " +
	"move with other load on the machine; the CPU table is the steadier comparison of the two proxies.\n"
