// Package docstest_test checks that the examples in README.md and docs/*.md
// work as written: every Caddyfile block is as `caddy fmt` writes it, and
// every shell block runs, pasted into bash, against a Caddy built from this
// checkout on Caddyfile.example, each curl getting a 2xx answer.
//
// Blocks are fenced with an info string. ```caddy and ```caddyfile blocks
// must be unchanged by Caddy's formatter (caddyfile.Format). ```sh, ```bash
// and ```shell blocks run; the blocks of one file run in order in one bash
// process, so a block can use what an earlier one set (the id of a memory
// it created). A shell block marked `no-run` (```sh no-run) is only parsed
// (bash -n); the docs mark so the commands the test cannot run inside
// itself: starting Caddy (the test starts its own, below), the whole test
// suite, the benchmarks and the recall evaluations (minutes each, the
// latter on data sets not in the repository).
//
// The Caddy each file runs against: Caddyfile.example, with the admin mount
// of the README's Management API snippet added to its site (its password
// hash from `caddy hash-password`, the password the docs use), an empty
// storage, MEMORY_UPSTREAM pointing at a fake model that answers OpenAI,
// Anthropic and Ollama chat requests, and OPENAI_API_KEY set to a test key.
package docstest_test

import (
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
)

// formatted is a Caddyfile's text as Caddy's formatter writes it: what
// `caddy run` compares its input with before it warns "Caddyfile input is
// not formatted".
func formatted(text string) string {
	return string(caddyfile.Format([]byte(text)))
}

// TestCaddyfileBlocksAreFormatted: `caddy run` warns that its input is not
// formatted when it is not as `caddy fmt` writes it, so every Caddyfile the
// docs show, Caddyfile.example and the syntax summaries with <placeholders>
// included, is already so.
func TestCaddyfileBlocksAreFormatted(t *testing.T) {
	root, files := docs(t)
	example, err := os.ReadFile(root + "/Caddyfile.example")
	if err != nil {
		t.Fatal(err)
	}
	if got := string(example); formatted(got) != got {
		t.Errorf("Caddyfile.example is not as caddy fmt writes it; caddy fmt gives:\n%s", formatted(got))
	}
	n := 0
	for _, file := range files {
		for _, b := range blocks(t, root, file) {
			if !b.caddyfile() {
				continue
			}
			n++
			text := strings.Join(b.lines, "\n") + "\n"
			if want := formatted(text); want != text {
				t.Errorf("%s is not as caddy fmt writes it; caddy fmt gives:\n%s", b, want)
			}
		}
	}
	if n == 0 {
		t.Fatal("no ```caddy block found: is the test reading the docs?")
	}
}

// TestShellBlocksAreTagged: a block that runs curl is tagged as shell, so
// the test below runs it; flags other than no-run are typos.
func TestShellBlocksAreTagged(t *testing.T) {
	root, files := docs(t)
	for _, file := range files {
		for _, b := range blocks(t, root, file) {
			if b.shell() {
				for _, f := range b.flags {
					if f != "no-run" {
						t.Errorf("%s: unknown flag %q (the one flag is no-run)", b, f)
					}
				}
				continue
			}
			for _, l := range b.lines {
				if f := strings.Fields(l); len(f) > 0 && (f[0] == "curl" || f[0] == "$") {
					t.Errorf("%s runs %q: tag it ```sh so that it is tested", b, strings.TrimSpace(l))
					break
				}
			}
		}
	}
}

// TestCurlIsQuiet: every curl a shell block runs says -sS, so a reader
// who pipes its answer into jq (or a file) sees the answer and curl's
// errors, not its progress meter.
func TestCurlIsQuiet(t *testing.T) {
	root, files := docs(t)
	n := 0
	for _, file := range files {
		for _, b := range blocks(t, root, file) {
			if !b.shell() {
				continue
			}
			for i, l := range b.lines {
				f := strings.Fields(l)
				for j, w := range f {
					if w != "curl" && !strings.HasSuffix(w, "$(curl") { // a command, or id=$(curl ...)
						continue
					}
					n++
					if j+1 >= len(f) || f[j+1] != "-sS" {
						t.Errorf("%s, line %d: %q: write curl -sS (no progress meter when piped, errors still shown)", b, b.line+i, strings.TrimSpace(l))
					}
				}
			}
		}
	}
	if n == 0 {
		t.Fatal("no curl found in the docs' shell blocks: is the test reading them?")
	}
}

// TestShellBlocksRun runs each file's shell blocks, in order, against a
// Caddy of its own, and checks the harness itself fails on the mistakes it
// is here to catch.
func TestShellBlocksRun(t *testing.T) {
	for _, tool := range []string{"bash", "curl", "jq"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("the docs' examples need %s (apt-get install -y %s)", tool, tool)
		}
	}
	root, files := docs(t)
	config, err := exampleWithAdmin(root)
	if err != nil {
		t.Fatal(err)
	}
	if formatted(config) != config {
		t.Errorf("Caddyfile.example with the README's admin mount is not as caddy fmt writes it (Caddy warns); caddy fmt gives:\n%s", formatted(config))
	}
	bin := buildCaddy(t, root)
	upstream := fakeUpstream(t)
	caddyEnv := []string{
		"MEMORY_UPSTREAM=" + upstream.URL,
		"MEMORY_ADMIN_HASH=" + hashPassword(t, bin, adminPassword),
	}
	// run runs blocks against the Caddy the (sub)test started, on port.
	run := func(t *testing.T, port string, blocks []block) error {
		dir := t.TempDir()
		out, err := runBlocks(dir, []string{
			"PATH=" + os.Getenv("PATH"),
			"HOME=" + dir,
			"LANG=C.UTF-8",
			"OPENAI_API_KEY=sk-doctest-openai",
			"ANTHROPIC_API_KEY=sk-ant-doctest",
		}, onPort(blocks, port))
		if err == nil {
			t.Logf("bash printed:\n%s", out)
		}
		return err
	}

	for _, file := range files {
		var runnable []block
		for _, b := range blocks(t, root, file) {
			if !b.shell() {
				continue
			}
			if err := syntaxCheck(b); err != nil {
				t.Error(err)
			} else if !b.has("no-run") {
				runnable = append(runnable, b)
			}
		}
		if len(runnable) == 0 {
			continue
		}
		t.Run(file, func(t *testing.T) {
			port := runCaddy(t, bin, config, caddyEnv)
			if err := run(t, port, runnable); err != nil {
				t.Error(err)
			}
		})
	}

	// The mistakes issue 33 found in docs/api.md: credentials kept in a
	// shell variable, and an unquoted & in a URL. Each must fail, at its
	// line. (A keyless request from this machine is the example's local
	// user: the broken ones go to the admin mount, which wants a password.)
	t.Run("the harness fails on broken examples", func(t *testing.T) {
		port := runCaddy(t, bin, config, caddyEnv)
		cases := []struct {
			name  string
			lines []string
			at    string
		}{
			{"credentials in a variable", []string{
				`S='-u "admin:secret" localhost:8080/memory/admin'`,
				`curl $S/stats`,
			}, "broken.md:3,"},
			{"unquoted &", []string{
				`A='-u admin:secret localhost:8080/memory/admin'`,
				`curl $A/memories?owner=sk-alice&kind=preference`,
				`echo done`,
			}, "broken.md:3,"},
			{"not 2xx", []string{
				`curl "http://localhost:8080/memory/admin/stats"`,
			}, "broken.md:2,"},
		}
		for _, c := range cases {
			err := run(t, port, []block{{file: "broken.md", n: 1, line: 2, lang: "sh", lines: c.lines}})
			if err == nil || !strings.Contains(err.Error(), c.at) {
				t.Errorf("%s: want a failure at %s, got %v", c.name, c.at, err)
			} else {
				t.Logf("%s: %v", c.name, err)
			}
		}
	})
}

func docs(t *testing.T) (root string, files []string) {
	t.Helper()
	root, err := repoRoot()
	if err != nil {
		t.Fatal(err)
	}
	files, err = docFiles(root)
	if err != nil {
		t.Fatal(err)
	}
	return root, files
}

func blocks(t *testing.T, root, file string) []block {
	t.Helper()
	b, err := readBlocks(root, file)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
