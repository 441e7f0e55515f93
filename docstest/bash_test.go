//go:build unix

package docstest_test

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
)

// preamble runs before a file's blocks. It changes nothing a block says; it
// makes bash stop at the first failure and say where:
//
//   - set -e and pipefail: a failing command, also inside $(...) or a pipe,
//     stops the run;
//   - curl is wrapped: the real curl runs with the block's own arguments
//     (plus -sS and a status line on stderr), and anything but a 2xx answer
//     is a failure;
//   - a command left running in the background fails the run: that is what
//     an unquoted & in a URL does (curl backgrounded, the rest of the query
//     lost), and nothing in the docs means to do it.
const preamble = `set -eo pipefail
curl() {
	local err rc=0 code
	err=$(mktemp)
	command curl -sS -w '%{stderr}\n%{http_code}\n' "$@" 2>"$err" || rc=$?
	code=$(tail -n 1 "$err")
	if [[ $code =~ ^[0-9]{3}$ ]]; then sed '$d' "$err" >&2; else cat "$err" >&2; code=none; fi
	rm -f "$err"
	if ((rc != 0)); then echo "doctest: curl exited with status $rc (HTTP $code)" >&2; return "$rc"; fi
	if [[ $code != 2?? ]]; then echo "doctest: curl got HTTP $code, not 2xx" >&2; return 1; fi
}
trap 'echo "doctest-failed $LINENO $?" >&2' ERR
trap 'if [[ -n "$(jobs -p)" ]]; then echo "doctest-background $__doctest_prev" >&2; exit 97; fi; __doctest_prev=$LINENO' DEBUG
`

// script is the bash program running blocks in order, and for each of its
// lines the block and Markdown line it comes from (nil: the harness's).
type script struct {
	text  string
	from  []*block // by script line, 1-based
	mdLns []int
}

func newScript(blocks []block) script {
	var s script
	var b strings.Builder
	add := func(line string, from *block, md int) {
		b.WriteString(line + "\n")
		s.from = append(s.from, from)
		s.mdLns = append(s.mdLns, md)
	}
	s.from, s.mdLns = []*block{nil}, []int{0} // line 0 does not exist
	for _, l := range strings.Split(strings.TrimSuffix(preamble, "\n"), "\n") {
		add(l, nil, 0)
	}
	for i := range blocks {
		add("# "+blocks[i].String(), nil, 0)
		for j, l := range blocks[i].lines {
			add(l, &blocks[i], blocks[i].line+j)
		}
	}
	add(": end of the blocks", nil, 0) // lets the DEBUG trap see a job the last line left behind
	s.text = b.String()
	return s
}

// where names the block and Markdown line of a script line.
func (s script) where(line int) string {
	if line <= 0 || line >= len(s.from) || s.from[line] == nil {
		return fmt.Sprintf("line %d of the harness's preamble", line)
	}
	b := s.from[line]
	return fmt.Sprintf("%s:%d, in %s: %s", b.file, s.mdLns[line], b, strings.TrimSpace(b.lines[s.mdLns[line]-b.line]))
}

var failedRE = regexp.MustCompile(`(?m)^doctest-(failed|background) (\d+)`)

// runBlocks runs the blocks, in order, in one bash process in dir, with
// the given environment. It returns what bash printed, and nil or an error
// naming the block and line that failed.
func runBlocks(dir string, env []string, blocks []block) (string, error) {
	s := newScript(blocks)
	path := filepath.Join(dir, ".doctest.sh")
	if err := os.WriteFile(path, []byte(s.text), 0o600); err != nil {
		return "", err
	}
	defer os.Remove(path)
	var out bytes.Buffer
	cmd := exec.Command("bash", path)
	cmd.Dir, cmd.Env, cmd.Stdout, cmd.Stderr = dir, env, &out, &out
	err := cmd.Run()
	if err == nil {
		return out.String(), nil
	}
	what := "failed"
	if m := failedRE.FindStringSubmatch(out.String()); m != nil {
		n, _ := strconv.Atoi(m[2])
		what = s.where(n)
		if m[1] == "background" {
			what += ": left a command running in the background (an unquoted & ?)"
		}
	}
	return out.String(), fmt.Errorf("%s (%v); bash printed:\n%s", what, err, tail(out.String(), 60))
}

// syntaxCheck parses a block with bash -n, without running it.
func syntaxCheck(b block) error {
	cmd := exec.Command("bash", "-n")
	cmd.Stdin = strings.NewReader(strings.Join(b.lines, "\n") + "\n")
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("%s: bash -n: %v\n%s", b, err, out)
	}
	return nil
}

func tail(s string, lines int) string {
	l := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(l) > lines {
		l = append([]string{"..."}, l[len(l)-lines:]...)
	}
	return strings.Join(l, "\n")
}
