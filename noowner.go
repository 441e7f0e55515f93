package memory

import (
	"net/http"
	"sync"
	"time"

	"go.uber.org/zap"
)

// noOwnerEvery is how often, at most, the same cause of requests without an
// owner is logged.
const noOwnerEvery = time.Minute

// noOwnerLog tells the operator why chat requests went on without memory
// for want of an owner, once a minute for each cause: a client with no key,
// a blank one, an owner template nothing fills. Without it, such requests
// are passed on silently and memory seems not to work.
type noOwnerLog struct {
	logger *zap.Logger
	owner  []string // the handler's owner templates

	mu   sync.Mutex
	now  func() time.Time // the clock: time.Now
	seen map[string]*paced
}

// paced is when a cause was last logged, and how many requests had it
// since without being logged.
type paced struct {
	at     time.Time
	missed int
}

// report logs why r had no owner, unless its cause was logged less than a
// minute ago.
func (l *noOwnerLog) report(r *http.Request, why noOwner) {
	cause := why.cause()
	l.mu.Lock()
	now := l.now()
	p := l.seen[cause]
	if p != nil && now.Sub(p.at) < noOwnerEvery {
		p.missed++
		l.mu.Unlock()
		return
	}
	missed := 0
	if p != nil {
		missed = p.missed
	}
	if l.seen == nil {
		l.seen = map[string]*paced{}
	}
	l.seen[cause] = &paced{at: now}
	l.mu.Unlock()
	l.logger.Warn("chat request passed on without memory: it has no owner",
		zap.String("why", why.String()),
		zap.Strings("owner", l.owner),
		zap.String("remote_ip", hostOnly(r.RemoteAddr)),
		zap.String("path", r.URL.Path),
		zap.Int("same_since_last_logged", missed),
		zap.String("fix", "send the API key the upstream takes, or name keyless clients with another owner template "+
			"(README: Scope); this is logged once a minute for each cause"))
}
