package integration

import (
	"os/exec"
	"regexp"
	"strconv"
	"testing"
)

// scripts/phase.sh frames each phase of make test: its closing line must
// give the wall and the CPU time of what the phase ran, and its exit status
// must be the command's, or make would go on past a failed phase.
func TestPhaseLines(t *testing.T) {
	t.Parallel()
	closing := regexp.MustCompile(`(?m)^<== busy: (?:FAILED \(exit (\d+)\) after )?(\d+)s \(cpu (\d+)s\)$`)
	// About 2 s of CPU in a child of a child, as a phase's compilers are
	// (2e7 rounds took 0.65 s on a fast core, which rounded to 0 s when a
	// busy machine slowed the rest).
	busy := `awk 'BEGIN { for (i = 0; i < 6e7; i++) s += i }'; exit `
	for _, exit := range []int{0, 3} {
		cmd := exec.Command("bash", "../scripts/phase.sh", "busy", "sh", "-c", busy+strconv.Itoa(exit))
		out, err := cmd.Output()
		if got := cmd.ProcessState.ExitCode(); got != exit {
			t.Fatalf("exit %d: phase.sh exited %d (%v)\n%s", exit, got, err, out)
		}
		m := closing.FindSubmatch(out)
		if m == nil {
			t.Fatalf("exit %d: no closing line like %q in\n%s", exit, closing, out)
		}
		if exit != 0 && string(m[1]) != strconv.Itoa(exit) {
			t.Errorf("exit %d: the closing line says exit %s", exit, m[1])
		}
		if cpu, _ := strconv.Atoi(string(m[3])); cpu < 1 {
			t.Errorf("exit %d: cpu %ds for a phase that computed for about 2 s:\n%s", exit, cpu, out)
		}
	}
}
