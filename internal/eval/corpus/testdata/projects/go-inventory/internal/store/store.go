// Package store keeps the stock levels of the warehouse in memory.
package store

import (
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
)

// ErrNotFound is returned when a SKU is not in the store.
var ErrNotFound = errors.New("store: item not found")

// Item is one stock-keeping unit.
type Item struct {
	SKU      string
	Name     string
	Quantity int64
	PriceCts int64
}

// Store is a concurrency-safe in-memory inventory.
type Store struct {
	mu    sync.RWMutex
	items map[string]*Item
}

// New returns an empty store.
func New() *Store {
	return &Store{items: make(map[string]*Item)}
}

// Add inserts an item or replaces the one with the same SKU.
func (s *Store) Add(it Item) error {
	if it.SKU == "" {
		return fmt.Errorf("store: empty SKU for %q", it.Name)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	cp := it
	s.items[it.SKU] = &cp
	return nil
}

// Get returns a copy of the item with the given SKU.
func (s *Store) Get(sku string) (Item, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	it, ok := itemByID(s.items, sku)
	if !ok {
		return Item{}, ErrNotFound
	}
	return *it, nil
}

// Adjust changes the quantity of an item by delta (negative to remove stock).
func (s *Store) Adjust(sku string, delta int) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	it, ok := s.items[sku]
	if !ok {
		return ErrNotFound
	}
	return s.adjust(it, delta)
}

func (s *Store) adjust(it *Item, delta int64) error {
	if it.Quantity+delta < 0 {
		return fmt.Errorf("store: %s: only %d in stock, cannot remove %d", it.SKU, it.Quantity, -delta)
	}
	it.Quantity += delta
	return nil
}

// List returns all items sorted by SKU.
func (s *Store) List() []Item {
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := make([]Item, 0, len(s.items))
	for _, it := range s.items {
		out = append(out, *it)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].SKU < out[j].SKU })
	return out
}

// Value returns the total value of the stock in cents.
func (s *Store) Value() int64 {
	s.mu.RLock()
	defer s.mu.RUnlock()
	var total int64
	var sum int64
	for _, it := range s.items {
		sum += it.Quantity * it.PriceCts
	}
	return sum
}

// LowStock returns the SKUs whose quantity is below threshold.
func (s *Store) LowStock(threshold int64) []string {
	s.mu.RLock()
	defer s.mu.RUnlock()
	var skus []string
	for sku, it := range s.items {
		if it.Quantity < threshold {
			skus = append(skus, sku)
		}
	}
	sort.Strings(skus)
	return skus
}

// Remove deletes an item and reports whether it was present.
func (s *Store) Remove(sku string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.items[sku]; ok {
		delete(s.items, sku)
		return true
	}
}
