//go:build integration

package integration

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// metricsURL is the /metrics address a server started with
// --metrics-listen logged.
func (s *server) metricsURL(t *testing.T) string {
	t.Helper()
	for _, line := range strings.Split(s.logs.String(), "\n") {
		var entry struct {
			Msg  string `json:"msg"`
			Addr string `json:"addr"`
		}
		if json.Unmarshal([]byte(line), &entry) == nil && entry.Msg == "metrics" {
			return entry.Addr
		}
	}
	t.Fatalf("the server logged no metrics address\n%s", s.logs)
	return ""
}

// sample is one exposed sample: a series of a counter or gauge, or the
// _count, _sum or _bucket series of a histogram.
type sample struct {
	name   string
	labels map[string]string
	value  float64
}

// scrape is what one GET /metrics exposed.
type scrape struct {
	families map[string]*dto.MetricFamily
	samples  []sample
}

// getMetrics GETs url, asking for a format with accept ("" for the text
// format), and returns the body and its content type.
func getMetrics(t *testing.T, url, accept string) ([]byte, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s %v\n%s", url, resp.Status, err, body)
	}
	return body, resp.Header.Get("Content-Type")
}

// scrapeMetrics reads url in the text format and parses it with Prometheus's
// own parser.
func scrapeMetrics(t *testing.T, url string) *scrape {
	t.Helper()
	body, _ := getMetrics(t, url, "")
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(bytes.NewReader(body))
	if err != nil {
		t.Fatalf("parsing %s: %v", url, err)
	}
	sc := &scrape{families: families}
	for name, mf := range families {
		for _, m := range mf.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			switch mf.GetType() {
			case dto.MetricType_COUNTER:
				sc.samples = append(sc.samples, sample{name, labels, m.GetCounter().GetValue()})
			case dto.MetricType_GAUGE:
				sc.samples = append(sc.samples, sample{name, labels, m.GetGauge().GetValue()})
			case dto.MetricType_UNTYPED:
				sc.samples = append(sc.samples, sample{name, labels, m.GetUntyped().GetValue()})
			case dto.MetricType_SUMMARY:
				sc.samples = append(sc.samples, sample{name + "_count", labels, float64(m.GetSummary().GetSampleCount())},
					sample{name + "_sum", labels, m.GetSummary().GetSampleSum()})
			case dto.MetricType_HISTOGRAM:
				h := m.GetHistogram()
				sc.samples = append(sc.samples, sample{name + "_count", labels, float64(h.GetSampleCount())},
					sample{name + "_sum", labels, h.GetSampleSum()})
				for _, b := range h.GetBucket() {
					bl := map[string]string{"le": strconv.FormatFloat(b.GetUpperBound(), 'g', -1, 64)}
					for k, v := range labels {
						bl[k] = v
					}
					sc.samples = append(sc.samples, sample{name + "_bucket", bl, float64(b.GetCumulativeCount())})
				}
			}
		}
	}
	return sc
}

// sum adds the samples of name whose labels include match.
func (s *scrape) sum(name string, match map[string]string) float64 {
	total := 0.0
	for _, smp := range s.samples {
		if smp.name == name && includes(smp.labels, match) {
			total += smp.value
		}
	}
	return total
}

func includes(labels, match map[string]string) bool {
	for k, v := range match {
		if labels[k] != v {
			return false
		}
	}
	return true
}

// names are the sample names exposed (a histogram's _bucket, _sum, _count).
func (s *scrape) names() map[string]bool {
	out := map[string]bool{}
	for _, smp := range s.samples {
		out[smp.name] = true
	}
	return out
}

// labelValues are the values label takes in name's samples, sorted.
func (s *scrape) labelValues(name, label string) []string {
	seen := map[string]bool{}
	for _, smp := range s.samples {
		if v, ok := smp.labels[label]; ok && smp.name == name {
			seen[v] = true
		}
	}
	out := make([]string, 0, len(seen))
	for v := range seen {
		out = append(out, v)
	}
	sort.Strings(out)
	return out
}

// delta is how far a sum moved between two scrapes.
func delta(before, after *scrape, name string, match map[string]string) float64 {
	return after.sum(name, match) - before.sum(name, match)
}
