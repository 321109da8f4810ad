package llm

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// The chat completions wire format: the one call ctxc makes. The fields are
// the subset of OpenAI's POST /chat/completions that OpenAI, Ollama, vLLM and
// LiteLLM all accept. Written here rather than taken from the OpenAI SDK,
// which links every one of its services and types into the binary (20 MB of
// a 44 MB build) for this one request.

type chatRequest struct {
	Model    string        `json:"model"`
	Messages []chatMessage `json:"messages"`
	// Temperature 0 is sent, not omitted: summaries and plans should be
	// reproducible as far as the model allows.
	Temperature    float64         `json:"temperature"`
	MaxTokens      int             `json:"max_tokens,omitempty"`
	ResponseFormat *responseFormat `json:"response_format,omitempty"`
}

type chatMessage struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

type responseFormat struct {
	Type string `json:"type"`
}

type chatResponse struct {
	Model   string `json:"model"`
	Choices []struct {
		Message chatMessage `json:"message"`
	} `json:"choices"`
	Usage struct {
		PromptTokens     int `json:"prompt_tokens"`
		CompletionTokens int `json:"completion_tokens"`
	} `json:"usage"`
}

// errReplyTooLarge fails an answer whose body passes Config.MaxReplyBytes.
var errReplyTooLarge = errors.New("the answer is larger than max_reply_bytes")

// StatusError is an answer with an HTTP status other than 2xx.
type StatusError struct {
	StatusCode int
	// Message is the endpoint's error message ({"error": {"message": ...}}),
	// else the start of the body.
	Message string
	// RetryAfter is the Retry-After header, if any.
	RetryAfter string
}

func (e *StatusError) Error() string {
	return fmt.Sprintf("HTTP %d %s: %s", e.StatusCode, http.StatusText(e.StatusCode), e.Message)
}

// post sends one chat completion request and decodes the answer.
func (c *Client) post(ctx context.Context, payload []byte) (*chatResponse, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.endpoint, bytes.NewReader(payload))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	if c.apiKey != "" {
		req.Header.Set("Authorization", "Bearer "+c.apiKey)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	// Read one byte past the limit, so a body at the limit is told from a
	// larger one; the rest of a larger one is never read.
	limit := int64(c.cfg.MaxReplyBytes)
	if resp.ContentLength > limit {
		return nil, fmt.Errorf("%w (Content-Length %d, limit %d)", errReplyTooLarge, resp.ContentLength, limit)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, limit+1))
	if err != nil {
		return nil, err
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return nil, &StatusError{StatusCode: resp.StatusCode, Message: errorMessage(body), RetryAfter: resp.Header.Get("Retry-After")}
	}
	if int64(len(body)) > limit {
		return nil, fmt.Errorf("%w (limit %d)", errReplyTooLarge, limit)
	}
	var out chatResponse
	if err := json.Unmarshal(body, &out); err != nil {
		return nil, fmt.Errorf("decoding the answer: %w", err)
	}
	return &out, nil
}

// errorMessage is the message of an OpenAI-style error body, else the body's
// first 200 bytes.
func errorMessage(body []byte) string {
	var e struct {
		Error struct {
			Message string `json:"message"`
		} `json:"error"`
	}
	if json.Unmarshal(body, &e) == nil && e.Error.Message != "" {
		return e.Error.Message
	}
	msg := strings.TrimSpace(string(body))
	if len(msg) > 200 {
		msg = strings.ToValidUTF8(msg[:200], "") + "…"
	}
	return msg
}
