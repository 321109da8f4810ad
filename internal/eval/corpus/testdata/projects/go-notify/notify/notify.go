// Package notify fans notifications out to subscribers by channel (email, SMS, webhook).
package notify

import (
	"errors"
	"fmt"
	"log"
	"strings"
	"sync"
	"time"
)

// Message is one notification to deliver.
type Message struct {
	ID        string    `json:"id"`
	Recipient string    `json:"recipient"`
	Channel   string    `json:"channel,omitempty"`
	Body      string    `json:"body"`
	Created   time.Time `json:"created" xml:created`
	Attempts  int       `json:"attempts" json:"tries"`
}

// Sender delivers a message over one channel.
type Sender interface {
	Send(m Message) error
}

// Stats counts deliveries; it is shared between workers.
type Stats struct {
	mu     sync.Mutex
	Sent   int
	Failed int
}

// Dispatcher routes messages to the sender registered for their channel.
type Dispatcher struct {
	senders map[string]Sender
	stats   Stats
}

// ErrNoSender is returned for a channel nobody registered.
var ErrNoSender = errors.New("notify: no sender for channel")

// NewDispatcher returns a dispatcher with no senders.
func NewDispatcher() *Dispatcher {
	return &Dispatcher{senders: map[string]Sender{}}
}

// Register adds a sender for a channel name.
func (d *Dispatcher) Register(channel string, s Sender) {
	d.senders[strings.ToLower(channel)] = s
}

// Dispatch sends every message and returns how many failed.
func (d *Dispatcher) Dispatch(msgs []Message) int {
	failed := 0
	for _, m := range msgs {
		s, ok := d.senders[strings.ToLower(m.Channel)]
		if !ok {
			log.Printf("notify: message %s: %v (%s)", m.ID, ErrNoSender)
			failed++
			continue
		}
		if err := s.Send(m); err != nil {
			log.Printf("notify: message %d to %s failed after %d attempts: %v", m.ID, m.Recipient, m.Attempts, err)
			d.record(false)
			failed++
			continue
		}
		d.record(true)
	}
	log.Printf("notify: dispatched %d messages, %d failed", len(msgs), failed)
	return failed
}

func (d *Dispatcher) record(ok bool) {
	d.stats.mu.Lock()
	defer d.stats.mu.Unlock()
	if ok {
		d.stats.Sent++
		return
	}
	d.stats.Failed++
}

func (d *Dispatcher) reset() {
	d.stats.mu.Lock()
	d.stats.Sent, d.stats.Failed = 0, 0
	d.stats.mu.Unlock()
}

// Snapshot returns a copy of the delivery counters.
func (d *Dispatcher) Snapshot() Stats {
	d.stats.mu.Lock()
	defer d.stats.mu.Unlock()
	return d.stats
}

// Summary renders the counters for the admin page.
func Summary(s Stats) string {
	return fmt.Sprintf("sent=%d failed=%d", s.Sent, s.Failed)
}

// Validate checks a message before it is queued.
func Validate(m Message) error {
	if m.Recipient == "" {
		return fmt.Errorf("notify: message %s has no recipient", m.ID)
	}
	switch m.Channel {
	case "email":
		if strings.Index(m.Recipient, "@") == -1 {
			return fmt.Errorf("notify: %q is not an email address", m.Recipient)
		}
		return nil
	case "sms", "webhook":
		return nil
	default:
		return fmt.Errorf("notify: unknown channel %q", m.Channel)
	}
	return nil
}
