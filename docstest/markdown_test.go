package docstest_test

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// block is one fenced code block of a Markdown file.
type block struct {
	file  string   // relative to the repository, e.g. docs/api.md
	n     int      // 1-based among the file's fenced blocks
	line  int      // the line of its first content line
	lang  string   // the info string's first word: sh, caddy, ...
	flags []string // the info string's other words: no-run
	lines []string
}

func (b block) String() string {
	return fmt.Sprintf("%s:%d (block %d, ```%s)", b.file, b.line-1, b.n, strings.Join(append([]string{b.lang}, b.flags...), " "))
}

func (b block) has(flag string) bool {
	for _, f := range b.flags {
		if f == flag {
			return true
		}
	}
	return false
}

func (b block) shell() bool {
	switch b.lang {
	case "sh", "bash", "shell":
		return true
	}
	return false
}

func (b block) caddyfile() bool { return b.lang == "caddy" || b.lang == "caddyfile" }

// docFiles are the Markdown files whose blocks the tests check: the README
// and every page under docs/, in that order.
func docFiles(root string) ([]string, error) {
	pages, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		return nil, err
	}
	sort.Strings(pages)
	files := []string{"README.md"}
	for _, p := range pages {
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return nil, err
		}
		files = append(files, filepath.ToSlash(rel))
	}
	return files, nil
}

// readBlocks returns the fenced blocks of a Markdown file. Fences are
// backtick fences at the start of a line, as every page here writes them.
func readBlocks(root, file string) ([]block, error) {
	f, err := os.Open(filepath.Join(root, file))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var (
		blocks []block
		cur    *block
		n      int
	)
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		n++
		text := sc.Text()
		if !strings.HasPrefix(text, "```") {
			if cur != nil {
				cur.lines = append(cur.lines, text)
			}
			continue
		}
		if cur != nil {
			blocks = append(blocks, *cur)
			cur = nil
			continue
		}
		info := strings.Fields(strings.TrimPrefix(text, "```"))
		cur = &block{file: file, n: len(blocks) + 1, line: n + 1}
		if len(info) > 0 {
			cur.lang, cur.flags = info[0], info[1:]
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if cur != nil {
		return nil, fmt.Errorf("%s: the block opened at line %d is never closed", file, cur.line-1)
	}
	return blocks, nil
}

// repoRoot is the directory holding go.mod, above the test's directory.
func repoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("no go.mod above the test's directory")
		}
		dir = parent
	}
}
