// Command troco is a payments platform for Brazil (card, PIX, boleto) and its own sandbox.
package main

import (
	"context"
	_ "embed"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"troco/server/cli"
)

//go:embed schema.sql
var schema string

//go:embed schema_postgres.sql
var schemaPostgres string

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "troco:", err)
		os.Exit(1)
	}
}

// run is the whole program, parameterised for tests.
func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	return cli.Run(ctx, cli.Env{Args: args, Getenv: getenv, Stdout: stdout, Stderr: stderr, Schema: schema, PostgresSchema: schemaPostgres})
}
