package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/caddy-memory/memory/store"
)

// opencheck.go measures what the check of the store file at open
// (store.CheckTimeout, store/check.go) costs: the same storage opened with
// the check and without it (its bound set to zero: the walk stops at its
// first 4,096 pairs), each open in a process of its own (so its peak RSS is
// the open's alone), with the file's pages read into the page cache first
// (warm) or evicted first, as after a reboot (cold), in alternating order
// over rounds.
//
//	go run ./bench -open-check DIR [-open-runs 3] [-open-check-timeout 2m]

// openResult is one open, as the child process reports it.
type openResult struct {
	OpenSec    float64 `json:"open_sec"`
	CheckSec   float64 `json:"check_sec"`
	Pages      int64   `json:"pages"`
	Buckets    int64   `json:"buckets"`
	Incomplete bool    `json:"incomplete"`
	Checked    bool    `json:"checked"`
	// PeakRSSMiB is the child's peak RSS, filled in by the parent.
	PeakRSSMiB float64 `json:"-"`
}

// openOne opens the store in dir once, with the check bounded by timeout
// (0: no check), closes it and prints the result as JSON.
func openOne(dir string, timeout time.Duration) error {
	store.CheckTimeout = timeout
	start := time.Now()
	db, err := store.OpenWith(filepath.Join(dir, "memory.db"), store.Options{LockTimeout: 10 * time.Second})
	if err != nil {
		return err
	}
	r := openResult{OpenSec: time.Since(start).Seconds()}
	if c := db.Checked(); c != nil {
		r.CheckSec, r.Pages, r.Buckets, r.Incomplete, r.Checked = c.Took.Seconds(), c.Pages, c.Buckets, c.Incomplete, timeout > 0
	}
	if err := db.Close(); err != nil {
		return err
	}
	return json.NewEncoder(os.Stdout).Encode(r)
}

// runOpenCheck opens the storage in dir runs times in each of four ways
// (with and without the check, warm and cold) and prints each way's runs.
func runOpenCheck(dir string, runs int, timeout time.Duration) error {
	if _, err := os.Stat(filepath.Join(dir, "memory.db")); err != nil {
		return err
	}
	type way struct {
		name  string
		check bool
		cold  bool
	}
	ways := []way{{"warm, checked", true, false}, {"warm, unchecked", false, false}, {"cold, checked", true, true}, {"cold, unchecked", false, true}}
	got := map[string][]openResult{}
	for round := range runs {
		order := ways
		if round%2 == 1 { // alternate, so neither goes first each time
			order = []way{ways[1], ways[0], ways[3], ways[2]}
		}
		for _, w := range order {
			prepare := warmCache
			if w.cold {
				prepare = dropCache
			}
			if err := prepare(dir); err != nil {
				return err
			}
			t := time.Duration(0)
			if w.check {
				t = timeout
			}
			cmd := exec.Command(os.Args[0], "-open-one", dir, "-open-check-timeout", t.String())
			cmd.Stderr = os.Stderr
			out, err := cmd.Output()
			if err != nil {
				return fmt.Errorf("%s open: %w", w.name, err)
			}
			var r openResult
			if err := json.Unmarshal(out, &r); err != nil {
				return err
			}
			r.PeakRSSMiB = float64(maxRSS(cmd.ProcessState)) / (1 << 20)
			got[w.name] = append(got[w.name], r)
		}
		fmt.Fprintf(os.Stderr, "round %d/%d done\n", round+1, runs)
	}
	st, _ := os.Stat(filepath.Join(dir, "memory.db"))
	fmt.Printf("%s: memory.db %d MiB; check bound %v; %d rounds, each open in a process of its own\n", dir, st.Size()>>20, timeout, runs)
	fmt.Printf("%-16s %-28s %-28s %-22s %s\n", "", "open (s), in run order", "of it the check (s)", "peak RSS (MiB)", "pages checked")
	for _, w := range ways {
		rs := got[w.name]
		var open, check, rss, pages []string
		for _, r := range rs {
			open = append(open, fmt.Sprintf("%.2f", r.OpenSec))
			rss = append(rss, fmt.Sprintf("%.0f", r.PeakRSSMiB))
			if r.Checked {
				check = append(check, fmt.Sprintf("%.2f", r.CheckSec))
				p := fmt.Sprintf("%d", r.Pages)
				if r.Incomplete {
					p += " (stopped at the bound)"
				}
				pages = append(pages, p)
			}
		}
		fmt.Printf("%-16s %-28s %-28s %-22s %s\n", w.name, strings.Join(open, " "), strings.Join(check, " "), strings.Join(rss, " "), strings.Join(pages, ", "))
	}
	return nil
}

// warmCache reads the store file whole, so its pages are in the page
// cache.
func warmCache(dir string) error {
	f, err := os.Open(filepath.Join(dir, "memory.db"))
	if err != nil {
		return err
	}
	defer f.Close()
	_, err = io.Copy(io.Discard, f)
	return err
}
