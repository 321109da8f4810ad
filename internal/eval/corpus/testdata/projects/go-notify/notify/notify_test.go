package notify

import "testing"

func TestDispatchCountsFailures(t *testing.T) {
	d := NewDispatcher()
	d.Register("log", LogSender{Prefix: "[test]"})
	failed := d.Dispatch([]Message{
		{ID: "m1", Recipient: "ana@example.com", Channel: "log", Body: "hi"},
		{ID: "m2", Recipient: "+33600000000", Channel: "sms", Body: "code 1234"},
	})
	if failed != 1 {
		t.Fatalf("Dispatch: %d failed, want 1", failed)
	}
	if s := d.Snapshot(); s.Sent != 1 {
		t.Errorf("Sent = %d, want 1", s.Sent)
	}
}
