package main

import (
	"fmt"
	"os"
	"path/filepath"
)

// The evaluation data is not part of the repository: LoCoMo and PrefEval
// are licensed CC BY-NC 4.0. Where they come from, and the flags that
// point at them, for a user who runs memeval without them.
const whereTheDataIs = `memeval needs evaluation data, which this repository does not ship (CC BY-NC 4.0):

  LoCoMo (long conversations, recall@k), the default run:
    https://github.com/snap-research/LoCoMo, file data/locomo10.json
    go run ./cmd/memeval -data path/to/locomo10.json

  PrefEval (stated preferences and the questions that need them):
    https://github.com/amazon-science/PrefEval; memeval reads a folder with
    items.jsonl (one item a line: id, topic, preference, question,
    persona_turns) and distractors.json (a list of chats, each a list of
    user turns), built from its benchmark_dataset as docs/recall.md says
    go run ./cmd/memeval -prefeval path/to/folder

  Knowledge updates (shipped): go run ./cmd/memeval -updates cmd/memeval/testdata/updates.json
  Journeys (shipped): go run ./cmd/memeval -journeys cmd/memeval/testdata/journeys.json

The project's own figures use development splits kept beside the
repository, in ../shared/evals (docs/recall.md).`

// needData exits with whereTheDataIs when path (a file, or with dir a
// folder holding files) is missing.
func needData(path string, files ...string) {
	for _, f := range append([]string{""}, files...) {
		if _, err := os.Stat(filepath.Join(path, f)); err != nil {
			fmt.Fprintf(os.Stderr, "memeval: %v\n\n%s\n", err, whereTheDataIs)
			os.Exit(2)
		}
	}
}
