// Package yamlkeys decodes YAML configuration with errors in the terms of
// the file: a key the section does not have is named with its line, its
// section and the key nearest to it (or the section's keys), and a value
// of the wrong kind with its key and what goes there, where yaml.v3 names
// Go types ("field http_listn not found in type embed.Config", "cannot
// unmarshal !!str `abc` into int").
package yamlkeys

import (
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// Decode decodes node (a document, or a value within one) into v, a
// pointer, rejecting keys v's type does not have. section names where node
// sits in the file ("" for the whole file, else a path such as
// "profiles[0].stages[1].settings"). Each problem is its own error, in the
// order of the file, "line N: ..." with N the file's line; joined.
func Decode(node *yaml.Node, v any, section string) error {
	if node == nil || node.Kind == 0 {
		return nil // an empty document decodes to nothing
	}
	w := &walk{where: map[int][]string{}}
	w.node(node, reflect.TypeOf(v), section)
	if err := node.Decode(v); err != nil {
		var te *yaml.TypeError
		if !errors.As(err, &te) {
			return err
		}
		for _, e := range te.Errors {
			w.add(w.typeProblem(e))
		}
	}
	sort.SliceStable(w.problems, func(i, j int) bool { return w.problems[i].line < w.problems[j].line })
	errs := make([]error, len(w.problems))
	for i, p := range w.problems {
		errs[i] = errors.New(p.text)
	}
	return errors.Join(errs...)
}

// problem is one error, with its line for ordering.
type problem struct {
	line int
	text string
}

// walk goes through the nodes with the Go type each decodes into.
type walk struct {
	problems []problem
	// where maps a line to the keys whose values start on it.
	where map[int][]string
}

func (w *walk) add(p problem) { w.problems = append(w.problems, p) }

// unmarshaler is yaml.v3's hook: a type with it decodes itself. The
// walk still follows such a type when it is a struct, whose fields are
// then what its UnmarshalYAML decodes (over defaults, as llm.Config does).
var unmarshaler = reflect.TypeOf((*yaml.Unmarshaler)(nil)).Elem()

var nodeType = reflect.TypeOf(yaml.Node{})

func (w *walk) node(n *yaml.Node, t reflect.Type, section string) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch n.Kind {
	case yaml.DocumentNode:
		for _, c := range n.Content {
			w.node(c, t, section)
		}
		return
	case yaml.AliasNode:
		return // its anchor's node is walked where it stands
	}
	if t == nodeType || reflect.PointerTo(t).Implements(unmarshaler) && t.Kind() != reflect.Struct {
		return // decoded later by what knows its shape
	}
	switch t.Kind() {
	case reflect.Struct:
		if n.Kind == yaml.MappingNode {
			w.mapping(n, t, section)
		}
	case reflect.Map:
		if n.Kind == yaml.MappingNode {
			for i := 0; i+1 < len(n.Content); i += 2 {
				key := join(section, n.Content[i].Value)
				w.value(n.Content[i+1], t.Elem(), key)
			}
		}
	case reflect.Slice, reflect.Array:
		if n.Kind == yaml.SequenceNode {
			for i, c := range n.Content {
				w.value(c, t.Elem(), section+"["+strconv.Itoa(i)+"]")
			}
		}
	}
}

// value walks the value of key, remembering the line it starts on.
func (w *walk) value(n *yaml.Node, t reflect.Type, key string) {
	w.where[n.Line] = append(w.where[n.Line], key)
	w.node(n, t, key)
}

// mapping walks a mapping decoded into the struct t.
func (w *walk) mapping(n *yaml.Node, t reflect.Type, section string) {
	fields, names, open := structKeys(t)
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if k.Kind == yaml.ScalarNode && k.Value == "<<" {
			continue // a merge key: its mapping's keys are checked where they stand
		}
		ft, ok := fields[k.Value]
		if !ok {
			if !open {
				w.add(problem{k.Line, unknownKey(k, section, names)})
			}
			continue
		}
		w.value(v, ft, join(section, k.Value))
	}
}

// unknownKey is the error for key k, which section does not have.
func unknownKey(k *yaml.Node, section string, names []string) string {
	where := "at the top level"
	if section != "" {
		where = fmt.Sprintf("in section %q", section)
	}
	text := fmt.Sprintf("line %d: unknown key %q %s", k.Line, k.Value, where)
	if near := Closest(k.Value, names); near != "" {
		return text + fmt.Sprintf("; did you mean %q?", near)
	}
	return text + "; its keys: " + strings.Join(names, ", ")
}

// structKeys are the keys of struct t as yaml.v3 reads them (a field's
// tag name, else its name in lower case; inline structs' keys too), the
// type each decodes into, and whether an inline map takes any other key.
func structKeys(t reflect.Type) (map[string]reflect.Type, []string, bool) {
	fields := map[string]reflect.Type{}
	var names []string
	open := false
	var add func(t reflect.Type)
	add = func(t reflect.Type) {
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			tag := f.Tag.Get("yaml")
			if !f.IsExported() && !f.Anonymous || tag == "-" {
				continue
			}
			name, opts, _ := strings.Cut(tag, ",")
			if strings.Contains(","+opts+",", ",inline,") {
				ft := f.Type
				for ft.Kind() == reflect.Pointer {
					ft = ft.Elem()
				}
				if ft.Kind() == reflect.Map {
					open = true
				} else if ft.Kind() == reflect.Struct {
					add(ft)
				}
				continue
			}
			if !f.IsExported() {
				continue
			}
			if name == "" {
				name = strings.ToLower(f.Name)
			}
			if _, dup := fields[name]; !dup {
				names = append(names, name)
			}
			fields[name] = f.Type
		}
	}
	add(t)
	return fields, names, open
}

// typeMessage is yaml.v3's error for a value of the wrong kind.
var typeMessage = regexp.MustCompile("^line (\\d+): cannot unmarshal !!(\\w+)(?: `(.*)`)? into (.+)$")

// typeProblem restates one of yaml.v3's type errors with the key and what
// goes there; another error is kept as it is.
func (w *walk) typeProblem(e string) problem {
	m := typeMessage.FindStringSubmatch(e)
	if m == nil {
		line := 0
		if rest, ok := strings.CutPrefix(e, "line "); ok {
			line, _ = strconv.Atoi(strings.SplitN(rest, ":", 2)[0])
		}
		return problem{line, e}
	}
	line, _ := strconv.Atoi(m[1])
	given := strconv.Quote(m[3])
	switch m[2] {
	case "seq":
		given = "a list"
	case "map":
		given = "a mapping"
	}
	text := fmt.Sprintf("line %d: ", line)
	if keys := w.where[line]; len(keys) == 1 {
		text += keys[0] + ": "
	}
	return problem{line, text + given + " is not " + want(m[4])}
}

// want says in words what a value of the Go type named goType is.
func want(goType string) string {
	switch {
	case goType == "time.Duration":
		return "a duration (such as 30s, 5m or 1h30m)"
	case goType == "bool":
		return "true or false"
	case goType == "string":
		return "a string"
	case strings.HasPrefix(goType, "float"):
		return "a number"
	case strings.HasPrefix(goType, "int") || strings.HasPrefix(goType, "uint"):
		return "a whole number"
	case strings.HasPrefix(goType, "[]"):
		return "a list"
	}
	return "a mapping of keys"
}

// join is the path of key within section.
func join(section, key string) string {
	if section == "" {
		return key
	}
	return section + "." + key
}

// Closest is the name nearest to s, if near enough to be a slip (at most a
// third of its length in edits, and at least one allowed); "" otherwise. The
// CLI's did-you-mean for commands and flags uses it too.
func Closest(s string, names []string) string {
	best, bestDist := "", 0
	for _, c := range names {
		d := distance(s, c)
		if d <= max(1, len(c)/3) && (best == "" || d < bestDist) {
			best, bestDist = c, d
		}
	}
	return best
}

// distance is the Levenshtein distance between a and b, in bytes.
func distance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
