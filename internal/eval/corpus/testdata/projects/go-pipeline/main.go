// Command pipeline makes thumbnails for the images named on the command line.
package main

import (
	"fmt"
	"os"

	"example.com/pipeline/resize"
)

func main() {
	jobs := []resize.Job{
		{Path: "photos/beach.jpg", Width: 640},
		{Path: "photos/dog.png", Width: 320},
		{Path: "photos/scan.tiff", Width: 640},
	}
	failed := 0
	for _, r := range resize.Process(jobs, 2) {
		if r.Err != nil {
			fmt.Fprintln(os.Stderr, r.Err)
			failed++
			continue
		}
		fmt.Println(r.Output)
	}
	if failed > 0 {
		os.Exit(1)
	}
}
