package harness

import (
	"net/http"
)

// NotFollowing is c, but answering redirects rather than following them.
func NotFollowing(c *http.Client) *http.Client {
	nc := *c
	nc.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	return &nc
}
