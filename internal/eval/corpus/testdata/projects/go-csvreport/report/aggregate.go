package report

import (
	"sort"
	"time"
)

// Totals is what one region sold.
type Totals struct {
	Region  string
	Units   int
	Revenue float64
}

// ByRegion sums units and revenue per region, largest revenue first.
func ByRegion(rows []Record) []Totals {
	m := map[string]*Totals{}
	for _, r := range rows {
		t, ok := m[r.Region]
		if !ok {
			t = &Totals{Region: r.Region}
			m[r.Region] = t
		}
		t.Units += r.Units
		t.Revenue += r.Revenue
	}
	out := make([]Totals, 0, len(m))
	for _, t := range m {
		out = append(out, *t)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Revenue > out[j].Revenue })
	return out
}

// Between keeps the rows dated in [from, to).
func Between(rows []Record, from, to time.Time) []Record {
	var out []Record
	for _, r := range rows {
		if !r.Date.Before(from) && r.Date.Before(to) {
			out = append(out, r)
		}
	}
	return out
}

// TopProducts returns the n products with the most units sold.
func TopProducts(rows []Record, n int) []string {
	units := map[string]int{}
	for _, r := range rows {
		units[r.Product] += r.Units
	}
	names := make([]string, 0, len(units))
	for p := range units {
		names = append(names, p)
	}
	sort.Slice(names, func(i, j int) bool { return units[names[i]] > units[names[j]] })
	if len(names) > n {
		names = names[:n]
	}
	return names
}

// Monthly groups rows by the first day of their month.
func Monthly(rows []Record) map[time.Time][]Record {
	out := map[time.Time][]Record{}
	for _, r := range rows {
		m := time.Date(r.Date.Year(), r.Date.Month(), 1, 0, 0, 0, 0, time.UTC)
		out[m] = append(out[m], r)
	}
	return out
}

// Filter keeps the rows for which keep returns true.
func Filter(rows []Record, keep func(Record) bool) []Record {
	var out []Record
	for _, r := range rows {
		if keep(r) {
			out = append(out, r)
		}
	}
	return out
}

// Largest returns the row with the highest revenue.
func Largest(rows []Record) (Record, bool) {
	var best Record
	for i, r := range rows {
		if i == 0 || r.Revenue > best.Revenue {
			best = r
		}
	}
	return best, len(rows) > 0
}
