package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// migrations make the schema, in order; migration i brings it to version
// i+1. A migration is never edited once released: a change is a new one.
//
// Every table of memories carries the owner id first in its primary key, so
// a Citus cluster can distribute them by owner (docs/scale.md);
// memory_state is a handful of settings.
var migrations = [][]string{
	{
		`CREATE TABLE memory_state (name text PRIMARY KEY, value text NOT NULL)`,
		`INSERT INTO memory_state (name, value) VALUES
			('id', md5(random()::text || clock_timestamp()::text)),
			('last_seq', '0'),
			('trimmed_through', '0')`,
		// The store's nested buckets, and their sequences.
		`CREATE TABLE memory_buckets (
			owner text NOT NULL,
			path bytea NOT NULL,
			seq bigint NOT NULL DEFAULT 0,
			PRIMARY KEY (owner, path))`,
		// Every row of every bucket: the owner it belongs to ('' for the
		// store's own), the bucket's path, its key and value (sealed when
		// the storage is encrypted).
		`CREATE TABLE memory_rows (
			owner text NOT NULL,
			bucket bytea NOT NULL,
			key bytea NOT NULL,
			value bytea NOT NULL,
			PRIMARY KEY (owner, bucket, key))`,
		// Each committed write transaction, split by owner, for the
		// instances' replicas to replay in seq order.
		`CREATE SEQUENCE memory_log_seq`,
		`CREATE TABLE memory_log (
			owner text NOT NULL,
			seq bigint NOT NULL,
			at timestamptz NOT NULL DEFAULT now(),
			mutations bytea NOT NULL,
			PRIMARY KEY (owner, seq))`,
		`CREATE INDEX memory_log_by_seq ON memory_log (seq)`,
	},
}

// migrate brings the schema up to date and returns the database's id. It
// holds an advisory lock while it does, so instances that start together
// apply each migration once.
func migrate(ctx context.Context, pool *pgxpool.Pool) (string, error) {
	tx, err := pool.Begin(ctx)
	if err != nil {
		return "", err
	}
	defer tx.Rollback(ctx) // a ctx done drops the connection, and the transaction with it
	if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1, $2)`, lockClass, lockMigrate); err != nil {
		return "", err
	}
	if _, err := tx.Exec(ctx, `CREATE TABLE IF NOT EXISTS memory_schema (version int NOT NULL)`); err != nil {
		return "", err
	}
	version := 0
	err = tx.QueryRow(ctx, `SELECT version FROM memory_schema`).Scan(&version)
	if err == pgx.ErrNoRows {
		if _, err := tx.Exec(ctx, `INSERT INTO memory_schema (version) VALUES (0)`); err != nil {
			return "", err
		}
	} else if err != nil {
		return "", err
	}
	if version > len(migrations) {
		return "", fmt.Errorf("the memory database has schema version %d, newer than this module knows (%d): upgrade the module", version, len(migrations))
	}
	for v := version; v < len(migrations); v++ {
		for _, stmt := range migrations[v] {
			if _, err := tx.Exec(ctx, stmt); err != nil {
				return "", fmt.Errorf("migration %d: %w", v+1, err)
			}
		}
	}
	if _, err := tx.Exec(ctx, `UPDATE memory_schema SET version = $1`, len(migrations)); err != nil {
		return "", err
	}
	var id string
	if err := tx.QueryRow(ctx, `SELECT value FROM memory_state WHERE name = 'id'`).Scan(&id); err != nil {
		return "", err
	}
	return id, tx.Commit(ctx)
}
