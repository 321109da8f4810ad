// Package store persists short links in PostgreSQL.
package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	_ "github.com/lib/pq"
)

// ErrNotFound is returned for an unknown code.
var ErrNotFound = errors.New("store: no such link")

// Links is the links table.
type Links struct{ db *sql.DB }

// Open connects to the database named by dsn.
func Open(dsn string) (*Links, error) {
	db, err := sql.Open("postgres", dsn)
	if err != nil {
		return nil, fmt.Errorf("store: open: %w", err)
	}
	return &Links{db: db}, nil
}

// Put saves code -> url.
func (l *Links) Put(ctx context.Context, code, url string) error {
	_, err := l.db.ExecContext(ctx, `INSERT INTO links (code, url) VALUES ($1, $2)`, code, url)
	return err
}

// Get returns the url for code.
func (l *Links) Get(ctx context.Context, code string) (string, error) {
	var url string
	err := l.db.QueryRowContext(ctx, `SELECT url FROM links WHERE code = $1`, code).Scan(&url)
	if errors.Is(err, sql.ErrNoRows) {
		return "", ErrNotFound
	}
	return url, err
}
