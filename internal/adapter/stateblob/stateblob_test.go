package stateblob

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/testing/protocmp"
	"google.golang.org/protobuf/types/known/timestamppb"

	ctxcv1 "github.com/contextcompiler/ctxc/gen/ctxc/v1"
	"github.com/contextcompiler/ctxc/policies/agentstate"
)

func textPart(s string) *ctxcv1.Part { return &ctxcv1.Part{Content: &ctxcv1.Part_Text{Text: s}} }

// fullState sets every field of the state, so a round trip proves none is lost.
func fullState() *ctxcv1.AgentState {
	window, out := uint32(128_000), uint32(4096)
	return &ctxcv1.AgentState{
		SchemaVersion: 1,
		AgentId:       "agent-7",
		Model:         &ctxcv1.ModelSpec{Name: "gpt-4o", Provider: "openai", ContextWindowTokenCount: &window, MaxOutputTokenCount: &out},
		Execution:     &ctxcv1.Execution{Id: "e1", StepIndex: 2, Status: ctxcv1.ExecutionStatus_EXECUTION_STATUS_RUNNING},
		Context: &ctxcv1.AgentContext{
			SystemPrompt:   "You are a careful agent. ünïcode 日本語 ✓",
			ResponseFormat: `{"type":"json_object"}`,
			Metadata:       map[string]string{"tenant": "t1", "b": "2"},
			Tools:          []*ctxcv1.ToolDefinition{{Name: "grep", Description: "search", ParametersJson: `{"type":"object"}`}},
			Messages: []*ctxcv1.Message{
				{Id: "u1", Role: ctxcv1.Role_ROLE_USER, ExecutionId: "e1", Pinned: true, Importance: 90, Parts: []*ctxcv1.Part{
					textPart("fix the build"),
					{Content: &ctxcv1.Part_Image{Image: &ctxcv1.Image{Source: &ctxcv1.Image_Data{Data: []byte{0x89, 'P', 'N', 'G'}}, MediaType: "image/png"}}},
				}, CreateTime: &timestamppb.Timestamp{Seconds: 1_750_000_000, Nanos: 123}},
				{Id: "a1", Role: ctxcv1.Role_ROLE_ASSISTANT, ExecutionId: "e1", Usage: &ctxcv1.Usage{InputTokenCount: 1200, CachedInputTokenCount: 300, OutputTokenCount: 40},
					Metadata: map[string]string{"ctxc.output": "assistant"},
					Parts: []*ctxcv1.Part{
						{Content: &ctxcv1.Part_Reasoning{Reasoning: &ctxcv1.Reasoning{Text: "think", Signature: []byte{0, 1, 2, 0xff}}}},
						{Content: &ctxcv1.Part_ToolCall{ToolCall: &ctxcv1.ToolCall{Id: "c1", Name: "grep", ArgumentsJson: `{"q":"main"}`}}},
					}},
				{Id: "t1", Role: ctxcv1.Role_ROLE_TOOL, ExecutionId: "e1",
					Mask:  &ctxcv1.Mask{Reason: "observation_masking", Placeholder: "[masked]", OriginalTokenCount: 512},
					Parts: []*ctxcv1.Part{{Content: &ctxcv1.Part_ToolResult{ToolResult: &ctxcv1.ToolResult{ToolCallId: "c1", Name: "grep", Content: "3 matches", IsError: true}}}}},
				{Id: "s1", Role: ctxcv1.Role_ROLE_USER, Kind: ctxcv1.MessageKind_MESSAGE_KIND_SUMMARY, CoversMessageIds: []string{"u0", "a0"}, Parts: []*ctxcv1.Part{textPart("summary")}},
				{Id: "i1", Role: ctxcv1.Role_ROLE_USER, Parts: []*ctxcv1.Part{{Content: &ctxcv1.Part_Image{Image: &ctxcv1.Image{Source: &ctxcv1.Image_Url{Url: "https://example.com/a.png"}}}}}},
			},
		},
	}
}

// bigState is large enough to be compressed.
func bigState() *ctxcv1.AgentState {
	st := fullState()
	for i := range 200 {
		st.Context.Messages = append(st.Context.Messages, &ctxcv1.Message{Id: "big" + string(rune('a'+i%26)) + strings.Repeat("x", i), Role: ctxcv1.Role_ROLE_TOOL,
			Parts: []*ctxcv1.Part{textPart(strings.Repeat("go test ./... output line\n", 20))}})
	}
	return st
}

func TestRoundTrip(t *testing.T) {
	tests := []struct {
		name           string
		state          *ctxcv1.AgentState
		wantCompressed bool
	}{
		{name: "empty state", state: &ctxcv1.AgentState{}},
		{name: "every field set", state: fullState()},
		{name: "large state is compressed", state: bigState(), wantCompressed: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			blob, err := Encode(tt.state)
			if err != nil {
				t.Fatalf("Encode: %v", err)
			}
			if got := blob[5]&flagGzip != 0; got != tt.wantCompressed {
				t.Errorf("compressed = %v, want %v", got, tt.wantCompressed)
			}
			got, err := Decode(blob)
			if err != nil {
				t.Fatalf("Decode: %v", err)
			}
			if diff := cmp.Diff(tt.state, got, protocmp.Transform()); diff != "" {
				t.Errorf("round trip (-want +got):\n%s", diff)
			}
			again, err := Encode(got)
			if err != nil {
				t.Fatalf("Encode again: %v", err)
			}
			if !bytes.Equal(blob, again) {
				t.Error("encoding the same state twice gave different bytes")
			}
		})
	}
}

func TestRoundTripKeepsUnknownFields(t *testing.T) {
	st := fullState()
	// Field 99 does not exist in this build: a newer server's state must survive.
	st.ProtoReflect().SetUnknown(protowireField99())
	blob, err := Encode(st)
	if err != nil {
		t.Fatal(err)
	}
	got, err := Decode(blob)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(st, got, protocmp.Transform()); diff != "" {
		t.Errorf("round trip (-want +got):\n%s", diff)
	}
}

// protowireField99 is field 99 as a varint 7.
func protowireField99() []byte { return []byte{0x98, 0x06, 0x07} }

// frame builds a blob around any payload with a correct checksum.
func frame(version, flags byte, payload []byte) []byte {
	b := append([]byte(Magic), version, flags)
	b = binary.AppendUvarint(b, uint64(len(payload)))
	b = append(b, payload...)
	return binary.BigEndian.AppendUint32(b, crc32.Checksum(b, castagnoli))
}

func gzipped(t *testing.T, p []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	if _, err := zw.Write(p); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestDecodeErrors(t *testing.T) {
	valid, err := Encode(fullState())
	if err != nil {
		t.Fatal(err)
	}
	mutate := func(f func(b []byte) []byte) []byte { return f(bytes.Clone(valid)) }
	payloadLen, n := binary.Uvarint(valid[headerBytes:])
	tests := []struct {
		name string
		blob []byte
		want *DecodeError
	}{
		{"empty", nil, &DecodeError{ReasonTruncated, Field, "is empty"}},
		{"cut inside the magic", []byte("CT"), &DecodeError{ReasonTruncated, Field, "ends after 2 bytes, inside the header"}},
		{"cut inside the header", valid[:5], &DecodeError{ReasonTruncated, Field, "ends after 5 bytes, inside the header"}},
		{"cut inside the length", valid[:headerBytes], &DecodeError{ReasonTruncated, Field, "ends inside the payload length"}},
		{"cut end", valid[:len(valid)-1], &DecodeError{ReasonTruncated, Field, "ends after " + strconv.Itoa(len(valid)-1) + " of its " + strconv.Itoa(len(valid)) + " bytes"}},
		{"cut in the middle", valid[:len(valid)/2], &DecodeError{ReasonTruncated, Field, "ends after " + strconv.Itoa(len(valid)/2) + " of its " + strconv.Itoa(len(valid)) + " bytes"}},
		{"foreign JSON state", []byte(`{"version":1,"provider":"openai","messages":[]}`), &DecodeError{ReasonForeign, Field, `is not a ctxc state blob (it does not start with "CTXC"): send back the state_blob bytes a ctxc response returned, unchanged`}},
		{"foreign short bytes", []byte("no"), &DecodeError{ReasonForeign, Field, `is not a ctxc state blob (it does not start with "CTXC"): send back the state_blob bytes a ctxc response returned, unchanged`}},
		{"raw proto without framing", mustMarshal(t, fullState()), &DecodeError{ReasonForeign, Field, `is not a ctxc state blob (it does not start with "CTXC"): send back the state_blob bytes a ctxc response returned, unchanged`}},
		{"future format version", mutate(func(b []byte) []byte { b[4] = 2; return b }), &DecodeError{ReasonVersionUnsupported, Field, "blob format version 2 is not supported: this server reads version 1"}},
		{"format version 0", frame(0, 0, nil), &DecodeError{ReasonVersionUnsupported, Field, "blob format version 0 is not supported: this server reads version 1"}},
		{"flipped payload byte", mutate(func(b []byte) []byte { b[headerBytes+n+int(payloadLen)/2] ^= 0x40; return b }), &DecodeError{ReasonCorrupt, Field, "checksum mismatch: the blob was changed or damaged"}},
		{"flipped flags byte", mutate(func(b []byte) []byte { b[5] ^= 0x80; return b }), &DecodeError{ReasonCorrupt, Field, "checksum mismatch: the blob was changed or damaged"}},
		{"flipped checksum byte", mutate(func(b []byte) []byte { b[len(b)-1] ^= 1; return b }), &DecodeError{ReasonCorrupt, Field, "checksum mismatch: the blob was changed or damaged"}},
		{"trailing bytes", append(bytes.Clone(valid), 0), &DecodeError{ReasonCorrupt, Field, "has 1 unexpected bytes after its end"}},
		{"huge declared length", binary.AppendUvarint([]byte("CTXC\x01\x00"), 1<<40), &DecodeError{ReasonCorrupt, Field, "declares a payload of 1099511627776 bytes, over the limit of 67108864"}},
		{"length just over the limit", binary.AppendUvarint([]byte("CTXC\x01\x00"), MaxPayloadBytes+1), &DecodeError{ReasonCorrupt, Field, "declares a payload of 67108865 bytes, over the limit of 67108864"}},
		{"overflowing length", []byte("CTXC\x01\x00\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01"), &DecodeError{ReasonCorrupt, Field, "has a malformed payload length"}},
		{"unknown flag with a good checksum", frame(1, 0x02, nil), &DecodeError{ReasonCorrupt, Field, "has unknown flags 0x02"}},
		{"payload that is not an AgentState", frame(1, 0, []byte{0xff, 0xff, 0xff}), &DecodeError{ReasonCorrupt, Field, "the payload is not a valid AgentState: "}},
		{"compressed flag on a plain payload", frame(1, flagGzip, mustMarshal(t, fullState())), &DecodeError{ReasonCorrupt, Field, "the compressed payload is not valid gzip: gzip: invalid header"}},
		{"gzip bomb", frame(1, flagGzip, gzipped(t, make([]byte, MaxPayloadBytes+1))), &DecodeError{ReasonCorrupt, Field, "the payload decompresses to more than the limit of 67108864 bytes"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st, err := Decode(tt.blob)
			if st != nil {
				t.Errorf("Decode returned a state with an error: %v", st)
			}
			var got *DecodeError
			if !errors.As(err, &got) {
				t.Fatalf("Decode error = %v, want *DecodeError", err)
			}
			// Descriptions ending in ": " go on with the wrapped library error,
			// whose text protobuf-go deliberately keeps unstable.
			if strings.HasSuffix(tt.want.Description, ": ") && strings.HasPrefix(got.Description, tt.want.Description) {
				got = &DecodeError{Reason: got.Reason, Field: got.Field, Description: tt.want.Description}
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("error (-want +got):\n%s", diff)
			}
		})
	}
}

func TestEncodeRejectsOversizedState(t *testing.T) {
	st := &ctxcv1.AgentState{Context: &ctxcv1.AgentContext{SystemPrompt: strings.Repeat("x", MaxPayloadBytes)}}
	_, err := Encode(st)
	var limit *agentstate.LimitError
	if !errors.As(err, &limit) {
		t.Fatalf("Encode error = %v, want *agentstate.LimitError", err)
	}
	if diff := cmp.Diff(&agentstate.LimitError{Field: "state", Limit: MaxPayloadBytes, Got: proto.Size(st)}, limit); diff != "" {
		t.Errorf("error (-want +got):\n%s", diff)
	}
}

func mustMarshal(t testing.TB, st *ctxcv1.AgentState) []byte {
	t.Helper()
	b, err := proto.MarshalOptions{Deterministic: true}.Marshal(st)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func FuzzDecode(f *testing.F) {
	for _, st := range []*ctxcv1.AgentState{{}, fullState(), bigState()} {
		blob, err := Encode(st)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(blob)
		f.Add(blob[:len(blob)-1])
		f.Add(append(bytes.Clone(blob), 0))
		flipped := bytes.Clone(blob)
		flipped[len(flipped)/2] ^= 0x10
		f.Add(flipped)
		f.Add(mustMarshal(f, st))
	}
	f.Add([]byte("CTXC\x02\x00\x00"))
	f.Add([]byte("CTXC\x01\x01\x05"))
	f.Fuzz(func(t *testing.T, b []byte) {
		check := func(blob []byte) {
			st, err := Decode(blob)
			if err != nil {
				var de *DecodeError
				if !errors.As(err, &de) || de.Field != Field || de.Reason == "" || st != nil {
					t.Fatalf("Decode error %v (%T), state %v", err, err, st)
				}
				return
			}
			again, err := Encode(st)
			if err != nil {
				t.Fatalf("re-encoding a decoded state: %v", err)
			}
			st2, err := Decode(again)
			if err != nil {
				t.Fatalf("decoding a re-encoded state: %v", err)
			}
			if !proto.Equal(st, st2) {
				t.Fatalf("re-encoded state differs:\n%s", cmp.Diff(st, st2, protocmp.Transform()))
			}
		}
		check(b)
		// The same bytes as a well-framed payload, plain and compressed, so the
		// fuzzer reaches the proto and gzip decoders past the checksum.
		check(frame(FormatVersion, 0, b))
		check(frame(FormatVersion, flagGzip, b))
	})
}

// TestDecodedSizeHoldsTheDecompression: DecodedSize says what a blob's
// payload becomes before it is decompressed; a trailer that understates it
// is corrupt as soon as decompression passes it, and DecodeWithin refuses a
// payload over its limit.
func TestDecodedSizeHoldsTheDecompression(t *testing.T) {
	payload := mustMarshal(t, bigState())
	blob, err := Encode(bigState())
	if err != nil {
		t.Fatal(err)
	}
	if got := DecodedSize(blob); got != len(payload) {
		t.Errorf("DecodedSize = %d, want the payload's %d bytes", got, len(payload))
	}
	if got := DecodedSize(frame(FormatVersion, 0, []byte{1, 2, 3})); got != 3 {
		t.Errorf("DecodedSize of a stored payload = %d, want 3", got)
	}
	if got := DecodedSize([]byte("not a blob")); got != 0 {
		t.Errorf("DecodedSize of foreign bytes = %d, want 0", got)
	}
	z := gzipped(t, payload)
	binary.LittleEndian.PutUint32(z[len(z)-4:], 100) // the trailer says 100 bytes
	_, err = Decode(frame(FormatVersion, flagGzip, z))
	var de *DecodeError
	if !errors.As(err, &de) || de.Reason != ReasonCorrupt || !strings.Contains(err.Error(), "trailer") {
		t.Errorf("a trailer understating the payload: %v, want STATE_BLOB_CORRUPT about the trailer", err)
	}
	if _, err := DecodeWithin(blob, len(payload)-1); !errors.As(err, &de) || de.Reason != ReasonCorrupt {
		t.Errorf("a payload over DecodeWithin's limit: %v, want STATE_BLOB_CORRUPT", err)
	}
	if _, err := DecodeWithin(blob, len(payload)); err != nil {
		t.Errorf("a payload at DecodeWithin's limit: %v", err)
	}
}
