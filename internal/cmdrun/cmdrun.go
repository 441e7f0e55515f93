// Package cmdrun runs a `caddy memory` subcommand in the process, as the
// caddy binary would, for tests: what it printed and its error. The
// command is the one the app registers (importing it registers it).
package cmdrun

import (
	"bytes"
	"errors"
	"io"
	"os"

	caddycmd "github.com/caddyserver/caddy/v2/cmd"
	"github.com/spf13/cobra"
)

// Memory runs `caddy memory ARGS...` and returns what it printed on
// standard output and its error (a non-zero exit status is an error).
func Memory(args ...string) (string, error) {
	cmd, ok := caddycmd.Commands()["memory"]
	if !ok {
		return "", errors.New("caddy memory is not registered: import the memory app")
	}
	c := &cobra.Command{Use: "memory"}
	cmd.CobraFunc(c)
	var out bytes.Buffer
	stdout := os.Stdout
	r, w, _ := os.Pipe()
	os.Stdout = w
	done := make(chan struct{})
	go func() { io.Copy(&out, r); close(done) }()
	c.SetArgs(args)
	err := c.Execute()
	w.Close()
	<-done
	os.Stdout = stdout
	return out.String(), err
}
