package api

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/caddy-memory/memory/store"
)

// importLine is an exported memory as an import decodes it. A line may be
// up to maxImportLine long: decoded as it is, a line of nothing but tiny
// history versions or meta entries would become a value for every few
// bytes (about 25 times the line's size). The history keeps only the
// versions the store keeps (the last store.MaxHistory) as it is read, and
// meta stops at maxMeta entries, so a line costs about its own size.
type importLine struct {
	store.Memory
	// Shadowing the Memory's own fields of the same JSON names.
	History recentVersions `json:"history,omitempty"`
	Meta    boundedMeta    `json:"meta,omitempty"`
}

// recentVersions is a history as it is decoded: its last store.MaxHistory
// versions.
type recentVersions []store.Version

func (h *recentVersions) UnmarshalJSON(b []byte) error {
	dec, err := openJSON(b, '[', "history must be an array of versions")
	if dec == nil {
		*h = nil
		return err
	}
	var ring [store.MaxHistory]store.Version
	n := 0
	for dec.More() {
		var v store.Version
		if err := dec.Decode(&v); err != nil {
			return err
		}
		ring[n%store.MaxHistory] = v
		n++
	}
	out := make(recentVersions, 0, min(n, store.MaxHistory))
	for i := max(0, n-store.MaxHistory); i < n; i++ {
		out = append(out, ring[i%store.MaxHistory])
	}
	*h = out
	return nil
}

// boundedMeta is meta as it is decoded: past maxMeta entries, an error.
type boundedMeta map[string]string

func (m *boundedMeta) UnmarshalJSON(b []byte) error {
	dec, err := openJSON(b, '{', "meta must be an object of strings")
	if dec == nil {
		*m = nil
		return err
	}
	out := boundedMeta{}
	for dec.More() {
		if len(out) == maxMeta {
			return badRequest("meta has more than %d entries; the limit is %d", maxMeta, maxMeta)
		}
		k, err := dec.Token()
		if err != nil {
			return err
		}
		var v string
		if err := dec.Decode(&v); err != nil {
			return fmt.Errorf("meta[%q]: %w", k, err)
		}
		out[k.(string)] = v
	}
	*m = out
	return nil
}

// openJSON starts decoding b, a JSON value that must be null (nil, nil) or
// open with delim (a decoder past it); else nil and an error saying want.
// The caller's decoder checked b is valid JSON, so what follows the
// opening is well formed.
func openJSON(b []byte, delim json.Delim, want string) (*json.Decoder, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	t, err := dec.Token()
	switch {
	case err != nil:
		return nil, err
	case t == nil:
		return nil, nil
	case t != delim:
		return nil, badRequest("%s", want)
	}
	return dec, nil
}
