package app

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/caddyserver/caddy/v2"
	caddycmd "github.com/caddyserver/caddy/v2/cmd"
	"github.com/spf13/cobra"

	"github.com/caddy-memory/memory/internal/api"
	"github.com/caddy-memory/memory/internal/engine"
	"github.com/caddy-memory/memory/internal/seal"
	"github.com/caddy-memory/memory/store"
)

// command.go is `caddy memory`: what an operator does to a storage with
// Caddy stopped, or without the HTTP API: check its file, salvage a
// damaged one, export, import and count its memories. A storage is named
// as in the configuration (--config, the storage's name), or by its
// directory (--path); an encrypted one opens with the key its
// configuration gives.

func init() {
	caddycmd.RegisterCommand(caddycmd.Command{
		Name:  "memory",
		Short: "Checks, salvages, exports, imports and counts a memory storage",
		Long: `
Works on a memory storage's files directly, as named in the configuration
(--config, --storage <name>; default: the storage "default") or by its
directory (--path). check and salvage need the storage not in use: stop
Caddy first (export and stats too, for a file storage).

  caddy memory check   [--records]       what is damaged (exit status 3 if anything)
  caddy memory salvage                   copy every record that still reads into a new file
  caddy memory export  [--owner-id <id>] [--output <file>|-]
  caddy memory import  --input <file>|- [--owner <key>|--owner-id <id>]
                                         (JSON lines, as export writes them)
  caddy memory stats
`,
		CobraFunc: func(cmd *cobra.Command) {
			sub := func(use, short string, fn func(caddycmd.Flags) (int, error), more func(*cobra.Command)) {
				c := &cobra.Command{Use: use, Short: short, RunE: caddycmd.WrapCommandFuncForCobra(fn)}
				c.Flags().StringP("config", "c", "", "Configuration file naming the storage (default: ./Caddyfile if there is one)")
				c.Flags().StringP("adapter", "a", "", "Name of the adapter of the configuration file")
				c.Flags().String("storage", DefaultName, "Name of the storage in the configuration")
				c.Flags().String("path", "", "Directory of the storage (instead of its name)")
				c.Flags().Bool("json", false, "Print the result as JSON")
				if more != nil {
					more(c)
				}
				cmd.AddCommand(c)
			}
			sub("check", "Checks a memory storage's file; exit status 3 if it is damaged", cmdCheck, func(c *cobra.Command) {
				c.Flags().Bool("records", false, "Also read every memory record (and count those that do not read)")
			})
			sub("salvage", "Copies every record of a damaged storage that still reads into a new file, and rebuilds its index", cmdSalvage, nil)
			sub("export", "Writes a storage's memories as JSON lines, as GET /export does", cmdExport, func(c *cobra.Command) {
				c.Flags().String("owner-id", "", "Only this owner's memories (its id, as the dashboard shows it)")
				c.Flags().StringP("output", "o", "-", "File to write, - for stdout")
			})
			sub("import", "Reads JSON lines, as export writes them, into a storage", cmdImport, func(c *cobra.Command) {
				c.Flags().StringP("input", "i", "", "File to read, - for stdin (required)")
				c.Flags().String("owner", "", "Store every line for this owner, named by the value the proxy sees (e.g. the API key)")
				c.Flags().String("owner-id", "", "Store every line for this owner id (as the dashboard shows it)")
			})
			sub("stats", "Counts what a storage holds", cmdStats, nil)
		},
	})
}

// target is a storage as a command names it.
type target struct {
	name string
	dir  string
	keys *seal.Ring
}

func (t target) file() string { return filepath.Join(t.dir, "memory.db") }

// targetOf resolves the storage the flags name.
func targetOf(fl caddycmd.Flags) (target, error) {
	t := target{name: fl.String("storage")}
	var sc *StorageConfig
	if cfgFile := fl.String("config"); cfgFile != "" || fl.String("path") == "" {
		raw, _, _, err := caddycmd.LoadConfig(cfgFile, fl.String("adapter"))
		if err != nil {
			return t, err
		}
		var cfg struct {
			Apps struct {
				Memory App `json:"memory"`
			} `json:"apps"`
		}
		if len(raw) > 0 {
			if err := json.Unmarshal(raw, &cfg); err != nil {
				return t, fmt.Errorf("reading the configuration: %w", err)
			}
		}
		sc = cfg.Apps.Memory.Storages[t.name]
		if sc == nil && (t.name != DefaultName || len(cfg.Apps.Memory.Storages) > 0) && fl.String("path") == "" {
			return t, fmt.Errorf("the configuration has no memory storage named %q", t.name)
		}
	}
	if sc == nil {
		sc = &StorageConfig{}
	}
	if sc.URL != "" && fl.String("path") == "" {
		return t, errors.New("this storage is a PostgreSQL database: each instance's replica is made from it again when missing " +
			"(remove its replica directory and restart), and its memories are exported with GET /export of memory_api or PostgreSQL's own tools")
	}
	if p := fl.String("path"); p != "" {
		sc.Path = p
	}
	loc, err := sc.location(t.name)
	if err != nil {
		return t, err
	}
	t.dir = loc.dir
	if t.keys, err = sc.Encryption.ring(); err != nil {
		return t, err
	}
	return t, nil
}

// printResult prints v as JSON, or its text.
func printResult(fl caddycmd.Flags, v any, text string) {
	if fl.Bool("json") {
		enc := json.NewEncoder(os.Stdout)
		enc.SetIndent("", "  ")
		_ = enc.Encode(v)
		return
	}
	fmt.Print(text)
}

func cmdCheck(fl caddycmd.Flags) (int, error) {
	t, err := targetOf(fl)
	if err != nil {
		return caddy.ExitCodeFailedStartup, err
	}
	r, err := store.Check(context.Background(), t.file(), store.CheckOptions{Records: fl.Bool("records"), Keys: t.keys})
	if err != nil {
		return caddy.ExitCodeFailedStartup, err
	}
	text := fmt.Sprintf("%s: %d pages, %d buckets, %s checked in %v\n", r.Path, r.Pages, r.Buckets, count(int(r.Records), "memory record"), r.Took.Round(time.Millisecond))
	for _, p := range r.Problems {
		text += "damaged: " + p + "\n"
	}
	if r.More > 0 {
		text += fmt.Sprintf("damaged: and %d more\n", r.More)
	}
	if r.BadRecords > 0 {
		text += fmt.Sprintf("%s not read; passed over as the storage is read\n", count(int(r.BadRecords), "memory record"))
	}
	if !r.OK() {
		text += fmt.Sprintf("to copy what still reads into a new file: caddy memory salvage --path %s\n", t.dir)
	} else {
		text += "no damage found\n"
	}
	printResult(fl, r, text)
	if !r.OK() {
		return caddy.ExitCodeFailedQuit, nil
	}
	return caddy.ExitCodeSuccess, nil
}

func cmdSalvage(fl caddycmd.Flags) (int, error) {
	t, err := targetOf(fl)
	if err != nil {
		return caddy.ExitCodeFailedStartup, err
	}
	r, err := store.Salvage(context.Background(), t.file(), t.keys)
	if errors.Is(err, store.ErrLocked) {
		return caddy.ExitCodeFailedStartup, err // as the other commands answer a storage in use
	}
	if err != nil {
		return caddy.ExitCodeFailedQuit, err
	}
	// The index is derived from the store: made anew from the salvaged
	// records, so that the storage opens as usual.
	index := filepath.Join(t.dir, "index")
	if err := os.RemoveAll(index); err != nil {
		return caddy.ExitCodeFailedQuit, fmt.Errorf("removing the old index %s (remove it by hand: it is rebuilt at the next start): %w", index, err)
	}
	e, err := openForCommand(t)
	if err != nil {
		return caddy.ExitCodeFailedQuit, fmt.Errorf("the storage was salvaged, yet does not open: %w", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Hour)
	defer cancel()
	st, err := e.Stats()
	if err == nil {
		err = e.WaitIndexed(ctx, st.LastSeq)
	}
	err = errors.Join(err, e.Close(ctx))
	if err != nil {
		return caddy.ExitCodeFailedQuit, fmt.Errorf("the storage was salvaged; rebuilding its index failed (it is rebuilt at the next start): %w", err)
	}
	text := fmt.Sprintf("salvaged %s in %v: %s of %s copied (%d from pages a damaged page cut off)\n",
		r.Path, r.Took.Round(time.Millisecond), count(int(r.Records), "memory record"), count(int(r.Owners), "owner"), r.Rescued)
	if r.Lost > 0 || r.BadRecords > 0 {
		text += fmt.Sprintf("lost: %d memories the file lists could not be read, %d records did not decode\n", r.Lost, r.BadRecords)
	}
	text += fmt.Sprintf("%d damaged pages; the damaged file is kept at %s\nthe index was rebuilt: start Caddy\n", r.DamagedPages, r.DamagedAt)
	printResult(fl, r, text)
	return caddy.ExitCodeSuccess, nil
}

// openForCommand opens the storage's engine with nothing running but
// what keeps it whole.
func openForCommand(t target) (*engine.Engine, error) {
	return engine.Open(engine.Config{Dir: t.dir, Keys: t.keys, Logger: caddy.Log})
}

func cmdExport(fl caddycmd.Flags) (int, error) {
	t, err := targetOf(fl)
	if err != nil {
		return caddy.ExitCodeFailedStartup, err
	}
	var out io.Writer = os.Stdout
	if o := fl.String("output"); o != "-" && o != "" {
		f, err := os.OpenFile(o, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
		if err != nil {
			return caddy.ExitCodeFailedStartup, err
		}
		defer f.Close()
		out = f
	}
	e, err := openForCommand(t)
	if err != nil {
		return caddy.ExitCodeFailedStartup, err
	}
	defer e.Close(context.Background())
	bw := bufio.NewWriterSize(out, 64<<10)
	enc := json.NewEncoder(bw)
	enc.SetEscapeHTML(false)
	skipped, err := e.Export(fl.String("owner-id"), func(m *store.Memory) error { return enc.Encode(m) })
	if err != nil {
		return caddy.ExitCodeFailedQuit, err
	}
	if err := bw.Flush(); err != nil {
		return caddy.ExitCodeFailedQuit, err
	}
	if skipped > 0 {
		fmt.Fprintf(os.Stderr, "%s could not be read and %s not in the export; 'caddy memory salvage' keeps the rest and drops them\n",
			count(skipped, "damaged record"), map[bool]string{true: "is", false: "are"}[skipped == 1])
	}
	return caddy.ExitCodeSuccess, nil
}

func cmdStats(fl caddycmd.Flags) (int, error) {
	t, err := targetOf(fl)
	if err != nil {
		return caddy.ExitCodeFailedStartup, err
	}
	e, err := openForCommand(t)
	if err != nil {
		return caddy.ExitCodeFailedStartup, err
	}
	defer e.Close(context.Background())
	st, err := e.Stats()
	if err != nil {
		return caddy.ExitCodeFailedQuit, err
	}
	b, _ := json.MarshalIndent(st, "", "  ")
	printResult(fl, st, string(b)+"\n")
	return caddy.ExitCodeSuccess, nil
}

func cmdImport(fl caddycmd.Flags) (int, error) {
	t, err := targetOf(fl)
	if err != nil {
		return caddy.ExitCodeFailedStartup, err
	}
	var in io.Reader = os.Stdin
	switch name := fl.String("input"); name {
	case "":
		return caddy.ExitCodeFailedStartup, errors.New("--input is required (a file, or - for stdin)")
	case "-":
	default:
		f, err := os.Open(name)
		if err != nil {
			return caddy.ExitCodeFailedStartup, err
		}
		defer f.Close()
		in = f
	}
	owner, ownerID := strings.TrimSpace(fl.String("owner")), fl.String("owner-id")
	if owner != "" && ownerID != "" {
		return caddy.ExitCodeFailedStartup, errors.New("name the owner by --owner or by --owner-id, not both")
	}
	e, err := openForCommand(t)
	if err != nil {
		return caddy.ExitCodeFailedStartup, err
	}
	defer e.Close(context.Background())
	if owner != "" {
		ownerID = e.OwnerID(owner)
	}
	res, err := api.Import(context.Background(), e, in, true, ownerID)
	if err != nil {
		return caddy.ExitCodeFailedQuit, err
	}
	text := fmt.Sprintf("imported %d, replaced %d, renumbered %d, failed %d\n", res.Imported, res.Replaced, res.Renumbered, res.Failed)
	for _, e := range res.Errors {
		text += fmt.Sprintf("line %d: %s\n", e.Line, e.Message)
	}
	printResult(fl, res, text)
	if res.Failed > 0 {
		return caddy.ExitCodeFailedQuit, nil
	}
	return caddy.ExitCodeSuccess, nil
}

// count is n and a noun, plural but for one: "1 memory record", "2 owners".
func count(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
