package load

import (
	"fmt"
	"os"
	"runtime"
	"sort"
	"strings"
	"time"
)

// Report is a run's summary, written as report.json and report.md.
type Report struct {
	Command string  `json:"command"`
	Machine Machine `json:"machine"`
	Started string  `json:"started"`
	// LoadAvg is the machine's 1-minute load average at the start and the
	// end of the run: other work on the machine competes for the pinned CPUs.
	LoadAvg [2]float64 `json:"load_average"`

	Users    int `json:"users"`
	Turns    int `json:"turns_per_user"`
	History  int `json:"history"`
	Pieces   int `json:"pieces"`
	Cancels  int `json:"cancels"`
	Replicas int `json:"replicas"`
	// Store is "sqlite" or "postgres".
	Store      string `json:"store"`
	ServerCPUs string `json:"server_cpus,omitempty"`
	ClientCPUs string `json:"client_cpus,omitempty"`
	// Scratch is "tmpfs" (as deployed) or "dir" (a folder on Out's disk).
	Scratch string `json:"scratch"`
	// Project is the stack's project, which picked its call uids.
	Project string `json:"project,omitempty"`

	TurnsTotal  int `json:"turns_total"`
	TurnsOK     int `json:"turns_ok"`
	TurnsFailed int `json:"turns_failed"`
	CancelledOK int `json:"cancelled_ok"`
	// LateCancels reached the vessel after their turn had completed.
	LateCancels int `json:"late_cancels"`
	// ToolKills are turns whose shell command a signal ended: none asks
	// for one, so each is a kill from outside the turn (another turn's or
	// another deployment's sweep).
	ToolKills      int     `json:"tool_kills"`
	WallSeconds    float64 `json:"wall_seconds"`
	TurnsPerSecond float64 `json:"turns_per_second"`

	// Turn times are of completed (not cancelled) turns, in milliseconds.
	TurnMedianMS float64 `json:"turn_median_ms"`
	TurnP95MS    float64 `json:"turn_p95_ms"`
	TurnP99MS    float64 `json:"turn_p99_ms"`
	TurnMaxMS    float64 `json:"turn_max_ms"`
	// First event (the task frame) and first text piece, every turn.
	FirstEventMedianMS float64 `json:"first_event_median_ms"`
	FirstEventP95MS    float64 `json:"first_event_p95_ms"`
	FirstTextMedianMS  float64 `json:"first_text_median_ms"`
	PiecesMedian       float64 `json:"pieces_median"`
	// From CancelTask sent to the cancelled turn's stream ending.
	CancelMedianMS float64 `json:"cancel_to_end_median_ms"`
	CancelMaxMS    float64 `json:"cancel_to_end_max_ms"`

	VesselPeakRSSMB  []float64 `json:"vessel_peak_rss_mb"`
	SandboxPeakRSSMB float64   `json:"sandboxd_peak_rss_mb"`
	ModelPeakRSSMB   float64   `json:"model_peak_rss_mb"`
	// CPU seconds used during the run (utime+stime), per process.
	VesselCPUSeconds  []float64 `json:"vessel_cpu_seconds"`
	SandboxCPUSeconds float64   `json:"sandboxd_cpu_seconds"`
	ModelCPUSeconds   float64   `json:"model_cpu_seconds"`
	ClientCPUSeconds  float64   `json:"load_tool_cpu_seconds"`
	ScratchEntries    int       `json:"scratch_entries_left"`
	ScratchBytes      int64     `json:"scratch_bytes_left"`
	// ScratchDrainSeconds is how long after the last turn the count was
	// taken: when the scratch emptied, or when the wait gave up.
	ScratchDrainSeconds float64 `json:"scratch_drain_seconds"`

	Failures []string `json:"failures,omitempty"`
}

// Machine describes where the run happened.
type Machine struct {
	CPU    string `json:"cpu"`
	Cores  int    `json:"cores"`
	MemMB  int64  `json:"mem_mb"`
	Kernel string `json:"kernel"`
	Go     string `json:"go"`
}

// ThisMachine reads the CPU model, memory and kernel from /proc.
func ThisMachine() Machine {
	m := Machine{Cores: runtime.NumCPU(), Go: runtime.Version()}
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
				m.CPU = strings.TrimSpace(v)
				break
			}
		}
	}
	if b, err := os.ReadFile("/proc/meminfo"); err == nil {
		var kb int64
		if _, err := fmt.Sscanf(string(b), "MemTotal: %d kB", &kb); err == nil {
			m.MemMB = kb / 1024
		}
	}
	if b, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		m.Kernel = strings.TrimSpace(string(b))
	}
	return m
}

// Summarize fills the turn figures of r from turns.
func (r *Report) Summarize(turns []Turn, wall time.Duration) {
	r.TurnsTotal = len(turns)
	r.WallSeconds = wall.Seconds()
	if wall > 0 {
		r.TurnsPerSecond = float64(len(turns)) / wall.Seconds()
	}
	var dur, first, text, pieces, cancels []float64
	sort.Slice(turns, func(i, j int) bool {
		if turns[i].User != turns[j].User {
			return turns[i].User < turns[j].User
		}
		return turns[i].Index < turns[j].Index
	})
	for _, t := range turns {
		if t.LateCancel {
			r.LateCancels++
		}
		if t.ToolSignal != "" {
			r.ToolKills++
		}
		if t.OK {
			r.TurnsOK++
			if t.Cancel && !t.LateCancel {
				r.CancelledOK++
			}
		} else {
			r.TurnsFailed++
			if len(r.Failures) < 20 {
				r.Failures = append(r.Failures, fmt.Sprintf("user %d turn %d (replica %d, cancel %v): %s", t.User, t.Index, t.Replica, t.Cancel, t.Error))
			}
		}
		if t.FirstEvent > 0 {
			first = append(first, ms(t.FirstEvent))
		}
		if t.FirstText > 0 {
			text = append(text, ms(t.FirstText))
		}
		if t.CancelToEnd > 0 {
			cancels = append(cancels, ms(t.CancelToEnd))
		}
		if t.OK && (!t.Cancel || t.LateCancel) {
			dur = append(dur, ms(t.Duration))
			pieces = append(pieces, float64(t.Pieces))
		}
	}
	r.TurnMedianMS = Percentile(dur, 50)
	r.TurnP95MS = Percentile(dur, 95)
	r.TurnP99MS = Percentile(dur, 99)
	r.TurnMaxMS = Percentile(dur, 100)
	r.FirstEventMedianMS = Percentile(first, 50)
	r.FirstEventP95MS = Percentile(first, 95)
	r.FirstTextMedianMS = Percentile(text, 50)
	r.PiecesMedian = Percentile(pieces, 50)
	r.CancelMedianMS = Percentile(cancels, 50)
	r.CancelMaxMS = Percentile(cancels, 100)
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// Percentile is the nearest-rank percentile p (0–100) of xs; 0 when empty.
func Percentile(xs []float64, p float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	if p <= 0 {
		return s[0]
	}
	rank := int(p/100*float64(len(s)) + 0.999999999)
	if rank < 1 {
		rank = 1
	}
	if rank > len(s) {
		rank = len(s)
	}
	return s[rank-1]
}

// Markdown renders the report as a table.
func (r *Report) Markdown() string {
	var b strings.Builder
	fmt.Fprintf(&b, "Command: `%s`\n\n", r.Command)
	fmt.Fprintf(&b, "Machine: %s, %d cores, %d MB RAM, Linux %s, %s; load average %.1f at start, %.1f at end\n\n",
		r.Machine.CPU, r.Machine.Cores, r.Machine.MemMB, r.Machine.Kernel, r.Machine.Go, r.LoadAvg[0], r.LoadAvg[1])
	rows := [][2]string{
		{"Users × turns", fmt.Sprintf("%d × %d", r.Users, r.Turns)},
		{"History / pieces / cancels", fmt.Sprintf("%d messages / %d / %d", r.History, r.Pieces, r.Cancels)},
		{"Replicas (store)", fmt.Sprintf("%d (%s)", r.Replicas, r.Store)},
		{"Pinning (servers / load tool)", fmt.Sprintf("%s / %s", orDash(r.ServerCPUs), orDash(r.ClientCPUs))},
		{"Sandbox scratch", orDash(r.Scratch)},
		{"Project (picks the call uids)", orDash(r.Project)},
		{"Turns ok / failed", fmt.Sprintf("%d / %d (of %d; %d cancelled as asked)", r.TurnsOK, r.TurnsFailed, r.TurnsTotal, r.CancelledOK)},
		{"Shell commands ended by a signal the turn did not ask for", fmt.Sprintf("%d", r.ToolKills)},
		{"Cancels that arrived after their turn had completed", fmt.Sprintf("%d", r.LateCancels)},
		{"Turn time median / p95 / p99 / max", fmt.Sprintf("%.0f / %.0f / %.0f / %.0f ms", r.TurnMedianMS, r.TurnP95MS, r.TurnP99MS, r.TurnMaxMS)},
		{"First event median / p95", fmt.Sprintf("%.0f / %.0f ms", r.FirstEventMedianMS, r.FirstEventP95MS)},
		{"First text piece median", fmt.Sprintf("%.0f ms", r.FirstTextMedianMS)},
		{"text.delta events per turn (median; the vessel merges pieces)", fmt.Sprintf("%.0f", r.PiecesMedian)},
		{"Cancel sent → stream ended, median / max", fmt.Sprintf("%.0f / %.0f ms", r.CancelMedianMS, r.CancelMaxMS)},
		{"Wall time / throughput", fmt.Sprintf("%.1f s / %.2f turns/s", r.WallSeconds, r.TurnsPerSecond)},
		{"Vessel peak RSS", joinF(r.VesselPeakRSSMB, "%.0f") + " MB"},
		{"sandboxd peak RSS", fmt.Sprintf("%.0f MB", r.SandboxPeakRSSMB)},
		{"Scripted model peak RSS", fmt.Sprintf("%.0f MB", r.ModelPeakRSSMB)},
		{"CPU seconds during the run: vessel / sandboxd (with its tool calls) / model / load tool", fmt.Sprintf("%s / %.1f / %.1f / %.1f", joinF(r.VesselCPUSeconds, "%.1f"), r.SandboxCPUSeconds, r.ModelCPUSeconds, r.ClientCPUSeconds)},
		{"Scratch left behind", fmt.Sprintf("%d entries, %d bytes (counted %.1f s after the last turn)", r.ScratchEntries, r.ScratchBytes, r.ScratchDrainSeconds)},
	}
	b.WriteString("| Measure | Value |\n|---|---|\n")
	for _, row := range rows {
		fmt.Fprintf(&b, "| %s | %s |\n", row[0], row[1])
	}
	if len(r.Failures) > 0 {
		b.WriteString("\nFailures (first 20):\n\n")
		for _, f := range r.Failures {
			fmt.Fprintf(&b, "- %s\n", f)
		}
	}
	return b.String()
}

func joinF(xs []float64, format string) string {
	out := make([]string, len(xs))
	for i, x := range xs {
		out[i] = fmt.Sprintf(format, x)
	}
	return strings.Join(out, ", ")
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
