package pipeline

import (
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/zeebo/xxh3"

	"github.com/contextcompiler/ctxc/policies/agentstate"
)

func TestScheduleCacheStaysInItsBound(t *testing.T) {
	c := NewScheduleCache(1000)
	key := func(i int) scheduleKey { return scheduleKey{uint64(i), 0} }
	for i := range 10 {
		c.put(key(i), &scheduleSnapshot{size: 300})
		if s := c.Stats(); s.Bytes > 1000 {
			t.Fatalf("after %d stores: %d bytes, over the bound of 1000", i+1, s.Bytes)
		}
		// Used, so the oldest key outlives the ones stored after it.
		if _, at := c.latest([]scheduleKey{key(0)}); at != 0 {
			t.Fatalf("after %d stores: the most recently used snapshot was evicted", i+1)
		}
	}
	s := c.Stats()
	if s.Entries != 3 || s.Bytes != 900 || s.Evictions != 7 {
		t.Fatalf("stats %+v, want 3 entries of 900 bytes after 7 evictions", s)
	}
	if _, at := c.latest([]scheduleKey{key(9), key(1)}); at != 0 && at != -1 {
		t.Fatalf("latest answered %d", at)
	}
	if _, at := c.latest([]scheduleKey{key(1)}); at != -1 {
		t.Fatal("an evicted snapshot was found")
	}
	c.put(key(100), &scheduleSnapshot{size: 1001})
	if _, at := c.latest([]scheduleKey{key(100)}); at != -1 {
		t.Fatal("a snapshot larger than the whole bound was kept")
	}
	if NewScheduleCache(0) != nil {
		t.Fatal("a cache of 0 bytes should be none")
	}
	var none *ScheduleCache
	if none.Stats() != (ScheduleCacheStats{}) {
		t.Fatal("a nil cache has stats")
	}
}

func TestScheduleCacheIsSafeForConcurrentUse(t *testing.T) {
	c := NewScheduleCache(10_000)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 500 {
				k := scheduleKey{uint64((g*7 + i) % 50), 1}
				c.put(k, &scheduleSnapshot{size: 100 + i%300})
				c.latest([]scheduleKey{k, {uint64(i), 2}})
			}
		}()
	}
	wg.Wait()
	if s := c.Stats(); s.Bytes > 10_000 {
		t.Fatalf("stats %+v: over the bound", s)
	}
}

// TestMessageHashCoversEveryField sets every field of a message, one at a
// time, and wants the hash to change: a field added to agentstate.Message and
// forgotten by hasher.message would let a changed log resume from a snapshot
// of another.
func TestMessageHashCoversEveryField(t *testing.T) {
	hash := func(m *agentstate.Message) scheduleKey {
		x := hasher{h: xxh3.New()}
		x.message(m)
		return x.sum()
	}
	base := agentstate.Message{Parts: []agentstate.Part{{}}, Metadata: map[string]string{}}
	zero := hash(&base)
	var walk func(v reflect.Value, path string)
	n := 0
	walk = func(v reflect.Value, path string) {
		switch v.Kind() {
		case reflect.Struct:
			if v.Type() == reflect.TypeOf(time.Time{}) {
				v.Set(reflect.ValueOf(time.Unix(1, 0)))
				check(t, path, hash(&base), zero)
				n++
				v.Set(reflect.Zero(v.Type()))
				return
			}
			for i := 0; i < v.NumField(); i++ {
				if f := path + "." + v.Type().Field(i).Name; f != "Message.Counts" { // a cache of the parts' counts, not content
					walk(v.Field(i), f)
				}
			}
		case reflect.Pointer:
			v.Set(reflect.New(v.Type().Elem()))
			check(t, path+" (set)", hash(&base), zero)
			walk(v.Elem(), path)
			v.Set(reflect.Zero(v.Type()))
		case reflect.Slice:
			if v.Type().Elem().Kind() == reflect.Struct {
				walk(v.Index(0), path+"[0]")
				return
			}
			old := reflect.ValueOf(v.Interface())
			v.Set(reflect.MakeSlice(v.Type(), 1, 1))
			v.Index(0).Set(oneOf(v.Type().Elem()))
			check(t, path, hash(&base), zero)
			n++
			v.Set(old)
		case reflect.Map:
			v.SetMapIndex(reflect.ValueOf("k"), reflect.ValueOf("v"))
			check(t, path, hash(&base), zero)
			n++
			v.SetMapIndex(reflect.ValueOf("k"), reflect.Value{})
		default:
			old := reflect.ValueOf(v.Interface())
			v.Set(oneOf(v.Type()))
			check(t, path, hash(&base), zero)
			n++
			v.Set(old)
		}
	}
	walk(reflect.ValueOf(&base).Elem(), "Message")
	if n < 25 {
		t.Fatalf("only %d fields checked", n)
	}
}

func check(t *testing.T, path string, got, zero scheduleKey) {
	t.Helper()
	if got == zero {
		t.Errorf("%s: setting it does not change the hash", path)
	}
}

// oneOf is a non-zero value of a basic type.
func oneOf(typ reflect.Type) reflect.Value {
	v := reflect.New(typ).Elem()
	switch typ.Kind() {
	case reflect.String:
		v.SetString("x")
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(1)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v.SetUint(1)
	default:
		panic("oneOf: " + typ.String())
	}
	return v
}

// TestScheduleCacheIsSeeded: each cache hashes its keys with a random seed
// of its own (the scope, the caller, is in every key besides:
// internal/pipelinetest TestScheduleCacheMissesWhatChanged, "another caller").
func TestScheduleCacheIsSeeded(t *testing.T) {
	if a, b := NewScheduleCache(1000), NewScheduleCache(1000); a.seed == b.seed {
		t.Error("two schedule caches share a seed: it is not random")
	}
}
