// Command cadence runs waves of AI coding-agent work. See the README and
// docs/.
package main

import (
	"os"

	"github.com/cadence-run/cadence/internal/cli"
)

func main() {
	os.Exit(cli.Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}
