// Command invoicer reads invoice lines from a file and prints a report.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"os"

	"example.com/invoicer/internal/parse"
)

func main() {
	file := flag.String("file", "testdata/invoices.txt", "invoice lines, one per line")
	flag.Parse()
	f, err := os.Open(*file)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		customer, rest := parse.SplitLine(sc.Text())
		fmt.Printf("%s: %s\n", customer, rest)
	}
}
