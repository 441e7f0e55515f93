package postgres

import (
	"context"
	"strconv"

	"github.com/jackc/pgx/v5"

	"github.com/caddy-memory/memory/store"
)

// snapshotPage is how many buckets or rows one statement of a snapshot
// reads.
const snapshotPage = 1000

// Snapshot implements store.Shared without holding one transaction for
// its whole length. A database of a million memories takes minutes to
// pass on, and a snapshot held that long would keep VACUUM from every row
// changed meanwhile (and, on a replica server, hold back its replay). So
// it reads the position first, then the buckets and the rows a page at a
// time in key order (keyset pagination: each page one statement, its own
// short snapshot), and then the log from that position on. A page may be
// newer than the position; replaying, in order, every batch committed
// since brings each bucket and row to the state of the position returned,
// whatever the pages saw. A snapshot slower than the log's Retention fails
// (ErrTrimmed), and the replica is made anew at its next attempt.
func (d *DB) Snapshot(ctx context.Context, fn func(store.Mutation) error) (uint64, error) {
	var last string
	if err := d.pool.QueryRow(ctx, `SELECT value FROM memory_state WHERE name = 'last_seq'`).Scan(&last); err != nil {
		return 0, err
	}
	seq, _ := strconv.ParseUint(last, 10, 64)
	if err := d.snapshotBuckets(ctx, fn); err != nil {
		return 0, err
	}
	if err := d.snapshotRows(ctx, fn); err != nil {
		return 0, err
	}
	for {
		batches, err := d.Read(ctx, seq, 256)
		if err != nil || len(batches) == 0 {
			return seq, err
		}
		for _, b := range batches {
			for _, m := range b.Mutations {
				if err := fn(m); err != nil {
					return 0, err
				}
			}
			seq = b.Seq
		}
	}
}

// snapshotBuckets passes every bucket (MutCreate, and MutSequence when it
// has one), an owner's in path order: a parent before its children (the
// store's own buckets, owner "", come first).
func (d *DB) snapshotBuckets(ctx context.Context, fn func(store.Mutation) error) error {
	var last store.Mutation
	return d.paged(ctx, `SELECT owner, path, seq FROM memory_buckets
		WHERE (owner, path) > ($1, $2) ORDER BY owner, path LIMIT $3`,
		func() []any { return []any{last.Owner, nonNil(last.Bucket)} },
		func(rows pgx.Rows) error {
			m := store.Mutation{Kind: store.MutCreate}
			var seq int64
			if err := rows.Scan(&m.Owner, &m.Bucket, &seq); err != nil {
				return err
			}
			last = m
			if err := fn(m); err != nil || seq == 0 {
				return err
			}
			m.Kind, m.N = store.MutSequence, uint64(seq)
			return fn(m)
		})
}

// snapshotRows passes every row (MutPut) in key order.
func (d *DB) snapshotRows(ctx context.Context, fn func(store.Mutation) error) error {
	var last store.Mutation
	return d.paged(ctx, `SELECT owner, bucket, key, value FROM memory_rows
		WHERE (owner, bucket, key) > ($1, $2, $3) ORDER BY owner, bucket, key LIMIT $4`,
		func() []any { return []any{last.Owner, nonNil(last.Bucket), nonNil(last.Key)} },
		func(rows pgx.Rows) error {
			m := store.Mutation{Kind: store.MutPut}
			if err := rows.Scan(&m.Owner, &m.Bucket, &m.Key, &m.Value); err != nil {
				return err
			}
			last = m
			return fn(m)
		})
}

// paged runs query a page of snapshotPage rows at a time, each page one
// statement: its arguments are after's (the key of the last row passed,
// or the least key) and the page's size. row reads each row.
func (d *DB) paged(ctx context.Context, query string, after func() []any, row func(pgx.Rows) error) error {
	for {
		rows, err := d.pool.Query(ctx, query, append(after(), snapshotPage)...)
		if err != nil {
			return err
		}
		n := 0
		for rows.Next() {
			n++
			if err := row(rows); err != nil {
				rows.Close()
				return err
			}
		}
		rows.Close()
		if err := rows.Err(); err != nil || n < snapshotPage {
			return err
		}
	}
}
