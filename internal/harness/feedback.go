package harness

import (
	"encoding/json"
	"strings"

	"github.com/caddy-memory/memory/inject"
)

// InjectedBlock returns the memory block a raw request body carries, or "".
func InjectedBlock(body []byte) string {
	raw := string(body)
	i := strings.Index(raw, "<memory-context")
	j := strings.Index(raw, inject.BlockEnd)
	if i < 0 || j < i {
		return ""
	}
	var s string
	if err := json.Unmarshal([]byte(`"`+raw[i:j+len(inject.BlockEnd)]+`"`), &s); err != nil {
		return ""
	}
	return s
}
