package compiler

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"

	"github.com/contextcompiler/ctxc/policies/agentstate"
)

// ReasonAttachmentNotFound is an attachment named by attachment_id alone
// whose content the attachment store does not hold.
const ReasonAttachmentNotFound = "ATTACHMENT_NOT_FOUND"

// ReasonDuplicateAttachment is an attachment id given twice with different
// content.
const ReasonDuplicateAttachment = "DUPLICATE_ATTACHMENT_ID"

// MaxStoredAttachmentBytes is the largest attachment content kept in the
// attachment store for later calls that name it by id alone: the store is
// the summary cache, whose in-memory form bounds entries, not bytes.
const MaxStoredAttachmentBytes = 256 << 10

// AttachmentStore keeps attached documents by id, so that a later call may
// name one by attachment_id without its content; *summarycache.Cache is the
// production one (its TTL bounds how long one is kept). A store keeps each
// caller's documents apart, by the caller in ctx (tenant.Namespace), so that
// an id names only what the calling caller sent: another caller's id, sent
// without content, is unknown, and sent with content replaces nothing of the
// first caller's.
type AttachmentStore interface {
	Lookup(ctx context.Context, key string) (string, bool, error)
	Store(ctx context.Context, key, value string) error
}

// attachmentKey is the store key of an attachment id; the hash keeps ids of
// any length and alphabet out of the backend's key space.
func attachmentKey(id string) string {
	sum := sha256.Sum256([]byte(id))
	return "attachment/v1/" + hex.EncodeToString(sum[:])
}

// derivedAttachmentID is the id of an attachment sent without one: it names
// its content, so the same document always gets the same id.
func derivedAttachmentID(content string) string {
	sum := sha256.Sum256([]byte(content))
	return "doc-" + hex.EncodeToString(sum[:8])
}

// resolveAttachments gives every attachment its content and id: one named by
// attachment_id alone gets the stored content, one with content and no id
// the id of its content. Every problem is reported at once, naming
// attachments[i].attachment_id: an unknown id (an InvalidArgumentError with
// reason ReasonAttachmentNotFound), an id given twice with other content
// (ReasonDuplicateAttachment). Then the attachments sent with content are
// stored for later calls. The warnings say what a caller should know: an
// attachment sent twice is placed once, one that could not be stored must be
// sent with its content again.
func (s *Service) resolveAttachments(ctx context.Context, in []agentstate.Attachment) ([]agentstate.Attachment, []string, error) {
	if len(in) == 0 {
		return nil, nil, nil
	}
	out := make([]agentstate.Attachment, 0, len(in))
	request := make([]int, 0, len(in)) // out[k] is attachments[request[k]]
	sent := make([]bool, 0, len(in))   // out[k] came with its content
	var warnings []string
	var problems []agentstate.FieldViolation
	reason := ReasonDuplicateAttachment
	seen := make(map[string]int, len(in)) // id -> index in out
	for i, a := range in {
		field := fmt.Sprintf("attachments[%d].attachment_id", i)
		withContent := a.Content != ""
		switch {
		case !withContent:
			content, err := s.lookupAttachment(ctx, a.ID)
			if err != nil {
				return nil, nil, err
			}
			if content == "" {
				reason = ReasonAttachmentNotFound
				problems = append(problems, agentstate.FieldViolation{Field: field,
					Description: fmt.Sprintf("no attachment %q is stored: a call that sends an attachment's content (up to %d bytes) keeps it for later calls "+
						"for the summary cache's TTL; send its content again", a.ID, MaxStoredAttachmentBytes)})
				continue
			}
			a.Content = content
		case a.ID == "":
			a.ID = derivedAttachmentID(a.Content)
		}
		if k, dup := seen[a.ID]; dup {
			if out[k].Content != a.Content {
				problems = append(problems, agentstate.FieldViolation{Field: field,
					Description: fmt.Sprintf("%q is the id of attachments[%d] too, with other content: ids must be unique", a.ID, request[k])})
				continue
			}
			warnings = append(warnings, fmt.Sprintf("attachments[%d] repeats attachments[%d] (%q): placed once", i, request[k], a.ID))
			continue
		}
		seen[a.ID] = len(out)
		out, request, sent = append(out, a), append(request, i), append(sent, withContent)
	}
	if len(problems) > 0 {
		return nil, nil, &agentstate.InvalidArgumentError{Reason: reason, Violations: problems}
	}
	for k, a := range out {
		if sent[k] {
			warnings = append(warnings, s.storeAttachment(ctx, request[k], a, in[request[k]].ID != "")...)
		}
	}
	return out, warnings, nil
}

// lookupAttachment returns the stored content of an attachment id, "" when
// none is stored. A store that cannot answer is an outage, not an unknown id.
func (s *Service) lookupAttachment(ctx context.Context, id string) (string, error) {
	if s.attachments == nil {
		return "", nil
	}
	content, ok, err := s.attachments.Lookup(ctx, attachmentKey(id))
	if err != nil {
		return "", &agentstate.UnavailableError{Backend: "summary cache", Detail: "looking up attachment " + id + ": " + err.Error()}
	}
	if !ok {
		return "", nil
	}
	return content, nil
}

// storeAttachment keeps an attachment's content for later calls that name it
// by id. Only a caller who chose the id (named) is told when it was not kept.
func (s *Service) storeAttachment(ctx context.Context, i int, a agentstate.Attachment, named bool) []string {
	if s.attachments == nil {
		return nil
	}
	if len(a.Content) > MaxStoredAttachmentBytes {
		if !named {
			return nil
		}
		return []string{fmt.Sprintf("attachments[%d] (%q, %d bytes) is larger than the %d bytes kept for later calls: a later call must send its content again",
			i, a.ID, len(a.Content), MaxStoredAttachmentBytes)}
	}
	if err := s.attachments.Store(ctx, attachmentKey(a.ID), a.Content); err != nil {
		s.log.WarnContext(ctx, "attachment not stored", "attachment_id", a.ID, "error", err.Error())
		return []string{fmt.Sprintf("attachments[%d] (%q) could not be kept for later calls (the summary cache failed): a later call must send its content again", i, a.ID)}
	}
	return nil
}
