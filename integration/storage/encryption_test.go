package storage

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	zap "github.com/blevesearch/zapx/v17"
	"github.com/caddyserver/caddy/v2/caddytest"

	"github.com/caddy-memory/memory/internal/engine"
	"github.com/caddy-memory/memory/internal/harness"
	"github.com/caddy-memory/memory/internal/seal"
	"github.com/caddy-memory/memory/store"
)

// Keys for the tests, given to Caddy through the environment as an
// operator would ({env.MEMORY_TEST_KEY}).
var (
	keyA = base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{0xa1}, 32))
	keyB = base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{0xb2}, 32))
)

func keyID(t *testing.T, key string) string {
	t.Helper()
	k, err := seal.ParseKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return k.ID()
}

// encryptedConfig is a storage with an encryption block (enc, e.g.
// "key {env.MEMORY_TEST_KEY}"; "" for none), a memory handler and
// memory_api in admin mode.
func encryptedConfig(storage, upstream, enc string) string {
	return harness.WithStorage(storage, encryptionBlock(enc)) + fmt.Sprintf(`http://localhost {
	memory
	handle /memory/admin/* {
		memory_api {
			mode admin
			insecure_no_auth
		}
	}
	reverse_proxy %s
}
`, upstream)
}

// encryptionBlock is a storage's encryption block with enc, or nothing.
func encryptionBlock(enc string) string {
	if enc == "" {
		return ""
	}
	return "encryption {\n\t\t\t\t" + enc + "\n\t\t\t}"
}

// encryptedConfigAPIFirst is encryptedConfig as an admin mount usually
// is: memory_api in an earlier handle_path, so Caddy provisions it before
// the memory handler, which sits in a later handle.
func encryptedConfigAPIFirst(storage, upstream, enc string) string {
	return harness.WithStorage(storage, encryptionBlock(enc)) + fmt.Sprintf(`http://localhost {
	handle_path /memory/admin/* {
		memory_api {
			mode admin
			insecure_no_auth
		}
	}
	handle /v1/* {
		memory
		reverse_proxy %s
	}
}
`, upstream)
}

// checksums maps every file under dir to the hash of its bytes.
func checksums(t *testing.T, dir string) map[string][32]byte {
	t.Helper()
	sums := map[string][32]byte{}
	filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err == nil && !fi.IsDir() {
			b, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			sums[p] = sha256.Sum256(b)
		}
		return nil
	})
	return sums
}

func sameFiles(a, b map[string][32]byte) bool {
	if len(a) != len(b) {
		return false
	}
	for p, s := range a {
		if b[p] != s {
			return false
		}
	}
	return true
}

// filesWith lists the files under dir that hold any of words, with the words.
func filesWith(t *testing.T, dir string, words ...string) []string {
	t.Helper()
	var found []string
	filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err != nil || fi.IsDir() {
			return nil
		}
		b, _ := os.ReadFile(p)
		for _, w := range words {
			if bytes.Contains(b, []byte(w)) {
				found = append(found, filepath.Base(p)+": "+w)
			}
		}
		return nil
	})
	return found
}

// segmentsReadable opens every index segment under dir as the index hooks
// now are, and reports how many opened, how many did not, and whether one
// holds term in its content dictionary.
func segmentsReadable(t *testing.T, dir, term string) (opened, refused int, found bool) {
	t.Helper()
	filepath.Walk(filepath.Join(dir, "index"), func(p string, fi os.FileInfo, err error) error {
		if err != nil || fi.IsDir() || !strings.HasSuffix(p, ".zap") {
			return nil
		}
		seg, err := (&zap.ZapPlugin{}).Open(p)
		if err != nil {
			refused++
			return nil
		}
		defer seg.Close()
		opened++
		if d, err := seg.Dictionary("content"); err == nil {
			if ok, err := d.Contains([]byte(term)); err == nil && ok {
				found = true
			}
		}
		return nil
	})
	return opened, refused, found
}

// secretWords are said through the proxy and written through the API; the
// raw owner keys are credentials. None may reach a file of an encrypted
// storage.
var secretWords = []string{"zqcrimsonword", "zqlockerword", "zqapiword", "zqapikeyname", "sk-zqrawowner", "sk-zqotherowner"}

// fillEncrypted teaches the storage the secret words through proxied turns
// and API writes, and grows the owner past searching its records, so its
// memories are in the index too.
func fillEncrypted(t *testing.T, tester *caddytest.Tester, storage string) {
	t.Helper()
	harness.Post(t, tester, "/v1/chat/completions", "sk-zqrawowner", harness.ChatBody(false, harness.Msg("user", "Remember that my zqcrimsonword bike is in locker zqlockerword.")))
	harness.Post(t, tester, "/v1/chat/completions", "sk-zqotherowner", harness.ChatBody(true, harness.Msg("user", "I love zqcrimsonword tea.")))
	harness.Settle(t, storage, 2)
	a := harness.APICall{T: t, Client: tester.Client}
	if status, out := a.Do("POST", "/memory/admin/memories", "", map[string]any{"owner": "sk-zqrawowner", "content": "The zqapiword code is 7.", "key": "zqapikeyname"}); status != 201 && status != 200 {
		t.Fatalf("API write: %d %v", status, out)
	}
	e := harness.EngineAt(storage)
	var puts []engine.OwnedPut
	for i := range engine.DefaultLocalSearchMax {
		puts = append(puts, engine.OwnedPut{Owner: e.OwnerID("sk-zqrawowner"), Put: store.Put{Kind: "note", Content: fmt.Sprintf("User noted filler %d", i)}})
	}
	if _, err := e.Remember(context.Background(), puts...); err != nil {
		t.Fatal(err)
	}
	if err := e.Sync(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// recalls checks that searches and injection find the secret words.
func recalls(t *testing.T, tester *caddytest.Tester, up *harness.FakeLLM, storage string) {
	t.Helper()
	e := harness.EngineAt(storage)
	if got := harness.SearchFor(t, e, "sk-zqrawowner", "where is my zqcrimsonword bike"); !strings.Contains(got, "zqlockerword") {
		t.Errorf("search: %q", got)
	}
	if got := harness.SearchFor(t, e, "sk-zqrawowner", "zqapiword code"); !strings.Contains(got, "zqapiword") {
		t.Errorf("search of the API's memory: %q", got)
	}
	if got := harness.SearchFor(t, e, "sk-zqotherowner", "zqlockerword"); got != "" {
		t.Errorf("another owner finds %q", got)
	}
	harness.Post(t, tester, "/v1/chat/completions", "sk-zqrawowner", harness.ChatBody(false, harness.Msg("user", "Which locker holds my zqcrimsonword bike?")))
	if last := up.Last("/chat/completions"); !bytes.Contains(last.Body, []byte("zqlockerword")) {
		t.Errorf("the upstream was not given the memory: %s", last.Body)
	}
}

// encryptedStorage starts Caddy on a new storage encrypted with keyA and
// teaches it the secret words.
func encryptedStorage(t *testing.T) (string, *harness.FakeLLM, *caddytest.Tester) {
	t.Helper()
	storage := t.TempDir()
	t.Setenv("MEMORY_TEST_KEY", keyA)
	up := harness.NewFakeLLM(t)
	tester := harness.StartCaddy(t, encryptedConfig(storage, up.Addr(), "key {env.MEMORY_TEST_KEY}"))
	fillEncrypted(t, tester, storage)
	return storage, up, tester
}

// TestEncryptedStorageThroughCaddy: with a key, nothing said or written
// through Caddy, nor a raw owner key, is in any file of the storage, index
// segments included (which do not even open without the key), and recall
// works. Without the key, or with another, Caddy refuses to load the
// configuration, saying which and what to do, and the files are unchanged.
func TestEncryptedStorageThroughCaddy(t *testing.T) {
	storage, up, tester := encryptedStorage(t)
	recalls(t, tester, up, storage)
	if _, out := harness.AdminCall(t, "GET", "/memory/stats"); out["default"].(map[string]any)["encryption"].(map[string]any)["key_id"] != keyID(t, keyA) {
		t.Errorf("stats: %v", out)
	}
	harness.UnloadCaddy(t) // the engine closes, writing everything out

	if found := filesWith(t, storage, secretWords...); len(found) > 0 {
		t.Errorf("files of the encrypted storage hold: %v", found)
	}
	if opened, refused, _ := segmentsReadable(t, storage, "zqcrimsonword"); opened != 0 || refused == 0 {
		t.Errorf("without the key, %d index segments opened and %d did not (want none and some)", opened, refused)
	}

	before := checksums(t, storage)
	status, body := harness.LoadConfig(t, encryptedConfig(storage, up.Addr(), ""))
	if status == 200 || !strings.Contains(body, "is encrypted and no key is configured") || !strings.Contains(body, keyID(t, keyA)) ||
		!strings.Contains(body, "encryption { key") {
		t.Errorf("loading without the key: %d %s", status, body)
	}
	if !sameFiles(before, checksums(t, storage)) {
		t.Error("the refused start without a key changed files of the storage")
	}
	t.Setenv("MEMORY_TEST_KEY", keyB)
	status, body = harness.LoadConfig(t, encryptedConfig(storage, up.Addr(), "key {env.MEMORY_TEST_KEY}"))
	if status == 200 || !strings.Contains(body, "encrypted with another key") || !strings.Contains(body, keyID(t, keyA)) ||
		!strings.Contains(body, keyID(t, keyB)) || !strings.Contains(body, "old_keys") {
		t.Errorf("loading with the wrong key: %d %s", status, body)
	}
	if !sameFiles(before, checksums(t, storage)) {
		t.Error("the refused start with the wrong key changed files of the storage")
	}

	// With the right key again, everything is there.
	t.Setenv("MEMORY_TEST_KEY", keyA)
	tester = harness.StartCaddy(t, encryptedConfig(storage, up.Addr(), "key {env.MEMORY_TEST_KEY}"))
	recalls(t, tester, up, storage)
}

// waitRotated waits until the storage's rotation pass has finished.
func waitRotated(t *testing.T, storage string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for harness.EngineAt(storage).Encryption().Rotating {
		if time.Now().After(deadline) {
			t.Fatal("the rotation did not finish")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestKeyRotationThroughCaddy: the new key with the old one in old_keys
// reads everything and seals it all again in the background; then the old
// key is no longer needed, and no longer opens the storage.
func TestKeyRotationThroughCaddy(t *testing.T) {
	storage, up, _ := encryptedStorage(t)
	harness.UnloadCaddy(t)

	t.Setenv("MEMORY_TEST_KEY", keyB)
	t.Setenv("MEMORY_TEST_OLD_KEY", keyA)
	tester := harness.StartCaddy(t, encryptedConfig(storage, up.Addr(), "key {env.MEMORY_TEST_KEY}\n\t\t\told_keys {env.MEMORY_TEST_OLD_KEY}"))
	recalls(t, tester, up, storage)
	waitRotated(t, storage)
	if enc := harness.EngineAt(storage).Encryption(); enc.KeyID != keyID(t, keyB) || enc.Rotating {
		t.Errorf("after the rotation: %+v", enc)
	}
	harness.UnloadCaddy(t)
	if opened, _, found := segmentsReadable(t, storage, "zqcrimsonword"); opened != 0 || found {
		t.Errorf("index segments opened without keys after the rotation: %d", opened)
	}

	tester = harness.StartCaddy(t, encryptedConfig(storage, up.Addr(), "key {env.MEMORY_TEST_KEY}"))
	recalls(t, tester, up, storage)
	if n := len(harness.EngineAt(storage).Encryption().KeyID); n == 0 {
		t.Error("not encrypted after the rotation")
	}
	harness.UnloadCaddy(t)
	if found := filesWith(t, storage, secretWords...); len(found) > 0 {
		t.Errorf("files after the rotation hold: %v", found)
	}
	t.Setenv("MEMORY_TEST_KEY", keyA)
	if status, body := harness.LoadConfig(t, encryptedConfig(storage, up.Addr(), "key {env.MEMORY_TEST_KEY}")); status == 200 || !strings.Contains(body, "encrypted with another key") {
		t.Errorf("the old key alone after the rotation: %d %s", status, body)
	}
}

// TestEncryptAndDecryptOnAdminEndpoint: a plaintext storage is encrypted
// by POST /memory/encrypt once a reload gave it a key, decrypted by POST
// /memory/decrypt, and encrypted at start when it opens with a key.
func TestEncryptAndDecryptOnAdminEndpoint(t *testing.T) {
	storage := t.TempDir()
	t.Setenv("MEMORY_TEST_KEY", keyA)
	up := harness.NewFakeLLM(t)
	tester := harness.StartCaddy(t, encryptedConfig(storage, up.Addr(), ""))
	fillEncrypted(t, tester, storage)
	db := filepath.Join(storage, "memory.db")
	if len(filesWith(t, db, "zqcrimsonword")) == 0 {
		t.Fatal("the plaintext store does not hold the words: the scans below prove nothing")
	}
	if status, out := harness.AdminCall(t, "POST", "/memory/encrypt?storage=default"); status != http.StatusConflict {
		t.Errorf("encrypt without a configured key: %d %v", status, out)
	}

	harness.Reload(t, tester, encryptedConfig(storage, up.Addr(), "key {env.MEMORY_TEST_KEY}"))
	status, out := harness.AdminCall(t, "POST", "/memory/encrypt")
	if res, _ := out["default"].(map[string]any); status != 200 || res["encryption"].(map[string]any)["key_id"] != keyID(t, keyA) {
		t.Fatalf("encrypt: %d %v", status, out)
	}
	recalls(t, tester, up, storage)
	if found := filesWith(t, db, secretWords...); len(found) > 0 {
		t.Errorf("the store file after POST /memory/encrypt holds: %v", found)
	}
	if _, _, found := segmentsReadable(t, storage, "zqcrimsonword"); !found {
		t.Error("the sealed index does not hold the owner's words with the key")
	}

	status, out = harness.AdminCall(t, "POST", "/memory/decrypt")
	if res, _ := out["default"].(map[string]any); status != 200 || res["encryption"].(map[string]any)["encrypted"] != false {
		t.Fatalf("decrypt: %d %v", status, out)
	}
	recalls(t, tester, up, storage)
	harness.Reload(t, tester, encryptedConfig(storage, up.Addr(), ""))
	harness.UnloadCaddy(t)
	if len(filesWith(t, db, "zqcrimsonword")) == 0 {
		t.Error("the decrypted store does not hold the words in the clear")
	}
	if opened, refused, found := segmentsReadable(t, storage, "zqcrimsonword"); refused > 0 || !found {
		t.Errorf("after decrypt, without keys: %d segments opened, %d did not, word found %v (want all, none, true)", opened, refused, found)
	}

	// Opened with a key, the plaintext storage is encrypted at start.
	tester = harness.StartCaddy(t, encryptedConfig(storage, up.Addr(), "key {env.MEMORY_TEST_KEY}"))
	waitIndexed(t, storage)
	recalls(t, tester, up, storage)
	harness.UnloadCaddy(t)
	if found := filesWith(t, storage, secretWords...); len(found) > 0 {
		t.Errorf("files after encrypting at start hold: %v", found)
	}
	if opened, refused, _ := segmentsReadable(t, storage, "zqcrimsonword"); opened > 0 || refused == 0 {
		t.Errorf("after encrypting at start, without keys: %d segments opened (in the clear), %d did not", opened, refused)
	}
}

// waitIndexed waits until the storage's index has caught up (shards
// rebuilt after a conversion).
func waitIndexed(t *testing.T, storage string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := harness.EngineAt(storage).Sync(ctx); err != nil {
		t.Fatal(err)
	}
}

// TestEncryptionWhateverTheRouteOrder: the key belongs to the storage, so
// an admin mount that Caddy provisions before the memory handler (an
// earlier handle_path, the proxy in a later handle) changes nothing: the
// store holds no plaintext, and a wrong key is refused whatever the order.
// Before the memory app, memory_api opened such a storage first, without
// the key, and everything was written in the clear.
func TestEncryptionWhateverTheRouteOrder(t *testing.T) {
	storage := t.TempDir()
	t.Setenv("MEMORY_TEST_KEY", keyA)
	up := harness.NewFakeLLM(t)
	tester := harness.StartCaddy(t, encryptedConfigAPIFirst(storage, up.Addr(), "key {env.MEMORY_TEST_KEY}"))
	harness.Post(t, tester, "/v1/chat/completions", "sk-zqrawowner", harness.ChatBody(false, harness.Msg("user", "Remember that my zqcrimsonword bike is in locker zqlockerword.")))
	harness.Settle(t, storage, 1)
	a := harness.APICall{T: t, Client: tester.Client}
	if status, out := a.Do("POST", "/memory/admin/memories", "", map[string]any{"owner": "sk-zqrawowner", "content": "The zqapiword code is 7.", "key": "zqapikeyname"}); status != 201 && status != 200 {
		t.Fatalf("API write: %d %v", status, out)
	}
	if got := harness.SearchFor(t, harness.EngineAt(storage), "sk-zqrawowner", "where is my zqcrimsonword bike"); !strings.Contains(got, "zqlockerword") {
		t.Errorf("search: %q", got)
	}
	harness.UnloadCaddy(t)
	if found := filesWith(t, storage, secretWords...); len(found) > 0 {
		t.Errorf("files of the encrypted storage hold: %v", found)
	}
	for name, cfg := range map[string]func(string, string, string) string{"memory_api first": encryptedConfigAPIFirst, "memory first": encryptedConfig} {
		t.Setenv("MEMORY_TEST_KEY", keyB)
		if status, body := harness.LoadConfig(t, cfg(storage, up.Addr(), "key {env.MEMORY_TEST_KEY}")); status == 200 || !strings.Contains(body, "encrypted with another key") {
			t.Errorf("%s, the wrong key: %d %s", name, status, body)
		}
		if status, body := harness.LoadConfig(t, cfg(storage, up.Addr(), "")); status == 200 || !strings.Contains(body, "is encrypted and no key is configured") {
			t.Errorf("%s, no key: %d %s", name, status, body)
		}
	}
}
