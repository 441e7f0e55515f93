package docstest_test

import (
	"errors"
	"fmt"
	"go/build"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// rootName is how docs/layout.md's import list names the root package.
const rootName = "(root)"

// TestLayoutIsTheImportGraph: the list of imports between the module's
// packages in docs/layout.md (its fenced "imports" block) is the import
// graph of the code, tests aside, both ways: every package with code has
// its line, every import of one package of the module by another is on
// it, and nothing on it is not in the code. When it fails, move the code
// or the doc: the message says which arrow is where.
func TestLayoutIsTheImportGraph(t *testing.T) {
	root, err := repoRoot()
	if err != nil {
		t.Fatal(err)
	}
	code, err := importGraph(root)
	if err != nil {
		t.Fatal(err)
	}
	doc, err := documentedGraph(root, "docs/layout.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, pkg := range slices.Sorted(maps.Keys(code)) {
		drawn, ok := doc[pkg]
		if !ok {
			t.Errorf("package %s is not in docs/layout.md: add the line %q to its imports block", pkg, line(pkg, code[pkg]))
			continue
		}
		for _, to := range code[pkg] {
			if !slices.Contains(drawn, to) {
				t.Errorf("%s imports %s, and docs/layout.md does not say so: add the arrow (or remove the import)", pkg, to)
			}
		}
		for _, to := range drawn {
			if !slices.Contains(code[pkg], to) {
				t.Errorf("docs/layout.md says %s imports %s, and it does not: remove the arrow", pkg, to)
			}
		}
	}
	for pkg := range doc {
		if _, ok := code[pkg]; !ok {
			t.Errorf("docs/layout.md lists %s, which is no package with code (tests aside): remove its line", pkg)
		}
	}
}

func line(pkg string, to []string) string {
	return strings.TrimSpace(pkg + " -> " + strings.Join(to, " "))
}

// importGraph reads the module at dir: for each package with code (tests
// aside, for this platform's build), the module's packages it imports,
// all named relative to the module (rootName for its root).
func importGraph(dir string) (map[string][]string, error) {
	module, err := modulePath(filepath.Join(dir, "go.mod"))
	if err != nil {
		return nil, err
	}
	name := func(importPath string) (string, bool) {
		if importPath == module {
			return rootName, true
		}
		rel, ok := strings.CutPrefix(importPath, module+"/")
		return rel, ok
	}
	graph := map[string][]string{}
	err = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return err
		}
		if path != dir && (strings.HasPrefix(d.Name(), ".") || strings.HasPrefix(d.Name(), "_") || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		pkg, err := build.ImportDir(path, 0)
		if _, none := errors.AsType[*build.NoGoError](err); none {
			return nil // no Go here
		}
		if err != nil {
			return err
		}
		if len(pkg.GoFiles)+len(pkg.CgoFiles) == 0 {
			return nil // tests alone
		}
		rel, err := filepath.Rel(dir, path)
		if err != nil {
			return err
		}
		from := rootName
		if rel != "." {
			from = filepath.ToSlash(rel)
		}
		graph[from] = []string{}
		for _, imp := range pkg.Imports {
			if to, ok := name(imp); ok {
				graph[from] = append(graph[from], to)
			}
		}
		slices.Sort(graph[from])
		return nil
	})
	return graph, err
}

// modulePath reads the module line of a go.mod.
func modulePath(gomod string) (string, error) {
	data, err := os.ReadFile(gomod)
	if err != nil {
		return "", err
	}
	for l := range strings.Lines(string(data)) {
		if m, ok := strings.CutPrefix(strings.TrimSpace(l), "module "); ok {
			return strings.Trim(strings.TrimSpace(m), `"`), nil
		}
	}
	return "", fmt.Errorf("%s has no module line", gomod)
}

// documentedGraph reads the fenced block of a Markdown file (relative to
// root) whose info string is "imports": a line a package, "pkg ->
// imported imported ...", with # comments.
func documentedGraph(root, file string) (map[string][]string, error) {
	blocks, err := readBlocks(root, file)
	if err != nil {
		return nil, err
	}
	for _, b := range blocks {
		if b.lang != "imports" {
			continue
		}
		graph := map[string][]string{}
		for i, l := range b.lines {
			if l, _, _ = strings.Cut(l, "#"); strings.TrimSpace(l) == "" {
				continue
			}
			from, to, ok := strings.Cut(l, "->")
			if from = strings.TrimSpace(from); !ok || from == "" {
				return nil, fmt.Errorf(`%s:%d: a line of the imports block is "package -> imported ...", not %q`, file, b.line+i, l)
			}
			if _, dup := graph[from]; dup {
				return nil, fmt.Errorf("%s:%d: %s has a line already in the imports block", file, b.line+i, from)
			}
			graph[from] = strings.Fields(to)
		}
		return graph, nil
	}
	return nil, fmt.Errorf("%s has no ```imports block", file)
}
