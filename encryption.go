package memory

import (
	"errors"
	"fmt"
	"sync"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"

	"github.com/caddy-memory/memory/internal/seal"
)

// EncryptionConfig encrypts the storage at rest: its store's values and
// its index (see docs/encryption.md). An encrypted storage opens only with
// its key.
type EncryptionConfig struct {
	// Key is the storage's key: 32 bytes, base64 or hex. Use a placeholder
	// such as "{env.MEMORY_KEY}"; generate one with
	// head -c32 /dev/urandom | base64. A plaintext storage opened with a
	// key is encrypted at start.
	Key string `json:"key"`
	// OldKeys are previous keys, during a rotation: they still open what
	// they sealed while everything is sealed again with Key in the
	// background; the log says when they are no longer needed.
	OldKeys []string `json:"old_keys,omitempty"`
}

// ring reads the keys, placeholders expanded.
func (c *EncryptionConfig) ring() (*seal.Ring, error) {
	if c == nil {
		return nil, nil
	}
	repl := caddy.NewReplacer()
	old := make([]string, len(c.OldKeys))
	for i, k := range c.OldKeys {
		old[i] = repl.ReplaceKnown(k, "")
	}
	r, err := seal.NewRing(repl.ReplaceKnown(c.Key, ""), old)
	if err != nil {
		return nil, fmt.Errorf("encryption: %w", err)
	}
	return r, nil
}

// parseEncryption reads an encryption block:
//
//	encryption {
//	    key      <key or placeholder>
//	    old_keys <key or placeholder>...
//	}
func parseEncryption(d *caddyfile.Dispenser) (*EncryptionConfig, error) {
	if d.NextArg() {
		return nil, d.ArgErr()
	}
	c := new(EncryptionConfig)
	for nesting := d.Nesting(); d.NextBlock(nesting); {
		switch sub := d.Val(); sub {
		case "key":
			if c.Key != "" || !d.NextArg() {
				return nil, d.Errf("encryption: key takes one value, once")
			}
			c.Key = d.Val()
			if d.NextArg() {
				return nil, d.ArgErr()
			}
		case "old_keys":
			c.OldKeys = append(c.OldKeys, d.RemainingArgs()...)
			if len(c.OldKeys) == 0 {
				return nil, d.ArgErr()
			}
		default:
			return nil, d.Errf("unrecognized encryption subdirective '%s'", sub)
		}
	}
	if c.Key == "" {
		return nil, d.Errf("encryption needs a key (e.g. key {env.MEMORY_KEY}); generate one with: head -c32 /dev/urandom | base64")
	}
	return c, nil
}

// The keys each loaded configuration gives each storage. memory_api needs
// no key of its own when a memory handler of the same configuration has
// one for its storage, whichever of the two is provisioned first; two
// different keys for one storage are a configuration error. A
// configuration is told apart by its context's Done channel, which every
// module it provisions shares.
var configKeys = struct {
	sync.Mutex
	byConfig map[<-chan struct{}]map[string]*keyClaim
}{byConfig: map[<-chan struct{}]map[string]*keyClaim{}}

// keyClaim is what one configuration says of one storage's keys.
type keyClaim struct {
	keys *seal.Ring
	by   string // the directive that gave them
	// waiting are memory_api handlers without keys of their own, provisioned
	// before any handler that has the storage's keys.
	waiting []func(*seal.Ring) error
	// proxied: a memory handler of the configuration uses the storage.
	proxied bool
}

// claimKeys records that directive who gives dir the keys (nil: none) in
// the configuration of ctx, and returns the keys the storage has in that
// configuration: these, or those another handler gave.
func claimKeys(ctx caddy.Context, dir, who string, keys *seal.Ring) (*seal.Ring, []func(*seal.Ring) error, error) {
	configKeys.Lock()
	defer configKeys.Unlock()
	done := ctx.Done()
	claims := configKeys.byConfig[done]
	if claims == nil {
		claims = map[string]*keyClaim{}
		configKeys.byConfig[done] = claims
		go func() {
			<-done
			configKeys.Lock()
			delete(configKeys.byConfig, done)
			configKeys.Unlock()
		}()
	}
	c := claims[dir]
	if c == nil {
		c = &keyClaim{}
		claims[dir] = c
	}
	c.proxied = c.proxied || who == "memory"
	switch {
	case keys == nil:
		return c.keys, nil, nil
	case c.keys == nil:
		c.keys, c.by = keys, who
		waiting := c.waiting
		c.waiting = nil
		return keys, waiting, nil
	case c.keys.Current().ID() != keys.Current().ID():
		return nil, nil, fmt.Errorf("memory storage %s is given two different encryption keys in this configuration: "+
			"%s has key id %s, %s has key id %s; give them the same key (memory_api needs none of its own when a memory handler of the same storage has it)",
			dir, c.by, c.keys.Current().ID(), who, keys.Current().ID())
	}
	return c.keys, nil, nil
}

// waitForKeys makes attach run when a handler of ctx's configuration
// gives dir its keys.
func waitForKeys(ctx caddy.Context, dir string, attach func(*seal.Ring) error) {
	configKeys.Lock()
	defer configKeys.Unlock()
	if c := configKeys.byConfig[ctx.Done()][dir]; c != nil {
		c.waiting = append(c.waiting, attach)
	}
}

// attachWaiting runs what waited for dir's keys.
func attachWaiting(dir string, keys *seal.Ring, waiting []func(*seal.Ring) error) error {
	var errs []error
	for _, attach := range waiting {
		if err := attach(keys); err != nil {
			errs = append(errs, fmt.Errorf("memory_api of storage %s: %w", dir, err))
		}
	}
	return errors.Join(errs...)
}

// proxiedStorages are the storages of the memory handlers provisioned so
// far in ctx's configuration.
func proxiedStorages(ctx caddy.Context) []string {
	configKeys.Lock()
	defer configKeys.Unlock()
	var dirs []string
	for dir, c := range configKeys.byConfig[ctx.Done()] {
		if c.proxied {
			dirs = append(dirs, dir)
		}
	}
	return dirs
}
