package main

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig"

	"github.com/caddy-memory/memory/internal/freeport"
)

// Several instances on one database (-instances N with -database): the
// bench's process runs the first, as in every A/B run, and starts the
// others as processes of their own (this binary with -instance), each with
// its replica and a bare server beside its memory server. The load goes
// round-robin over the instances, bare's over their bare servers; a turn
// told through the first is looked for on the second.

// serverConfig is one instance's configuration: a bare reverse_proxy and
// a memory server in front of upstream, on their ports, its storage where
// says.
func serverConfig(where, extra string, bare, mem int, upstream string) ([]byte, error) {
	cfg, _, err := caddyconfig.GetAdapter("caddyfile").Adapt([]byte(fmt.Sprintf(`{
	admin off
	persist_config off
	log {
		level ERROR
	}
	memory {
		storage default {
			%s
			# A new store's first consolidation pass comes a minute after
			# start, then once a day: over a few minutes of traffic it would
			# be a once-a-day cost measured as if it were every request's.
			consolidate_every off
			%s
		}
	}
}
http://127.0.0.1:%d {
	reverse_proxy %s
}
http://127.0.0.1:%d {
	memory {
		diagnostics
	}
	reverse_proxy %s {
		header_up X-Bench memory
	}
}
`, where, extra, bare, upstream, mem, upstream)), nil)
	return cfg, err
}

// instance is another Caddy process on the same database.
type instance struct {
	cmd             *exec.Cmd
	bare, mem, find int // its ports: bare, memory, and the search the probes ask
}

// startInstances starts n more instances on database, each its replica
// under dir, and returns once each has built its replica and index.
func startInstances(n int, database, extra, upstream, dir string) ([]*instance, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	var out []*instance
	for i := range n {
		in := &instance{}
		ports, err := freeport.Loopback(3)
		if err != nil {
			return out, err
		}
		in.bare, in.mem, in.find = ports[0], ports[1], ports[2]
		replica := filepath.Join(dir, fmt.Sprintf("replica-%d", i+2))
		cfg, err := serverConfig("url "+database+"\n\t\t\treplica "+replica, extra, in.bare, in.mem, upstream)
		if err != nil {
			return out, err
		}
		file := replica + ".json"
		if err := os.WriteFile(file, cfg, 0o600); err != nil {
			return out, err
		}
		in.cmd = exec.Command(self, "-instance", file, "-instance-find", strconv.Itoa(in.find))
		in.cmd.Stderr = os.Stderr
		stdout, err := in.cmd.StdoutPipe()
		if err != nil {
			return out, err
		}
		// Its stdin is how it knows this process is gone.
		if _, err := in.cmd.StdinPipe(); err != nil {
			return out, err
		}
		if err := in.cmd.Start(); err != nil {
			return out, err
		}
		out = append(out, in)
		start := time.Now()
		line, err := bufio.NewReader(stdout).ReadString('\n')
		if err != nil || strings.TrimSpace(line) != "ready" {
			return out, fmt.Errorf("instance %d did not start: %q %v", i+2, line, err)
		}
		fmt.Fprintf(os.Stderr, "instance %d ready in %s (replica built from the database)\n", i+2, time.Since(start).Round(time.Second))
	}
	return out, nil
}

func stopInstances(ins []*instance) {
	for _, in := range ins {
		in.cmd.Process.Signal(os.Interrupt)
	}
	for _, in := range ins {
		in.cmd.Wait()
	}
}

// serveInstance is -instance: run the configuration in file, answer the
// probes' searches on port find, say "ready" once everything the database
// holds is searchable here, and stop when stdin closes or on an interrupt.
func serveInstance(file string, find int) error {
	cfg, err := os.ReadFile(file)
	if err != nil {
		return err
	}
	if err := caddy.Load(cfg, true); err != nil {
		return err
	}
	defer caddy.Stop()
	e, err := memoryEngine()
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	err = e.Sync(ctx)
	cancel()
	if err != nil {
		return err
	}
	look := engineFinder(e)
	srv := &http.Server{Addr: fmt.Sprintf("127.0.0.1:%d", find), Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ok, err := look(r.Context(), r.URL.Query().Get("key"), r.URL.Query().Get("word"))
		if err == nil && ok {
			fmt.Fprint(w, "yes")
			return
		}
		fmt.Fprint(w, "no")
	})}
	go srv.ListenAndServe()
	defer srv.Close()
	fmt.Println("ready")
	stop := make(chan struct{})
	go func() {
		buf := make([]byte, 1)
		os.Stdin.Read(buf) // EOF when the bench's process ends
		close(stop)
	}()
	interrupted := make(chan os.Signal, 1)
	signal.Notify(interrupted, os.Interrupt)
	select {
	case <-stop:
	case <-interrupted:
	}
	return nil
}

// instancesCPU is the CPU seconds the other instances have used, from
// /proc (Linux; 0 elsewhere).
func instancesCPU(ins []*instance) float64 {
	total := 0.0
	for _, in := range ins {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", in.cmd.Process.Pid))
		if err != nil {
			continue
		}
		// Past the command's name (in parentheses), utime and stime are
		// the 12th and 13th fields, in clock ticks (100 a second).
		s := string(b)
		f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
		if len(f) > 12 {
			u, _ := strconv.ParseFloat(f[11], 64)
			st, _ := strconv.ParseFloat(f[12], 64)
			total += (u + st) / 100
		}
	}
	return total
}
