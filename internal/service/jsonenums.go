package service

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/grpc-ecosystem/grpc-gateway/v2/runtime"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// enumJSON is the gateway's JSON marshaler, reading enum values as people
// and the providers write them too: besides the names protojson takes
// (ROLE_USER) and numbers, a value's name without its enum's prefix, in any
// case ("user", "Assistant", "anthropic" for RENDER_FORMAT_ANTHROPIC), the
// full name in any case, and "developer", OpenAI's name for the system role.
// A value it cannot read is an error that names the field and the values
// it takes.
//
// protojson reads the body first; only when it fails is the body read again
// for such names, which are rewritten in place (nothing else of the body
// changes) before protojson reads it once more: a body in the canonical
// form costs what it did.
type enumJSON struct {
	*runtime.JSONPb
}

// NewDecoder reads one JSON value from r, as runtime.JSONPb's does.
func (m enumJSON) NewDecoder(r io.Reader) runtime.Decoder {
	d := json.NewDecoder(r)
	return runtime.DecoderFunc(func(v any) error {
		if _, ok := v.(proto.Message); !ok {
			return runtime.DecoderWrapper{Decoder: d, UnmarshalOptions: m.UnmarshalOptions}.Decode(v)
		}
		var raw json.RawMessage
		if err := d.Decode(&raw); err != nil {
			return err
		}
		return m.Unmarshal(raw, v)
	})
}

// Unmarshal reads data into v, with the enum names enumJSON takes.
func (m enumJSON) Unmarshal(data []byte, v any) error {
	err := m.JSONPb.Unmarshal(data, v)
	msg, ok := v.(proto.Message)
	if err == nil || !ok || !utf8.Valid(data) {
		return err
	}
	fixed, changed, ferr := canonicalEnums(data, msg.ProtoReflect().Descriptor())
	switch {
	case ferr != nil:
		return ferr
	case !changed:
		return err
	}
	return m.JSONPb.Unmarshal(fixed, v)
}

// canonicalEnums rewrites the enum values of the JSON message data (of
// type md) given by another name enumJSON takes into their canonical names.
// It reports whether it changed any, and an error naming the first enum
// value it could not read. Malformed JSON, and values of the wrong JSON
// type, are left for protojson to report.
func canonicalEnums(data []byte, md protoreflect.MessageDescriptor) ([]byte, bool, error) {
	w := &enumWalk{dec: json.NewDecoder(bytes.NewReader(data))}
	if err := w.value(md, nil, ""); err != nil {
		if ue, ok := err.(*unknownEnumError); ok {
			return nil, false, ue
		}
		return nil, false, nil // malformed: protojson's error stands
	}
	if len(w.edits) == 0 {
		return data, false, nil
	}
	var out bytes.Buffer
	at := int64(0)
	for _, e := range w.edits {
		out.Write(data[at:e.start])
		out.WriteString(strconv.Quote(e.name))
		at = e.end
	}
	out.Write(data[at:])
	return out.Bytes(), true, nil
}

// enumEdit replaces data[start:end], a JSON string, with name.
type enumEdit struct {
	start, end int64
	name       string
}

// enumWalk walks a JSON value with the descriptor of what it holds.
type enumWalk struct {
	dec   *json.Decoder
	edits []enumEdit
}

// unknownEnumError is an enum value that none of enumJSON's names match.
type unknownEnumError struct {
	path, value string
	enum        protoreflect.EnumDescriptor
}

func (e *unknownEnumError) Error() string {
	var short, alias, full []string
	for _, n := range enumNames(e.enum) {
		if n.short == "" {
			continue // the zero value: no one means it
		}
		short = append(short, n.short)
		if n.alias != "" {
			alias = append(alias, n.alias+" (= "+n.short+")")
		}
		full = append(full, string(n.full))
	}
	return fmt.Sprintf("%s: %q is not a %s; want one of %s, or their full names %s", e.path, e.value, e.enum.Name(),
		strings.Join(append(short, alias...), ", "), strings.Join(full, ", "))
}

// value walks the next JSON value: a message of type md, or, when md is
// nil, a value of field fd (an element of it when fd is a list or a map).
func (w *enumWalk) value(md protoreflect.MessageDescriptor, fd protoreflect.FieldDescriptor, path string) error {
	if md == nil && fd != nil {
		switch fd.Kind() {
		case protoreflect.EnumKind:
			return w.enum(fd.Enum(), path)
		case protoreflect.MessageKind, protoreflect.GroupKind:
			md = fd.Message()
		}
	}
	// Well-known types have JSON forms of their own (a Timestamp is a
	// string): only ctxc's messages are walked.
	if md == nil || strings.HasPrefix(string(md.FullName()), "google.protobuf.") {
		return w.skip()
	}
	tok, err := w.dec.Token()
	if err != nil {
		return err
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return w.rest(tok)
	}
	for w.dec.More() {
		tok, err := w.dec.Token()
		if err != nil {
			return err
		}
		key, _ := tok.(string)
		f := md.Fields().ByJSONName(key)
		if f == nil {
			f = md.Fields().ByName(protoreflect.Name(key))
		}
		p := key
		if path != "" {
			p = path + "." + key
		}
		switch {
		case f == nil:
			err = w.skip()
		case f.IsList():
			err = w.repeated(f, p, false)
		case f.IsMap():
			err = w.repeated(f.MapValue(), p, true)
		default:
			err = w.value(nil, f, p)
		}
		if err != nil {
			return err
		}
	}
	_, err = w.dec.Token() // }
	return err
}

// repeated walks a list of fd's values, or a map's (an object) to them.
func (w *enumWalk) repeated(fd protoreflect.FieldDescriptor, path string, isMap bool) error {
	tok, err := w.dec.Token()
	if err != nil {
		return err
	}
	open := json.Delim('[')
	if isMap {
		open = '{'
	}
	if d, ok := tok.(json.Delim); !ok || d != open {
		return w.rest(tok)
	}
	for i := 0; w.dec.More(); i++ {
		p := path + "[" + strconv.Itoa(i) + "]"
		if isMap {
			tok, err := w.dec.Token()
			if err != nil {
				return err
			}
			key, _ := tok.(string)
			p = path + "[" + strconv.Quote(key) + "]"
		}
		if err := w.value(nil, fd, p); err != nil {
			return err
		}
	}
	_, err = w.dec.Token() // ] or }
	return err
}

// enum reads an enum value: a string not canonical becomes an edit.
func (w *enumWalk) enum(ed protoreflect.EnumDescriptor, path string) error {
	var raw json.RawMessage
	if err := w.dec.Decode(&raw); err != nil {
		return err
	}
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return nil // a number, or not an enum value: protojson's to judge
	}
	if ed.Values().ByName(protoreflect.Name(s)) != nil {
		return nil
	}
	for _, n := range enumNames(ed) {
		if strings.EqualFold(s, string(n.full)) || n.short != "" && strings.EqualFold(s, n.short) || n.alias != "" && strings.EqualFold(s, n.alias) {
			end := w.dec.InputOffset()
			w.edits = append(w.edits, enumEdit{start: end - int64(len(raw)), end: end, name: string(n.full)})
			return nil
		}
	}
	return &unknownEnumError{path: path, value: s, enum: ed}
}

// skip walks past the next value.
func (w *enumWalk) skip() error {
	var raw json.RawMessage
	return w.dec.Decode(&raw)
}

// rest walks past the rest of a value whose first token was tok.
func (w *enumWalk) rest(tok json.Token) error {
	d, ok := tok.(json.Delim)
	if !ok || d == '}' || d == ']' {
		return nil
	}
	for depth := 1; depth > 0; {
		tok, err := w.dec.Token()
		if err != nil {
			return err
		}
		switch tok {
		case json.Delim('{'), json.Delim('['):
			depth++
		case json.Delim('}'), json.Delim(']'):
			depth--
		}
	}
	return nil
}

// enumName is what an enum value may be called in the JSON API: its full
// name; its short name, the full one without the enum's prefix in lower
// case (none for the zero value, which no one means); an alias.
type enumName struct {
	full         protoreflect.Name
	short, alias string
}

// enumNames lists the names of ed's values. The prefix is the enum's name
// in upper snake case (MessageKind: MESSAGE_KIND_), as buf's lint requires.
func enumNames(ed protoreflect.EnumDescriptor) []enumName {
	prefix := upperSnake(string(ed.Name())) + "_"
	var out []enumName
	for i := 0; i < ed.Values().Len(); i++ {
		v := ed.Values().Get(i)
		n := enumName{full: v.Name()}
		if short, ok := strings.CutPrefix(string(v.Name()), prefix); ok && v.Number() != 0 {
			n.short = strings.ToLower(short)
		}
		// OpenAI's developer messages are system messages, as its import reads them.
		if ed.FullName() == "ctxc.v1.Role" && n.short == "system" {
			n.alias = "developer"
		}
		out = append(out, n)
	}
	return out
}

// upperSnake is MessageKind as MESSAGE_KIND.
func upperSnake(s string) string {
	var b strings.Builder
	for i, r := range s {
		if i > 0 && r >= 'A' && r <= 'Z' {
			b.WriteByte('_')
		}
		b.WriteRune(r)
	}
	return strings.ToUpper(b.String())
}
