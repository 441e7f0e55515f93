package pgtest

import (
	"io"
	"net"
	"net/url"
	"sync"
	"sync/atomic"
	"testing"
)

// Proxy stands between a test's clients and its database, so the test can
// make the database unreachable the worst way: Hang, and every connection,
// open or new, is accepted and never answered (a partition that drops
// packets, a frozen server), where Stop refuses them at once. Unlike Stop,
// it touches only the clients that use the proxy's URL; Resume ends it.
type Proxy struct {
	// URL is the database's URL through the proxy.
	URL string

	l      net.Listener
	target string
	hung   atomic.Bool
	mu     sync.Mutex
	conns  []net.Conn
	closed bool
	wg     sync.WaitGroup
}

// NewProxy starts a proxy to the database at rawURL (a Database URL); it
// stops when the test ends.
func NewProxy(t testing.TB, rawURL string) *Proxy {
	t.Helper()
	u, err := url.Parse(rawURL)
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &Proxy{l: l, target: u.Host}
	u.Host = l.Addr().String()
	p.URL = u.String()
	p.wg.Add(1)
	go p.accept()
	t.Cleanup(p.close)
	return p
}

// Hang makes the database stop answering through the proxy: what clients
// send is read and dropped, and nothing comes back.
func (p *Proxy) Hang() { p.hung.Store(true) }

// Resume ends a Hang: the connections it held are closed (what was sent
// on them is lost), new ones reach the database again.
func (p *Proxy) Resume() {
	p.mu.Lock()
	conns := p.conns
	p.conns = nil
	p.hung.Store(false)
	p.mu.Unlock()
	for _, c := range conns {
		c.Close()
	}
}

func (p *Proxy) accept() {
	defer p.wg.Done()
	for {
		c, err := p.l.Accept()
		if err != nil {
			return
		}
		p.track(c)
		if p.hung.Load() {
			p.pipe(io.Discard, c)
			continue
		}
		up, err := net.Dial("tcp", p.target)
		if err != nil {
			c.Close()
			continue
		}
		p.track(up)
		p.pipe(up, c)
		p.pipe(c, up)
	}
}

func (p *Proxy) track(c net.Conn) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		c.Close()
		return
	}
	p.conns = append(p.conns, c)
}

// pipe copies from src to dst until src ends, dropping what arrives once
// the proxy hangs.
func (p *Proxy) pipe(dst io.Writer, src net.Conn) {
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		buf := make([]byte, 32<<10)
		for {
			n, err := src.Read(buf)
			if n > 0 && !p.hung.Load() {
				if _, err := dst.Write(buf[:n]); err != nil {
					return
				}
			}
			if err != nil {
				return
			}
		}
	}()
}

func (p *Proxy) close() {
	p.l.Close()
	p.mu.Lock()
	p.closed = true
	for _, c := range p.conns {
		c.Close()
	}
	p.mu.Unlock()
	p.wg.Wait()
}
