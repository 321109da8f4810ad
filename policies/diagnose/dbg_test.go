package diagnose

import (
	"fmt"
	"os"
	"testing"
)

func TestDbg(t *testing.T) {
	b, err := os.ReadFile(os.Getenv("F"))
	if err != nil {
		t.Skip()
	}
	d := Read(string(b))
	fmt.Printf("failed=%v envelope=%q\n", d.Failed, d.Envelope)
	for _, x := range d.Findings {
		fmt.Printf("  [%s sev=%d ×%d also=%v] %q\n", x.Kind, x.Severity, x.Count, x.Also, x.Lines)
	}
}
