//go:build integration

package integration

import (
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// busyLoop spins until its own process has used 2 s of CPU (user + system,
// read from /proc/self/stat in clock ticks), however fast the machine and
// whichever awk it has; `exit N` after it. It runs in a child of a child,
// as a phase's compilers do.
const busyLoop = `bash -c 'target=$((2 * $(getconf CLK_TCK))); while read -r s < /proc/$BASHPID/stat; set -- ${s##*) }; ((${12} + ${13} < target)); do :; done'; exit `

var (
	closingLine  = regexp.MustCompile(`(?m)^<== busy: (?:FAILED \(exit (\d+)\) after )?(\d+)s \(cpu (\d+)s\)$`)
	progressLine = regexp.MustCompile(`(?m)^… busy: still running, (\d+)s \(cpu (\d+)s\)$`)
)

// runPhase runs scripts/phase.sh NAME sh -c SCRIPT with a progress line
// after every second of silence, and returns its output and exit status.
func runPhase(t *testing.T, name, script string) (string, int) {
	t.Helper()
	cmd := exec.Command("bash", "../scripts/phase.sh", name, "sh", "-c", script)
	cmd.Env = append(os.Environ(), "PHASE_PROGRESS_SECONDS=1")
	out, err := cmd.Output()
	if cmd.ProcessState == nil {
		t.Fatalf("phase.sh did not run: %v", err)
	}
	return string(out), cmd.ProcessState.ExitCode()
}

// scripts/phase.sh frames each phase of make test: its closing line must
// give the wall and the CPU time of what the phase ran, and its exit status
// must be the command's, or make would go on past a failed phase. While the
// command is silent, progress lines give the time and CPU so far.
func TestPhaseLines(t *testing.T) {
	t.Parallel()
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("the busy loop reads its CPU time from /proc")
	}
	for _, exit := range []int{0, 3} {
		t.Run("exit "+strconv.Itoa(exit), func(t *testing.T) {
			t.Parallel()
			out, got := runPhase(t, "busy", busyLoop+strconv.Itoa(exit))
			if got != exit {
				t.Fatalf("phase.sh exited %d, want %d:\n%s", got, exit, out)
			}
			m := closingLine.FindStringSubmatch(out)
			if m == nil {
				t.Fatalf("no closing line like %q in\n%s", closingLine, out)
			}
			if exit != 0 && m[1] != strconv.Itoa(exit) {
				t.Errorf("the closing line says exit %s", m[1])
			}
			// 2 s of CPU and its process's start, rounded to the second; on a
			// loaded machine the shells around it add up to a second more
			// over a long wall time.
			wall, _ := strconv.Atoi(m[2])
			if cpu, _ := strconv.Atoi(m[3]); cpu < 2 || cpu > 3 {
				t.Errorf("cpu %ds for a phase that used 2 s of CPU:\n%s", cpu, out)
			}
			if wall < 2 {
				t.Errorf("%ds of wall time for a phase that used 2 s of CPU on one core:\n%s", wall, out)
			}
			// At least one progress line while it computed, none after its
			// end, and one of them with at least 1 s of CPU: the lines come a
			// second apart, so the one before the last second of the 2 s has
			// counted 1 s. Not the last line alone: a line read while the busy
			// process is being reaped counts its CPU in neither it (gone from
			// /proc) nor its parent (not yet waited for).
			progress := progressLine.FindAllStringSubmatch(out, -1)
			if len(progress) == 0 {
				t.Fatalf("no progress line like %q in 2 s of silence:\n%s", progressLine, out)
			}
			most := 0
			for _, p := range progress {
				if secs, _ := strconv.Atoi(p[1]); secs > wall {
					t.Errorf("a progress line at %ss, after the phase's %ds:\n%s", p[1], wall, out)
				}
				if cpu, _ := strconv.Atoi(p[2]); cpu > most {
					most = cpu
				}
			}
			if most < 1 {
				t.Errorf("no progress line counts 1 s of CPU, though the phase used 2 s with a line every second:\n%s", out)
			}
		})
	}
}

// A phase that prints gets no progress lines among its own, and its lines
// pass through whole and in order; a phase ends when its command does, even
// if a process the command left behind still holds the output open.
func TestPhaseOutput(t *testing.T) {
	t.Parallel()
	out, status := runPhase(t, "chatty", `for i in 1 2 3 4 5; do echo "line $i"; sleep 0.4; done; printf 'no newline'`)
	if status != 0 {
		t.Fatalf("phase.sh exited %d:\n%s", status, out)
	}
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	want := []string{"==> chatty", "line 1", "line 2", "line 3", "line 4", "line 5", "no newline"}
	if len(lines) != len(want)+1 || strings.Join(lines[:len(want)], "\n") != strings.Join(want, "\n") ||
		!strings.HasPrefix(lines[len(want)], "<== chatty: ") {
		t.Errorf("phase.sh printed\n%s\nwant %q and then the closing line", out, want)
	}

	start := time.Now()
	out, status = runPhase(t, "leaves", `sleep 12 & echo started`)
	if took := time.Since(start); status != 0 || took > 8*time.Second || !strings.Contains(out, "\n<== leaves: ") {
		t.Errorf("a command that leaves a process holding the output: exit %d after %v:\n%s", status, took, out)
	}
}

// scripts/silence-watch.sh (make test-fresh) fails a command whose output
// was silent for longer than its limit, naming the phase the silence was in,
// and passes one that prints often enough; a failed command's status is its.
func TestSilenceWatch(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, script string
		status       int
		report       string // a line the report must hold; none when ""
	}{
		{"silent", `sleep 4; echo late`, 1, "silent for 4s (the limit is 3s) in no phase, after: (the start)"},
		{"in a phase", `echo "==> build"; echo "==> inner"; echo "<== inner: 0s"; sleep 4; echo "<== build: 4s"`,
			1, `silent for 4s (the limit is 3s) in phase "build", after: <== inner: 0s`},
		{"silent to the end", `echo started; sleep 4`, 1, "silent for 4s (the limit is 3s) in no phase, after: started"},
		{"a line every second", `for i in 1 2 3 4; do echo "line $i"; sleep 1; done`, 0, ""},
		{"part of a line every second", `for i in 1 2 3 4; do printf "$i%%... "; sleep 1; done; echo`, 0, ""},
		{"failed", `echo x; exit 4`, 4, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			// A limit of 3 s against output every second: a part of a line
			// is read when a second passes without its end, so on a loaded
			// machine (make test's other packages beside it) the outputs
			// seen can be 2 s apart; at a limit of 2 s that failed CI.
			cmd := exec.Command("bash", "../scripts/silence-watch.sh", "3", "sh", "-c", tc.script)
			out, _ := cmd.Output()
			if got := cmd.ProcessState.ExitCode(); got != tc.status {
				t.Errorf("exit %d, want %d:\n%s", got, tc.status, out)
			}
			// A 4 s sleep on a loaded machine is reported as 4 s or 5 s.
			report := strings.Replace(regexp.QuoteMeta(tc.report), "silent for 4s", "silent for [45]s", 1)
			if tc.report != "" && !regexp.MustCompile(`\n  `+report+`\n`).Match(out) {
				t.Errorf("no report %q in\n%s", tc.report, out)
			}
			if tc.report == "" && strings.Contains(string(out), "silent for") {
				t.Errorf("a silence reported:\n%s", out)
			}
			if !regexp.MustCompile(`(?m)^\[00:0\d\] `).Match(out) {
				t.Errorf("no line of the output with its time, [00:0N]:\n%s", out)
			}
		})
	}
}
