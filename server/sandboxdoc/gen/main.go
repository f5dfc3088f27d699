// Command gen writes docs/TESTING.md from the sandbox tables (run by go generate).
package main

import (
	"fmt"
	"os"

	"troco/server/sandboxdoc"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: gen <path of TESTING.md>")
		os.Exit(2)
	}
	if err := os.WriteFile(os.Args[1], []byte(sandboxdoc.Render()), 0o644); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
