package storage

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/caddy-memory/memory/internal/cmdrun"
	"github.com/caddy-memory/memory/internal/engine"
	"github.com/caddy-memory/memory/internal/harness"
	"github.com/caddy-memory/memory/store"
)

// damagedStoreSites is a Caddy with memory's site on localhost and another
// site, plain, that must keep answering whatever happens to the storage.
func damagedStoreSites(storage, storageSettings, upstream string) string {
	return harness.WithStorage(storage, storageSettings) + fmt.Sprintf(`http://localhost {
	memory
	handle /memory/* {
		memory_api
	}
	reverse_proxy %s
}
http://127.0.0.1 {
	respond "the other site" 200
}
`, upstream)
}

// seedOwners stores n memories spread over owners "sk-damage-<i>".
func seedOwners(t *testing.T, e *engine.Engine, owners, n int) {
	t.Helper()
	var puts []engine.OwnedPut
	for i := range n {
		o := i % owners
		puts = append(puts, engine.OwnedPut{Owner: e.OwnerID(fmt.Sprintf("sk-damage-%d", o)),
			Put: store.Put{Kind: "note", Content: fmt.Sprintf("Owner %d keeps zqitem%d in the blue box by the door.", o, i)}})
		if len(puts) == 500 || i == n-1 {
			if _, err := e.Remember(context.Background(), puts...); err != nil {
				t.Fatal(err)
			}
			puts = puts[:0]
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := e.Sync(ctx); err != nil {
		t.Fatal(err)
	}
}

// traffic is what users and operators send while the file is damaged.
type traffic struct {
	stop               chan struct{}
	wg                 sync.WaitGroup
	proxied, otherSite atomic.Int64
	proxyFailed        atomic.Int64 // a proxied request that did not reach the upstream's answer
	otherFailed        atomic.Int64
}

func startTraffic(owners int) *traffic {
	tr := &traffic{stop: make(chan struct{})}
	c := &http.Client{Timeout: 20 * time.Second}
	loop := func(fn func(i int)) {
		tr.wg.Add(1)
		go func() {
			defer tr.wg.Done()
			for i := 0; ; i++ {
				select {
				case <-tr.stop:
					return
				default:
				}
				fn(i)
			}
		}()
	}
	do := func(method, url, key string, body []byte) (int, []byte, error) {
		req, _ := http.NewRequest(method, url, bytes.NewReader(body))
		if key != "" {
			req.Header.Set("Authorization", "Bearer "+key)
		}
		if body != nil {
			req.Header.Set("Content-Type", "application/json")
		}
		resp, err := c.Do(req)
		if err != nil {
			return 0, nil, err
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		return resp.StatusCode, b, err
	}
	for w := range 2 {
		loop(func(i int) {
			key := fmt.Sprintf("sk-damage-%d", (i*2+w)%owners)
			status, _, err := do("POST", harness.CaddyAddr+"/v1/chat/completions", key,
				harness.ChatBody(false, harness.Msg("user", fmt.Sprintf("Where do I keep zqitem%d? I live in Oslo.", i))))
			tr.proxied.Add(1)
			if err != nil || status != http.StatusOK {
				tr.proxyFailed.Add(1)
			}
		})
	}
	loop(func(i int) {
		key := fmt.Sprintf("sk-damage-%d", i%owners)
		for _, p := range []string{"/memory/memories?limit=200", "/memory/export", "/memory/health", "/memory/stats", "/memory/ui/"} {
			_, _, _ = do("GET", harness.CaddyAddr+p, key, nil)
		}
		_, _, _ = do("GET", harness.AdminAddr+"/memory/stats", "", nil)
	})
	loop(func(int) {
		status, body, err := do("GET", "http://127.0.0.1:"+harness.Port+"/", "", nil)
		tr.otherSite.Add(1)
		if err != nil || status != http.StatusOK || string(body) != "the other site" {
			tr.otherFailed.Add(1)
		}
		time.Sleep(5 * time.Millisecond)
	})
	return tr
}

func (tr *traffic) end() { close(tr.stop); tr.wg.Wait() }

// damageBody overwrites n bytes at random places of the file past its two
// meta pages.
func damageBody(t *testing.T, path string, rng *rand.Rand, n int) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	st, _ := f.Stat()
	for range n {
		if _, err := f.WriteAt([]byte{byte(rng.IntN(256))}, 8192+rng.Int64N(st.Size()-8192)); err != nil {
			t.Fatal(err)
		}
	}
}

// runMemoryCommand runs `caddy memory <args>` as the caddy binary would,
// failing the test on an error.
func runMemoryCommand(t *testing.T, args ...string) string {
	t.Helper()
	out, err := cmdrun.Memory(args...)
	if err != nil {
		t.Fatalf("caddy memory %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return out
}

// TestDamagedStoreNeverTakesCaddyDown damages the body of a store of
// thousands of memories (plaintext and encrypted, several seeds and
// amounts) while proxied requests, the API, the dashboard and the admin
// endpoint use it: Caddy never exits, the other site always answers,
// every proxied request gets its answer, and /health says damaged once
// bbolt met the damage (passing requests through untouched from then on).
// Started again on the damaged file, Caddy and the other site start with
// the storage marked damaged and what to run; `caddy memory salvage` then
// brings back what reads, and the storage serves it.
func TestDamagedStoreNeverTakesCaddyDown(t *testing.T) {
	const owners, memories = 40, 6000
	for _, enc := range []bool{false, true} {
		for i, amount := range []int{300, 2000} {
			t.Run(fmt.Sprintf("encrypted=%v/bytes=%d", enc, amount), func(t *testing.T) {
				storage := t.TempDir()
				settings := ""
				if enc {
					settings = "encryption {\n\t\t\t\tkey " + strings.Repeat("ab", 32) + "\n\t\t\t}"
				}
				up := harness.NewFakeLLM(t)
				cfg := damagedStoreSites(storage, settings, up.Addr())
				tester := harness.StartCaddy(t, cfg)
				seedOwners(t, harness.EngineAt(storage), owners, memories)
				a := harness.APICall{T: t, Client: tester.Client}
				body := harness.ChatBody(false, harness.Msg("user", "What is in the blue box?"))
				passedThrough := func(when string) {
					t.Helper()
					if resp, _ := harness.Post(t, tester, "/v1/chat/completions", "sk-damage-2", body); resp.StatusCode != http.StatusOK {
						t.Fatalf("a proxied request %s: %d", when, resp.StatusCode)
					}
					if got := up.Last("/v1/chat/completions").Body; !bytes.Equal(got, body) {
						t.Errorf("%s, the request was not passed through untouched:\n%s", when, got)
					}
				}

				tr := startTraffic(owners)
				time.Sleep(300 * time.Millisecond)
				damageBody(t, filepath.Join(storage, "memory.db"), rand.New(rand.NewPCG(uint64(i), 41)), amount)
				time.Sleep(3 * time.Second)
				tr.end()
				if tr.otherFailed.Load() > 0 || tr.otherSite.Load() == 0 {
					t.Errorf("the other site failed %d of %d requests", tr.otherFailed.Load(), tr.otherSite.Load())
				}
				if tr.proxyFailed.Load() > 0 {
					t.Errorf("%d of %d proxied requests did not get the upstream's answer", tr.proxyFailed.Load(), tr.proxied.Load())
				}
				status, health := a.Do("GET", "/memory/health", "sk-damage-1", nil)
				damagedLive := status == http.StatusServiceUnavailable && health["status"] == "damaged"
				if damagedLive {
					passedThrough("with the storage found damaged while running")
				} else if status != http.StatusOK {
					t.Fatalf("/health after the damage: %d %v", status, health)
				}

				// Started again on the damaged file: Caddy and the other site
				// start; the storage, found damaged, says what to run.
				harness.UnloadCaddy(t)
				tester = harness.StartCaddy(t, cfg)
				resp, err := http.Get("http://127.0.0.1:" + harness.Port + "/")
				if err != nil || resp.StatusCode != http.StatusOK {
					t.Fatalf("the other site after a restart: %v", err)
				}
				resp.Body.Close()
				status, health = a.Do("GET", "/memory/health", "sk-damage-1", nil)
				damagedAtStart := status == http.StatusServiceUnavailable
				if damagedAtStart {
					if msg := harness.ErrCode(health); !strings.Contains(msg, "caddy memory salvage") {
						t.Errorf("/health of a storage damaged at start does not say what to run: %s", msg)
					}
					passedThrough("with the storage found damaged at start")
				}
				if !damagedLive && !damagedAtStart {
					t.Fatalf("%d damaged bytes were found neither while running nor at start", amount)
				}

				// Salvaged with Caddy stopped, the storage opens and serves
				// what was salvaged.
				harness.UnloadCaddy(t)
				cfgFile := filepath.Join(t.TempDir(), "Caddyfile")
				if err := os.WriteFile(cfgFile, []byte(cfg), 0o600); err != nil {
					t.Fatal(err)
				}
				out, err := cmdrun.Memory("salvage", "--config", cfgFile, "--adapter", "caddyfile", "--json")
				if err != nil && enc && strings.Contains(err.Error(), "its secret does not open") {
					// The damage hit the page holding the storage's sealed
					// secret, which every value is sealed under: nothing
					// can be read, and salvage says so and what to do.
					if !strings.Contains(err.Error(), "restore it from a backup") {
						t.Errorf("salvage of a storage whose secret is damaged: %v", err)
					}
					t.Logf("the damage hit the sealed secret: %v", err)
					return
				}
				if err != nil {
					t.Fatalf("caddy memory salvage: %v\n%s", err, out)
				}
				var rep store.SalvageReport
				if err := json.Unmarshal([]byte(out), &rep); err != nil {
					t.Fatalf("salvage answered %q: %v", out, err)
				}
				t.Logf("%d memories seeded, and turns learned; salvage: %d copied (%d rescued), %d lost, %d bad, %d damaged pages",
					memories, rep.Records, rep.Rescued, rep.Lost, rep.BadRecords, rep.DamagedPages)
				check := runMemoryCommand(t, "check", "--config", cfgFile, "--adapter", "caddyfile", "--records", "--json")
				if !strings.Contains(check, `"pages"`) || strings.Contains(check, `"problems"`) || strings.Contains(check, `"bad_records"`) {
					t.Errorf("the salvaged file does not check clean: %s", check)
				}
				tester = harness.StartCaddy(t, cfg)
				if status, health := a.Do("GET", "/memory/health", "sk-damage-1", nil); status != http.StatusOK || health["status"] != "ok" {
					t.Fatalf("/health after the salvage: %d %v", status, health)
				}
				// What is served is what was stored: an encrypted record is
				// authenticated, so exactly; a plaintext one has no checksum,
				// so a byte damaged inside its text is not seen (README).
				e := harness.EngineAt(storage)
				var after, seeded int
				served := ""
				for o := range owners {
					key := fmt.Sprintf("sk-damage-%d", o)
					_, err := e.Export(e.OwnerID(key), func(m *store.Memory) error {
						after++
						var owner, item int
						if _, err := fmt.Sscanf(m.Content, "Owner %d keeps zqitem%d in", &owner, &item); err != nil {
							return nil // a turn learned from the traffic
						}
						seeded++
						want := fmt.Sprintf("Owner %d keeps zqitem%d in the blue box by the door.", o, item)
						if enc && (m.Content != want || item%owners != o) {
							t.Errorf("owner %d was given back %q", o, m.Content)
						}
						if served == "" && m.Content == want {
							served = key
						}
						return nil
					})
					if err != nil {
						t.Fatal(err)
					}
				}
				// Pending turns salvaged are learned at start: more, not fewer.
				if int64(after) < rep.Records || seeded > memories {
					t.Errorf("the storage serves %d memories (%d of those seeded), salvage copied %d", after, seeded, rep.Records)
				}
				if served != "" {
					harness.Post(t, tester, "/v1/chat/completions", served, harness.ChatBody(false, harness.Msg("user", "What do I keep in the blue box by the door?")))
					if got := up.Last("/v1/chat/completions").Body; !bytes.Contains(got, []byte("keeps zqitem")) {
						t.Errorf("after the salvage, the owner's memories were not injected:\n%s", got)
					}
				}
			})
		}
	}
}

// TestMemoryCommandsExportImportCheck: with Caddy stopped, caddy memory
// exports a storage named by path, imports the file into another, whose
// stats and check then agree with the first.
func TestMemoryCommandsExportImportCheck(t *testing.T) {
	from, to := t.TempDir(), t.TempDir()
	up := harness.NewFakeLLM(t)
	harness.StartCaddy(t, damagedStoreSites(from, "", up.Addr()))
	seedOwners(t, harness.EngineAt(from), 5, 300)
	harness.UnloadCaddy(t)

	file := filepath.Join(t.TempDir(), "memories.jsonl")
	runMemoryCommand(t, "export", "--path", from, "--output", file)
	b, err := os.ReadFile(file)
	if err != nil || bytes.Count(b, []byte("\n")) != 300 {
		t.Fatalf("the export has %d lines, want 300 (%v)", bytes.Count(b, []byte("\n")), err)
	}
	out := runMemoryCommand(t, "import", "--path", to, "--input", file, "--json")
	if !strings.Contains(out, `"imported": 300`) {
		t.Fatalf("import answered %s", out)
	}
	var st struct {
		Memories int `json:"memories"`
	}
	if err := json.Unmarshal([]byte(runMemoryCommand(t, "stats", "--path", to, "--json")), &st); err != nil || st.Memories != 300 {
		t.Fatalf("the imported storage holds %d memories (%v)", st.Memories, err)
	}
	check := runMemoryCommand(t, "check", "--path", to, "--records", "--json")
	if !strings.Contains(check, `"records": 300`) || strings.Contains(check, "problems") {
		t.Errorf("the imported storage does not check clean: %s", check)
	}
}
