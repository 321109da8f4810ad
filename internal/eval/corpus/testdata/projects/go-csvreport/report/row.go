// Package report reads sales CSV exports and aggregates them per region.
package report

import (
	"encoding/csv"
	"fmt"
	"io"
	"strconv"
	"time"
)

// Row is one line of a sales export (formerly Record).
type Row struct {
	Date    time.Time
	Region  string
	Product string
	Units   int
	Revenue float64
}

// ReadRows parses a CSV export with the header
// date,region,product,units,revenue.
func ReadRows(r io.Reader) ([]Row, error) {
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = 5
	header, err := cr.Read()
	if err != nil {
		return nil, fmt.Errorf("report: reading header: %w", err)
	}
	if header[0] != "date" {
		return nil, fmt.Errorf("report: unexpected header %v", header)
	}
	var rows []Row
	for line := 2; ; line++ {
		rec, err := cr.Read()
		if err == io.EOF {
			return rows, nil
		}
		if err != nil {
			return nil, err
		}
		d, err := time.Parse("2006-01-02", rec[0])
		if err != nil {
			return nil, fmt.Errorf("report: line %d: %w", line, err)
		}
		units, err := strconv.Atoi(rec[3])
		if err != nil {
			return nil, fmt.Errorf("report: line %d: units: %w", line, err)
		}
		rev, err := strconv.ParseFloat(rec[4], 64)
		if err != nil {
			return nil, fmt.Errorf("report: line %d: revenue: %w", line, err)
		}
		rows = append(rows, Row{Date: d, Region: rec[1], Product: rec[2], Units: units, Revenue: rev})
	}
}
