package resize

import "testing"

func TestThumbnailName(t *testing.T) {
	r := thumbnail(Job{Path: "img/cat.JPG", Width: 320})
	if r.Err != nil || r.Output != "img/cat_w320.jpg" {
		t.Fatalf("thumbnail = %+v", r)
	}
}

func TestProcessAll(t *testing.T) {
	jobs := []Job{{"a.jpg", 100}, {"b.png", 200}, {"c.gif", 100}, {"d.jpg", 0}}
	res := Process(jobs, 2)
	if len(res) != len(jobs) {
		t.Fatalf("got %d results, want %d", len(res), len(jobs))
	}
}
