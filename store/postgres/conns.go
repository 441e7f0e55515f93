package postgres

import (
	"context"
	"errors"
	"net"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
)

// conns keeps every connection the pool dials, so Close can end them when
// the database does not answer. pgx closes a connection whose call was
// cancelled in the background, sending the server a cancel request and
// reading until it hangs up or 15 s pass; the pool's Close waits for that.
// A database that accepts connections and never answers would hold a stop
// for those 15 s: past closeGrace, Close closes the sockets itself.
type conns struct {
	dial   pgconn.DialFunc
	mu     sync.Mutex
	open   map[*conn]struct{}
	closed bool
}

// closeGrace is how long Close lets the pool close its connections in
// order (telling the server) before it closes their sockets.
const closeGrace = 250 * time.Millisecond

var errClosed = errors.New("the memory database connection is closed")

func (c *conns) Dial(ctx context.Context, network, addr string) (net.Conn, error) {
	c.mu.Lock()
	closed := c.closed
	c.mu.Unlock()
	if closed {
		return nil, errClosed
	}
	nc, err := c.dial(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	w := &conn{Conn: nc, of: c}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		nc.Close()
		return nil, errClosed
	}
	if c.open == nil {
		c.open = map[*conn]struct{}{}
	}
	c.open[w] = struct{}{}
	return w, nil
}

// closeAll closes every socket, and refuses to dial more.
func (c *conns) closeAll() {
	c.mu.Lock()
	c.closed = true
	open := c.open
	c.open = nil
	c.mu.Unlock()
	for w := range open {
		w.Conn.Close()
	}
}

// closePool closes the pool (close), in order if it can within closeGrace,
// else by closing the sockets under it.
func (c *conns) closePool(close func()) {
	done := make(chan struct{})
	go func() { close(); done <- struct{}{} }()
	select {
	case <-done:
	case <-time.After(closeGrace):
		c.closeAll()
		<-done
	}
	c.closeAll()
}

type conn struct {
	net.Conn
	of   *conns
	once sync.Once
}

func (w *conn) Close() error {
	w.once.Do(func() {
		w.of.mu.Lock()
		delete(w.of.open, w)
		w.of.mu.Unlock()
	})
	return w.Conn.Close()
}
