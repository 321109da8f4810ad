// Package stateblob owns the opaque state blob: the versioned bytes that thin
// clients store in place of an AgentState and send back unchanged
// (CompileRequest.state_blob, RouteRequest.state_blob). Clients never look
// inside; the server decodes with Decode and answers with Encode.
//
// # Format (version 1)
//
//	offset  size     field
//	0       4        magic "CTXC"
//	4       1        format version: 1
//	5       1        flags: bit 0 set = payload is gzip-compressed; other bits must be 0
//	6       1..10    payload length in bytes, unsigned varint (encoding/binary Uvarint)
//	…       length   payload: the proto-marshalled ctxc.v1.AgentState (deterministic
//	                 marshalling), gzip-compressed when flag bit 0 is set
//	…       4        CRC-32C (Castagnoli) of every byte before it, big endian
//
// Payloads above 8 KiB are gzip-compressed (standard library, BestSpeed) when
// that makes them smaller: logs of tool output compress well and small states
// are not worth the CPU. The same state always encodes to the same bytes.
//
// # Limits and errors
//
// A payload, stored or decompressed, is at most MaxPayloadBytes (64 MiB), or
// the smaller limit DecodeWithin is given. The declared length is checked
// against the limit and against the bytes actually present before anything
// is allocated, and decompression stops at the limit or at the size the gzip
// trailer declares (DecodedSize), whichever is smaller, so a crafted length,
// a lying trailer or a gzip bomb cannot make Decode allocate more than that.
//
// Decode never panics. Every failure is a *DecodeError naming field
// "state_blob" with one of these reasons:
//
//   - STATE_BLOB_FOREIGN: the bytes do not start with the magic (not a ctxc blob);
//   - STATE_BLOB_VERSION_UNSUPPORTED: a format version this build does not read;
//   - STATE_BLOB_TRUNCATED: the blob ends before its declared end;
//   - STATE_BLOB_CORRUPT: bad checksum, malformed length, unknown flags,
//     trailing bytes, an over-limit size, or a payload that is not valid gzip or
//     a valid AgentState.
//
// The blob's format version is independent of AgentState.schema_version,
// which the routing lifecycle checks after decoding.
package stateblob

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"

	"google.golang.org/protobuf/proto"

	ctxcv1 "github.com/contextcompiler/ctxc/gen/ctxc/v1"
	"github.com/contextcompiler/ctxc/policies/agentstate"
)

// Format constants.
const (
	// Magic opens every blob.
	Magic = "CTXC"
	// FormatVersion is the only blob layout this build writes and reads.
	FormatVersion = 1
	// MaxPayloadBytes bounds a payload, stored or decompressed.
	MaxPayloadBytes = 64 << 20

	flagGzip      = 1 << 0
	compressAbove = 8 << 10
	headerBytes   = len(Magic) + 2
	checksumBytes = 4
)

// Reasons of a DecodeError, reported in google.rpc.ErrorInfo.reason.
const (
	ReasonCorrupt            = "STATE_BLOB_CORRUPT"
	ReasonTruncated          = "STATE_BLOB_TRUNCATED"
	ReasonForeign            = "STATE_BLOB_FOREIGN"
	ReasonVersionUnsupported = "STATE_BLOB_VERSION_UNSUPPORTED"
)

// Field is the request field a DecodeError is about.
const Field = "state_blob"

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// DecodeError is a blob Decode cannot read.
type DecodeError struct {
	Reason      string
	Field       string
	Description string
}

func (e *DecodeError) Error() string { return e.Field + ": " + e.Description }

func decodeError(reason, format string, args ...any) *DecodeError {
	return &DecodeError{Reason: reason, Field: Field, Description: fmt.Sprintf(format, args...)}
}

// Encode returns st as a blob. A state whose marshalled form exceeds
// MaxPayloadBytes is a *agentstate.LimitError on field "state".
func Encode(st *ctxcv1.AgentState) ([]byte, error) {
	payload, err := proto.MarshalOptions{Deterministic: true}.Marshal(st)
	if err != nil {
		return nil, fmt.Errorf("encoding the state blob: %w", err)
	}
	if len(payload) > MaxPayloadBytes {
		return nil, &agentstate.LimitError{Field: "state", Limit: MaxPayloadBytes, Got: len(payload)}
	}
	var flags byte
	if len(payload) > compressAbove {
		if z, err := compress(payload); err == nil && len(z) < len(payload) {
			payload, flags = z, flagGzip
		}
	}
	b := make([]byte, 0, headerBytes+binary.MaxVarintLen64+len(payload)+checksumBytes)
	b = append(b, Magic...)
	b = append(b, FormatVersion, flags)
	b = binary.AppendUvarint(b, uint64(len(payload)))
	b = append(b, payload...)
	return binary.BigEndian.AppendUint32(b, crc32.Checksum(b, castagnoli)), nil
}

// Decode reads a blob written by Encode. Errors are *DecodeError.
func Decode(b []byte) (*ctxcv1.AgentState, error) { return DecodeWithin(b, MaxPayloadBytes) }

// DecodedSize is what the payload of blob b says it holds once decompressed
// (its gzip trailer's size, or its length when it is stored as is); 0 when b
// is not a well-formed blob, which Decode then reports. DecodeWithin holds
// the payload to it, so a server can reserve memory for a state before it
// decompresses it.
func DecodedSize(b []byte) int {
	if len(b) < headerBytes || !bytes.HasPrefix(b, []byte(Magic)) {
		return 0
	}
	length, n := binary.Uvarint(b[headerBytes:])
	start := headerBytes + n
	if n <= 0 || length > MaxPayloadBytes || uint64(len(b)-start) < length+checksumBytes {
		return 0
	}
	if b[5]&flagGzip == 0 {
		return int(length)
	}
	if length < 4 {
		return 0
	}
	end := start + int(length)
	return int(binary.LittleEndian.Uint32(b[end-4 : end])) // ISIZE, RFC 1952
}

// DecodeWithin is Decode with the decompressed payload held to at most max
// bytes and to the size its gzip trailer declares.
func DecodeWithin(b []byte, max int) (*ctxcv1.AgentState, error) {
	if max <= 0 || max > MaxPayloadBytes {
		max = MaxPayloadBytes
	}
	switch {
	case len(b) == 0:
		return nil, decodeError(ReasonTruncated, "is empty")
	case len(b) < len(Magic) && bytes.HasPrefix([]byte(Magic), b):
		return nil, decodeError(ReasonTruncated, "ends after %d bytes, inside the header", len(b))
	case !bytes.HasPrefix(b, []byte(Magic)):
		return nil, decodeError(ReasonForeign, "is not a ctxc state blob (it does not start with %q): send back the state_blob bytes a ctxc response returned, unchanged", Magic)
	case len(b) < headerBytes:
		return nil, decodeError(ReasonTruncated, "ends after %d bytes, inside the header", len(b))
	case b[4] != FormatVersion:
		return nil, decodeError(ReasonVersionUnsupported, "blob format version %d is not supported: this server reads version %d", b[4], FormatVersion)
	}
	flags := b[5]
	length, n := binary.Uvarint(b[headerBytes:])
	switch {
	case n == 0:
		return nil, decodeError(ReasonTruncated, "ends inside the payload length")
	case n < 0:
		return nil, decodeError(ReasonCorrupt, "has a malformed payload length")
	case length > uint64(max):
		return nil, decodeError(ReasonCorrupt, "declares a payload of %d bytes, over the limit of %d", length, max)
	}
	start := headerBytes + n
	rest := uint64(len(b) - start)
	switch {
	case rest < length+checksumBytes:
		return nil, decodeError(ReasonTruncated, "ends after %d of its %d bytes", len(b), uint64(start)+length+checksumBytes)
	case rest > length+checksumBytes:
		return nil, decodeError(ReasonCorrupt, "has %d unexpected bytes after its end", rest-length-checksumBytes)
	}
	end := start + int(length)
	if crc32.Checksum(b[:end], castagnoli) != binary.BigEndian.Uint32(b[end:]) {
		return nil, decodeError(ReasonCorrupt, "checksum mismatch: the blob was changed or damaged")
	}
	if flags&^flagGzip != 0 {
		return nil, decodeError(ReasonCorrupt, "has unknown flags %#02x", flags)
	}
	payload := b[start:end]
	if flags&flagGzip != 0 {
		var err error
		limit := min(max, DecodedSize(b))
		if payload, err = decompress(payload, limit, max); err != nil {
			return nil, err
		}
	}
	st := new(ctxcv1.AgentState)
	if err := proto.Unmarshal(payload, st); err != nil {
		return nil, decodeError(ReasonCorrupt, "the payload is not a valid AgentState: %v", err)
	}
	return st, nil
}

func compress(p []byte) ([]byte, error) {
	var buf bytes.Buffer
	zw, err := gzip.NewWriterLevel(&buf, gzip.BestSpeed)
	if err != nil {
		return nil, err
	}
	if _, err := zw.Write(p); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// decompress stops one byte past limit (the smaller of max and the size
// the trailer declares), so a gzip bomb costs at most that much memory, and
// a trailer that understates the size is found out before it is exceeded.
func decompress(p []byte, limit, max int) ([]byte, error) {
	zr, err := gzip.NewReader(bytes.NewReader(p))
	if err != nil {
		return nil, decodeError(ReasonCorrupt, "the compressed payload is not valid gzip: %v", err)
	}
	out := make([]byte, 0, limit+1)
	out, err = readAllInto(out, io.LimitReader(zr, int64(limit)+1))
	if err != nil {
		return nil, decodeError(ReasonCorrupt, "the compressed payload is not valid gzip: %v", err)
	}
	if len(out) > limit {
		if limit == max {
			return nil, decodeError(ReasonCorrupt, "the payload decompresses to more than the limit of %d bytes", max)
		}
		return nil, decodeError(ReasonCorrupt, "the payload decompresses to more than the %d bytes its gzip trailer declares", limit)
	}
	if _, err := zr.Read(make([]byte, 1)); err != io.EOF {
		return nil, decodeError(ReasonCorrupt, "the compressed payload is not valid gzip: it does not end where its trailer says")
	}
	return out, nil
}

// readAllInto is io.ReadAll appending to b.
func readAllInto(b []byte, r io.Reader) ([]byte, error) {
	for {
		n, err := r.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if err == io.EOF {
			return b, nil
		}
		if err != nil {
			return b, err
		}
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)]
		}
	}
}
