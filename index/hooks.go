package index

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/blevesearch/bleve/v2"
	bleveindex "github.com/blevesearch/bleve_index_api"

	"github.com/caddy-memory/memory/internal/seal"
)

// The index of an encrypted storage is sealed through Bleve's writer and
// reader hooks (bleve_index_api WriterHook and ReaderHook): every block of
// index data Bleve writes (stored and doc values, postings, the term
// dictionary, the shard's metadata) is sealed with the storage's key as it
// is written, and opened as it is read. The hooks are process-wide, and one
// Caddy may hold several storages, with different keys or none: each call
// names the file it is for, and the keys are found by the storage directory
// that file lies in. A file of a storage without keys is written in the
// clear. The hooks are chained in front of any the binary installed before
// (another module's): files that are not a storage's, and files sealed by
// another hook, are left to it.
//
// A file names the key it was sealed with (the hook's id, hookPrefix and
// the key's id), so files sealed with a previous key still open while that
// key is among the old keys; a rotation rebuilds such shards.

// hookPrefix starts the ids of this module's hooks.
const hookPrefix = "caddy-memory/"

var hooks struct {
	sync.RWMutex
	dirs map[string]hookKeys // index directory (absolute) → its keys
}

type hookKeys struct {
	keys *seal.Ring
	// clear: new files are written in the clear, sealed ones still open
	// (while a storage leaves encryption).
	clear bool
}

// Bleve's hook signatures.
type (
	writerHookFunc = func(context []byte) (string, func([]byte) []byte, error)
	readerHookFunc = func(id string, context []byte) (func([]byte) ([]byte, error), error)
)

// installHooks chains this module's hooks in front of whatever the binary
// had installed: files outside this module's storages, and files another
// hook sealed, are left to that one.
var installHooks = sync.OnceFunc(func() {
	bleveindex.WriterHook, bleveindex.ReaderHook = chainHooks(bleveindex.WriterHook, bleveindex.ReaderHook)
})

// chainHooks returns this module's hooks, which hand what is not theirs to
// prevWriter and prevReader (nil: none).
func chainHooks(prevWriter writerHookFunc, prevReader readerHookFunc) (writerHookFunc, readerHookFunc) {
	w := func(context []byte) (string, func([]byte) []byte, error) {
		if hk, dir := keysFor(string(context)); dir != "" {
			return sealer(hk)
		}
		if prevWriter != nil {
			return prevWriter(context)
		}
		return "", nil, nil
	}
	r := func(id string, context []byte) (func([]byte) ([]byte, error), error) {
		if !strings.HasPrefix(id, hookPrefix) && id != "" && prevReader != nil {
			return prevReader(id, context)
		}
		return readerHook(id, context)
	}
	return w, r
}

// UseKeys makes the index files under dir open with keys, and new ones
// sealed with the current key unless clear is set (nil keys: everything
// in the clear). Call it before Open; dir is Open's.
func UseKeys(dir string, keys *seal.Ring, clear bool) error {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	installHooks()
	hooks.Lock()
	defer hooks.Unlock()
	if hooks.dirs == nil {
		hooks.dirs = map[string]hookKeys{}
	}
	if keys == nil {
		delete(hooks.dirs, abs)
	} else {
		hooks.dirs[abs] = hookKeys{keys, clear}
	}
	return nil
}

// keysFor returns the keys of the storage whose index holds path, if any.
func keysFor(path string) (hookKeys, string) {
	hooks.RLock()
	defer hooks.RUnlock()
	for dir, k := range hooks.dirs {
		if strings.HasPrefix(path, dir+string(os.PathSeparator)) {
			return k, dir
		}
	}
	return hookKeys{}, ""
}

// sealer is what a file of a storage with keys hk is written through.
func sealer(hk hookKeys) (string, func([]byte) []byte, error) {
	if hk.keys == nil || hk.clear {
		return "", nil, nil
	}
	keys := hk.keys
	k := keys.Current()
	return hookPrefix + k.ID(), func(data []byte) []byte { return k.Seal(nil, data, nil) }, nil
}

func readerHook(id string, context []byte) (func([]byte) ([]byte, error), error) {
	if id == "" {
		return nil, nil // written in the clear
	}
	keyID, ours := strings.CutPrefix(id, hookPrefix)
	if !ours {
		return nil, fmt.Errorf("index file %s was sealed by another program's hook (%q)", context, id)
	}
	hk, dir := keysFor(string(context))
	if hk.keys == nil {
		return nil, fmt.Errorf("index file %s is sealed (key id %s) but its storage has no key", context, keyID)
	}
	k := hk.keys.Key(keyID)
	if k == nil {
		return nil, fmt.Errorf("index file %s is sealed with key id %s, which is not among the keys of %s", context, keyID, dir)
	}
	ring := seal.RingOf(k)
	return func(data []byte) ([]byte, error) { return ring.Open(nil, data, nil) }, nil
}

// Sealing of a shard's files against its storage's keys.
const (
	sealedAsWanted = iota // all with the current key (all in the clear without keys)
	sealedWithOld         // some with an old key still configured: rebuild it (rotation)
	sealedWrong           // some in the clear in an encrypted storage: start it again
)

// sealing tells how the files of a shard of x, whose hook ids are ids, are
// sealed. (Files sealed with a key that is not configured do not open at
// all, and the shard is started again.)
func (x *Index) sealing(ids map[string]struct{}) int {
	hk, _ := keysFor(filepath.Join(x.dir, "shard"))
	want := ""
	if hk.keys != nil && !hk.clear {
		want = hookPrefix + hk.keys.Current().ID()
	}
	st := sealedAsWanted
	for id := range ids {
		switch {
		case id == want:
		case hk.keys != nil && (id != "" || hk.clear):
			st = sealedWithOld // rebuilt in the background
		default:
			return sealedWrong // in the clear where it must be sealed
		}
	}
	return st
}

// writerIDs are the hook ids of the files of a shard ("" for those in the
// clear).
func writerIDs(idx bleve.Index) (map[string]struct{}, error) {
	c, ok := idx.(bleve.IndexWithCallbacks)
	if !ok {
		return nil, fmt.Errorf("a Bleve index of type %T cannot say how its files are sealed", idx)
	}
	return c.FileWriterIDsInUse()
}

// SealedWithOldKeys lists the shards some of whose files are sealed with a
// key other than the current one: after a rotation, they are rebuilt.
func (x *Index) SealedWithOldKeys() []int {
	x.closeMu.RLock()
	defer x.closeMu.RUnlock()
	if x.closed {
		return nil
	}
	var out []int
	for i, s := range x.shards {
		x.acquire(s)
		if s.idx != nil {
			ids, err := writerIDs(s.idx)
			if err == nil && x.sealing(ids) != sealedAsWanted {
				out = append(out, i)
			}
		}
		s.mu.RUnlock()
	}
	return out
}
