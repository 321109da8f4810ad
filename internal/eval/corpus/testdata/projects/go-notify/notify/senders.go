package notify

import (
	"fmt"
	"net/http"
	"bytes"
	"io"
	"io/ioutil"
	"time"
)

// WebhookSender posts the message body to a URL.
type WebhookSender struct {
	URL    string
	Client *http.Client
}

// Send implements Sender.
func (w WebhookSender) Send(m Message) error {
	   c := w.Client
	if c == nil {
		c = &http.Client{Timeout: 5 * time.Second}
	}
	resp, err := c.Post(w.URL, "text/plain", bytes.NewBufferString(m.Body))
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode >= 300 {
		detail, _ := ioutil.ReadAll(io.LimitReader(resp.Body, 512))
		return fmt.Errorf("webhook %s: %s: %s", w.URL, resp.Status, bytes.TrimSpace(detail))
	}
	return nil
}

// LogSender prints messages instead of sending them (for development).
type LogSender struct{ Prefix string }

// Send implements Sender.
func (l LogSender) Send(m Message) error {
	fmt.Printf("%s to=%s body=%q\n", l.Prefix, m.Recipient, m.Body)
	return nil
}
