// Package postgres owns the PostgreSQL schema that several instances share
// as their memory store's source of truth (store.Shared): the rows of every
// bucket of the store with the owner id first in each key, the log of
// committed write transactions that instances replay into their replicas,
// the migrations that make the schema, and the locks that make background
// work run once. It knows what a row belongs to, never what it means.
//
// It is public, beside store, because it is the store's second
// implementation (store.Shared) that DESIGN.md names: a user of it may
// rely on Open migrating the schema it finds and on the store.Shared
// contract; the schema itself is this module's.
package postgres

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/caddy-memory/memory/store"
)

// IsURL reports whether a storage setting names a PostgreSQL database
// rather than a directory.
func IsURL(s string) bool {
	return strings.HasPrefix(s, "postgres://") || strings.HasPrefix(s, "postgresql://")
}

// Redact returns the URL without its password, for logs and for naming
// the instance's replica.
func Redact(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "postgres://(unparsable)"
	}
	return u.Redacted()
}

// lockClass is the first key of the advisory locks this package takes,
// so they do not collide with an application's own.
const lockClass = 0x6d656d6f // "memo"

// Advisory lock keys under lockClass.
const (
	lockMigrate = 1
	lockWriter  = 2
	// Locks of Once are the hash of their name, never these.
)

// notifyChannel is the channel commits are announced on.
const notifyChannel = "memory_changes"

// errNotReady: the database has not answered since the start, so its
// schema is unchecked.
var errNotReady = errors.New("the memory database has not answered since this instance started")

// Retention is how long the log keeps a committed batch: a replica that
// falls further behind (an instance down for longer) is made anew from a
// snapshot.
const Retention = time.Hour

// DB is a PostgreSQL database shared by the memory stores of several
// instances. It implements store.Shared.
type DB struct {
	pool     *pgxpool.Pool
	conns    *conns
	id       atomic.Pointer[string] // the database's, from memory_state; nil until it answered
	instance string                 // this process's, to skip its own announcements
	changed  chan struct{}
	// ctx is cancelled by Close: every call the background work makes
	// (connecting, listening, trimming, vacuuming) ends with it, so a stop
	// never waits for a database that does not answer.
	ctx    context.Context
	stop   context.CancelFunc
	closed sync.Once
	done   sync.WaitGroup
	vacuum chan struct{}
	log    func(msg string, err error)
}

var _ store.Shared = (*DB)(nil)

// Open connects to the database at rawURL and applies the schema's
// migrations. logf hears errors of the background work (listening,
// trimming the log, vacuuming).
func Open(ctx context.Context, rawURL string, logf func(msg string, err error)) (*DB, error) {
	cfg, err := pgxpool.ParseConfig(rawURL)
	if err != nil {
		return nil, fmt.Errorf("memory storage %s is not a usable PostgreSQL URL: %w", Redact(rawURL), err)
	}
	cs := &conns{dial: cfg.ConnConfig.DialFunc}
	cfg.ConnConfig.DialFunc = cs.Dial
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("connecting to memory database %s: %w", Redact(rawURL), err)
	}
	if logf == nil {
		logf = func(string, error) {}
	}
	d := &DB{pool: pool, conns: cs, changed: make(chan struct{}, 1), vacuum: make(chan struct{}, 1), log: logf}
	d.ctx, d.stop = context.WithCancel(context.Background())
	d.instance = strconv.FormatInt(time.Now().UnixNano(), 36)
	id, err := migrate(ctx, pool)
	var unreachable *pgconn.ConnectError
	switch {
	case err == nil:
		d.id.Store(&id)
	case errors.As(err, &unreachable) || errors.Is(err, context.DeadlineExceeded):
		// Unreachable: the store may start from its replica (see
		// store.Shared.ID); the schema is checked once it answers.
		logf("the memory database does not answer; starting from this instance's replica, retrying", err)
		d.done.Add(1)
		go d.connect(rawURL)
	default:
		d.stop()
		cs.closePool(pool.Close)
		return nil, fmt.Errorf("preparing memory database %s: %w", Redact(rawURL), err)
	}
	d.done.Add(3)
	go d.listen()
	go d.trimmer()
	go d.vacuumer()
	return d, nil
}

// ID implements store.Shared: "" until the database has answered.
func (d *DB) ID() string {
	if id := d.id.Load(); id != nil {
		return *id
	}
	return ""
}

// connect checks the schema once the database answers, with backoff.
func (d *DB) connect(rawURL string) {
	defer d.done.Done()
	backoff := 500 * time.Millisecond
	for {
		select {
		case <-d.ctx.Done():
			return
		case <-time.After(backoff):
		}
		ctx, cancel := context.WithTimeout(d.ctx, 30*time.Second)
		id, err := migrate(ctx, d.pool)
		cancel()
		if err == nil {
			d.id.Store(&id)
			d.wake()
			return
		}
		var unreachable *pgconn.ConnectError
		if !errors.As(err, &unreachable) {
			d.log("preparing memory database "+Redact(rawURL)+"; retrying", err)
		}
		backoff = min(2*backoff, 10*time.Second)
	}
}

// Changed implements store.Shared.
func (d *DB) Changed() <-chan struct{} { return d.changed }

// Close implements store.Shared. It ends the background work's calls at
// once (the database may not answer), so it returns promptly; the callers
// of Write, Read, Snapshot and Once end theirs with their contexts.
func (d *DB) Close() error {
	d.closed.Do(func() {
		d.stop()
		d.done.Wait()
		d.conns.closePool(d.pool.Close)
	})
	return nil
}

// stopped returns a context done when ctx is cancelled (not when its
// deadline passes) or the DB is closed, and at the latest after limit: for
// work that the caller's deadline must not cut short, but a stop must.
func (d *DB) stopped(ctx context.Context, limit time.Duration) (context.Context, context.CancelFunc) {
	out, cancel := context.WithTimeout(context.WithoutCancel(ctx), limit)
	stopCaller := context.AfterFunc(ctx, func() {
		if !errors.Is(ctx.Err(), context.DeadlineExceeded) {
			cancel()
		}
	})
	stopDB := context.AfterFunc(d.ctx, cancel)
	return out, func() { stopCaller(); stopDB(); cancel() }
}

// Write implements store.Shared. The writer lock orders every commit, so
// the sequence numbers are given and become visible in the same order, and
// a replica that has read up to n has seen everything up to n.
func (d *DB) Write(ctx context.Context, after uint64, apply func(store.Batch) error, muts func() ([]store.Mutation, error)) (uint64, error) {
	if d.ID() == "" {
		return 0, errNotReady
	}
	tx, err := d.pool.BeginTx(ctx, pgx.TxOptions{})
	if err != nil {
		return 0, err
	}
	// With ctx done (the database did not answer, or a stop), the rollback
	// fails at once and drops the connection, and the transaction with it.
	defer tx.Rollback(ctx)
	if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1, $2)`, lockClass, lockWriter); err != nil {
		return 0, err
	}
	last := after
	for {
		batches, err := readBatches(ctx, tx, last, 256)
		if err != nil {
			return 0, err
		}
		for _, b := range batches {
			if err := apply(b); err != nil {
				return 0, err
			}
			last = b.Seq
		}
		if len(batches) < 256 {
			break
		}
	}
	ms, err := muts()
	if err != nil {
		return 0, err
	}
	if len(ms) == 0 {
		return last, tx.Commit(ctx)
	}
	// The caller's deadline says whether the database answers; writing the
	// rows then takes time in proportion to their number (an import, the
	// forget of a large owner), which it must not cut short. A stop does.
	ctx, cancel := d.stopped(ctx, 5*time.Second+time.Duration(len(ms))*200*time.Microsecond)
	defer cancel()
	var seq uint64
	if err := tx.QueryRow(ctx, `SELECT nextval('memory_log_seq')`).Scan(&seq); err != nil {
		return 0, err
	}
	batch := &pgx.Batch{}
	forgot := queueMutations(batch, seq, ms)
	batch.Queue(`UPDATE memory_state SET value = $1 WHERE name = 'last_seq'`, strconv.FormatUint(seq, 10))
	batch.Queue(`SELECT pg_notify($1, $2)`, notifyChannel, d.instance)
	if err := tx.SendBatch(ctx, batch).Close(); err != nil {
		return 0, err
	}
	if err := tx.Commit(ctx); err != nil {
		return 0, err
	}
	if forgot {
		select {
		case d.vacuum <- struct{}{}:
		default:
		}
	}
	return seq, nil
}

// queueMutations queues the statements that make ms the database's state,
// and the log entries that carry them to the other replicas (one per owner,
// so forgetting an owner can delete theirs). It reports whether an owner's
// partition was dropped.
func queueMutations(b *pgx.Batch, seq uint64, ms []store.Mutation) (forgot bool) {
	var owners []string
	byOwner := map[string][]store.Mutation{}
	rows := rowWrites{}
	for _, m := range ms {
		if _, ok := byOwner[m.Owner]; !ok {
			owners = append(owners, m.Owner)
		}
		byOwner[m.Owner] = append(byOwner[m.Owner], m)
		if m.Kind != store.MutDrop {
			rows.add(m)
			continue
		}
		// A drop deletes what the writes before it made, and only that.
		rows.queue(b)
		queueDrop(b, m)
		if m.Owner != "" && store.IsOwnerPartition(m.Bucket, m.Owner) {
			// What the log still holds of this owner goes with them.
			b.Queue(`DELETE FROM memory_log WHERE owner = $1 AND seq < $2`, m.Owner, int64(seq))
			forgot = true
		}
	}
	rows.queue(b)
	for _, o := range owners {
		b.Queue(`INSERT INTO memory_log (owner, seq, mutations) VALUES ($1, $2, $3)`, o, int64(seq), store.EncodeMutations(byOwner[o]))
	}
	return forgot
}

// rowWrites gathers the writes between two drops into a few statements:
// one for the rows put, one for those deleted, one for the buckets made
// and one for their sequences. Only the last write of a row (or sequence)
// counts, so the statements touch different rows and their order does not
// matter. One statement per write would cost a round of parsing and
// planning each: an import is hundreds of thousands.
type rowWrites struct {
	last    map[rowKey]store.Mutation // the last put or delete of each row
	order   []rowKey                  // in first-write order
	created map[rowKey]bool           // buckets made (owner, path)
	seq     map[rowKey]uint64         // the last sequence of each bucket
	border  []rowKey                  // buckets, in first-write order
}

type rowKey struct{ owner, bucket, key string }

func (r *rowWrites) add(m store.Mutation) {
	if r.last == nil {
		r.last, r.created, r.seq = map[rowKey]store.Mutation{}, map[rowKey]bool{}, map[rowKey]uint64{}
	}
	switch m.Kind {
	case store.MutPut, store.MutDelete:
		k := rowKey{m.Owner, string(m.Bucket), string(m.Key)}
		if _, ok := r.last[k]; !ok {
			r.order = append(r.order, k)
		}
		r.last[k] = m
	case store.MutCreate, store.MutSequence:
		k := rowKey{owner: m.Owner, bucket: string(m.Bucket)}
		_, c := r.created[k]
		_, q := r.seq[k]
		if !c && !q {
			r.border = append(r.border, k)
		}
		if m.Kind == store.MutCreate {
			r.created[k] = true
		} else {
			r.seq[k] = m.N
		}
	}
}

// queue queues the run's statements and starts a new run.
func (r *rowWrites) queue(b *pgx.Batch) {
	var po, do []string
	var pb, pk, pv, db, dk [][]byte
	for _, k := range r.order {
		m := r.last[k]
		if m.Kind == store.MutPut {
			po, pb, pk, pv = append(po, m.Owner), append(pb, m.Bucket), append(pk, m.Key), append(pv, nonNil(m.Value))
		} else {
			do, db, dk = append(do, m.Owner), append(db, m.Bucket), append(dk, m.Key)
		}
	}
	if len(po) > 0 {
		b.Queue(`INSERT INTO memory_rows (owner, bucket, key, value)
			SELECT * FROM unnest($1::text[], $2::bytea[], $3::bytea[], $4::bytea[])
			ON CONFLICT (owner, bucket, key) DO UPDATE SET value = excluded.value`, po, pb, pk, pv)
	}
	if len(do) > 0 {
		b.Queue(`DELETE FROM memory_rows r USING unnest($1::text[], $2::bytea[], $3::bytea[]) AS d(owner, bucket, key)
			WHERE r.owner = d.owner AND r.bucket = d.bucket AND r.key = d.key`, do, db, dk)
	}
	var co, so []string
	var cp, sp [][]byte
	var sn []int64
	for _, k := range r.border {
		if r.created[k] {
			co, cp = append(co, k.owner), append(cp, []byte(k.bucket))
		}
		if n, ok := r.seq[k]; ok {
			so, sp, sn = append(so, k.owner), append(sp, []byte(k.bucket)), append(sn, int64(n))
		}
	}
	if len(co) > 0 {
		b.Queue(`INSERT INTO memory_buckets (owner, path) SELECT * FROM unnest($1::text[], $2::bytea[])
			ON CONFLICT DO NOTHING`, co, cp)
	}
	if len(so) > 0 {
		b.Queue(`INSERT INTO memory_buckets (owner, path, seq) SELECT * FROM unnest($1::text[], $2::bytea[], $3::bigint[])
			ON CONFLICT (owner, path) DO UPDATE SET seq = excluded.seq`, so, sp, sn)
	}
	*r = rowWrites{}
}

// queueDrop deletes a bucket and everything below it: rows whose bucket
// path starts with its path. A bucket of one owner is dropped within their
// rows; a store-wide one, across owners.
func queueDrop(b *pgx.Batch, m store.Mutation) {
	lo, hi := m.Bucket, prefixEnd(m.Bucket)
	if m.Owner != "" {
		b.Queue(`DELETE FROM memory_buckets WHERE owner = $1 AND path >= $2 AND ($3::bytea IS NULL OR path < $3)`, m.Owner, lo, hi)
		b.Queue(`DELETE FROM memory_rows WHERE owner = $1 AND bucket >= $2 AND ($3::bytea IS NULL OR bucket < $3)`, m.Owner, lo, hi)
		return
	}
	b.Queue(`DELETE FROM memory_buckets WHERE path >= $1 AND ($2::bytea IS NULL OR path < $2)`, lo, hi)
	b.Queue(`DELETE FROM memory_rows WHERE bucket >= $1 AND ($2::bytea IS NULL OR bucket < $2)`, lo, hi)
}

// prefixEnd is the least byte string above every string starting with p
// (nil: none).
func prefixEnd(p []byte) []byte {
	end := append([]byte(nil), p...)
	for i := len(end) - 1; i >= 0; i-- {
		if end[i] < 0xff {
			end[i]++
			return end[:i+1]
		}
	}
	return nil
}

func nonNil(b []byte) []byte {
	if b == nil {
		return []byte{}
	}
	return b
}

// readBatches reads up to limit batches after `after`, or ErrTrimmed when
// some of them are no longer kept.
func readBatches(ctx context.Context, q pgx.Tx, after uint64, limit int) ([]store.Batch, error) {
	var trimmed string
	if err := q.QueryRow(ctx, `SELECT value FROM memory_state WHERE name = 'trimmed_through'`).Scan(&trimmed); err != nil {
		return nil, err
	}
	if t, _ := strconv.ParseUint(trimmed, 10, 64); after < t {
		return nil, store.ErrTrimmed
	}
	rows, err := q.Query(ctx, `SELECT seq, mutations FROM memory_log
		WHERE seq IN (SELECT DISTINCT seq FROM memory_log WHERE seq > $1 ORDER BY seq LIMIT $2)
		ORDER BY seq, owner`, int64(after), limit)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []store.Batch
	for rows.Next() {
		var seq int64
		var data []byte
		if err := rows.Scan(&seq, &data); err != nil {
			return nil, err
		}
		ms, err := store.DecodeMutations(data)
		if err != nil {
			return nil, fmt.Errorf("log entry %d: %w", seq, err)
		}
		if n := len(out); n > 0 && out[n-1].Seq == uint64(seq) {
			out[n-1].Mutations = append(out[n-1].Mutations, ms...)
			continue
		}
		out = append(out, store.Batch{Seq: uint64(seq), Mutations: ms})
	}
	return out, rows.Err()
}

// Read implements store.Shared. One snapshot answers, so the trimmed mark
// and the log agree.
func (d *DB) Read(ctx context.Context, after uint64, limit int) ([]store.Batch, error) {
	if d.ID() == "" {
		return nil, errNotReady
	}
	tx, err := d.pool.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
	if err != nil {
		return nil, err
	}
	defer tx.Rollback(ctx) // ctx done: the connection is dropped
	return readBatches(ctx, tx, after, limit)
}

// Once implements store.Shared with a session-level advisory lock held on
// one connection while fn runs: if the instance dies, PostgreSQL releases
// it with the connection.
func (d *DB) Once(ctx context.Context, name string, fn func() error) (bool, error) {
	conn, err := d.pool.Acquire(ctx)
	if err != nil {
		return false, err
	}
	defer conn.Release()
	var got bool
	if err := conn.QueryRow(ctx, `SELECT pg_try_advisory_lock($1, hashtext($2))`, lockClass, "once:"+name).Scan(&got); err != nil {
		return false, err
	}
	if !got {
		return false, nil
	}
	defer func() {
		// ctx done (a stop, or a database that does not answer): the
		// unlock fails at once.
		if _, err := conn.Exec(ctx, `SELECT pg_advisory_unlock($1, hashtext($2))`, lockClass, "once:"+name); err != nil {
			// The lock must not outlive fn: drop the connection, and the lock with it.
			_ = conn.Conn().Close(ctx)
		}
	}()
	return true, fn()
}

// listen wakes Changed when another instance announces a commit. It
// reconnects with backoff; meanwhile the store's polling carries on.
func (d *DB) listen() {
	defer d.done.Done()
	ctx := d.ctx
	backoff := 100 * time.Millisecond
	for ctx.Err() == nil {
		listened := false
		err := d.listenOnce(ctx, &listened)
		if ctx.Err() != nil {
			return
		}
		if listened {
			backoff = 100 * time.Millisecond
			// Said once per outage; the store's polling covers it.
			d.log("listening for memory changes from other instances; reconnecting", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(backoff):
		}
		backoff = min(backoff*2, 10*time.Second)
	}
}

func (d *DB) listenOnce(ctx context.Context, listened *bool) error {
	conn, err := d.pool.Acquire(ctx)
	if err != nil {
		return err
	}
	// The connection keeps listening: it never goes back to the pool.
	c := conn.Hijack()
	defer c.Close(ctx) // done at Close: dropped at once
	if _, err := c.Exec(ctx, "LISTEN "+notifyChannel); err != nil {
		return err
	}
	*listened = true
	d.wake() // a commit may have been missed while not listening
	for {
		n, err := c.WaitForNotification(ctx)
		if err != nil {
			return err
		}
		if n.Payload != d.instance {
			d.wake()
		}
	}
}

func (d *DB) wake() {
	select {
	case d.changed <- struct{}{}:
	default:
	}
}

// trimmer deletes log entries older than Retention, once a minute, on one
// instance at a time.
func (d *DB) trimmer() {
	defer d.done.Done()
	tick := time.NewTicker(time.Minute)
	defer tick.Stop()
	for {
		select {
		case <-d.ctx.Done():
			return
		case <-tick.C:
		}
		ctx, cancel := context.WithTimeout(d.ctx, time.Minute)
		_, err := d.Once(ctx, "trim", func() error { return d.trim(ctx, Retention) })
		cancel()
		if err != nil {
			d.log("trimming the shared memory log", err)
		}
	}
}

// trim deletes the log's entries older than keep, under the writer lock so
// the trimmed mark moves with them.
func (d *DB) trim(ctx context.Context, keep time.Duration) error {
	tx, err := d.pool.Begin(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback(ctx) // ctx done: the connection is dropped
	if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1, $2)`, lockClass, lockWriter); err != nil {
		return err
	}
	var upTo *int64
	if err := tx.QueryRow(ctx, `SELECT max(seq) FROM memory_log WHERE at < now() - $1::interval`,
		fmt.Sprintf("%d seconds", int(keep.Seconds()))).Scan(&upTo); err != nil {
		return err
	}
	if upTo == nil {
		return nil
	}
	if _, err := tx.Exec(ctx, `DELETE FROM memory_log WHERE seq <= $1`, *upTo); err != nil {
		return err
	}
	if _, err := tx.Exec(ctx, `UPDATE memory_state SET value = greatest(value::bigint, $1)::text WHERE name = 'trimmed_through'`, *upTo); err != nil {
		return err
	}
	return tx.Commit(ctx)
}

// vacuumer runs VACUUM after an owner was forgotten: until then their
// deleted rows are dead tuples, still in the table's pages on disk.
func (d *DB) vacuumer() {
	defer d.done.Done()
	for {
		select {
		case <-d.ctx.Done():
			return
		case <-d.vacuum:
		}
		ctx, cancel := context.WithTimeout(d.ctx, 10*time.Minute)
		_, err := d.pool.Exec(ctx, `VACUUM memory_rows, memory_log, memory_buckets`)
		cancel()
		if err != nil && !errors.Is(err, context.Canceled) {
			d.log("vacuuming the memory tables after forgetting an owner", err)
		}
	}
}
