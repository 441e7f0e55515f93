package main

import (
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestMain runs memeval's main when the test binary is started as memeval
// (by TestWithoutDataSaysWhereItIs).
func TestMain(m *testing.M) {
	if os.Getenv("MEMEVAL_RUN_MAIN") == "1" {
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// TestWithoutDataSaysWhereItIs: run without its data (as from a fresh
// clone), memeval says where LoCoMo and PrefEval come from and which flags
// point at them, and fails.
func TestWithoutDataSaysWhereItIs(t *testing.T) {
	for _, args := range [][]string{{}, {"-prefeval", t.TempDir()}} {
		cmd := exec.Command(os.Args[0], args...)
		cmd.Env = append(os.Environ(), "MEMEVAL_RUN_MAIN=1")
		cmd.Dir = t.TempDir() // no ../shared here
		out, err := cmd.CombinedOutput()
		var exit *exec.ExitError
		if !errors.As(err, &exit) || exit.ExitCode() != 2 {
			t.Errorf("memeval %v without data: %v, want exit status 2", args, err)
		}
		for _, want := range []string{"snap-research/LoCoMo", "-data", "amazon-science/PrefEval", "-prefeval"} {
			if !strings.Contains(string(out), want) {
				t.Errorf("memeval %v without data does not say %q:\n%s", args, want, out)
			}
		}
	}
}
