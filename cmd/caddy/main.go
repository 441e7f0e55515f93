// Command caddy is Caddy's standard command with the memory module built in,
// for running this repository without xcaddy: go run ./cmd/caddy run --config Caddyfile.example
package main

import (
	caddycmd "github.com/caddyserver/caddy/v2/cmd"

	_ "github.com/caddyserver/caddy/v2/modules/standard"

	_ "github.com/caddy-memory/memory"
)

func main() {
	caddycmd.Main()
}
