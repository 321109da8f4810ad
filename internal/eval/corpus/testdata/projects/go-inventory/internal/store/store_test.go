package store

import "testing"

func TestAdjust(t *testing.T) {
	s := New()
	if err := s.Add(Item{SKU: "A", Quantity: 3}); err != nil {
		t.Fatal(err)
	}
	if err := s.Adjust("A", -5); err == nil {
		t.Fatal("Adjust(-5) on 3 in stock: no error")
	}
}
