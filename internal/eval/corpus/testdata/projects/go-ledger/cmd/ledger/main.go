// Command ledger prints account balances of a journal file.
package main

import (
	"flag"
	"fmt"
	"log"
	"os"

	"example.com/ledger/ledger"
)

func main() {
	strict := flag.Bool("strict", false, "refuse journals with unbalanced transactions")
	flag.Parse()
	if flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: ledger [-strict] JOURNAL")
		os.Exit(2)
	}
	f, err := os.Open(flag.Arg(0))
	if err != nil {
		log.Fatal(err)
	}
	defer f.Close()
	entries, err := ledger.Parse(f)
	if err != nil {
		log.Fatalf("%s: %v", flag.Arg(0), err)
	}
	log.Printf("read %d postings from %s", len(entries), flag.Arg(0))
	if *strict {
		ledger.MustBalance(entries)
	}
	b := ledger.NewBook()
	b.Post(entries...)
	for _, a := range b.Accounts() {
		fmt.Printf("%-28s %12s\n", a, ledger.FormatCents(b.Balance(a)))
	}
}
