// Package resize runs thumbnail jobs on a fixed pool of workers.
package resize

import (
	"fmt"
	"path"
	"strings"
	"sync"
)

// Job asks for one image to be scaled to Width pixels.
type Job struct {
	Path  string
	Width int
}

// Result is the outcome of one job.
type Result struct {
	Job    Job
	Output string
	Err    error
}

// Process runs jobs on n workers and returns their results in completion order.
func Process(jobs []Job, n int) []Result {
	in := make(chan Job)
	out := make(chan Result)
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range in {
				out <- thumbnail(j)
			}
		}()
	}
	for _, j := range jobs {
		in <- j
	}
	close(in)
	wg.Wait()
	close(out)
	var results []Result
	for r := range out {
		results = append(results, r)
	}
	return results
}

func thumbnail(j Job) Result {
	ext := strings.ToLower(path.Ext(j.Path))
	if ext != ".jpg" && ext != ".png" {
		return Result{Job: j, Err: fmt.Errorf("resize: %s: unsupported format %q", j.Path, ext)}
	}
	if j.Width <= 0 {
		return Result{Job: j, Err: fmt.Errorf("resize: %s: bad width %d", j.Path, j.Width)}
	}
	base := strings.TrimSuffix(j.Path, path.Ext(j.Path))
	return Result{Job: j, Output: fmt.Sprintf("%s_w%d%s", base, j.Width, ext)}
}
