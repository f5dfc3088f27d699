package main

import (
	"database/sql"
	"fmt"
	"net/url"
	"os"
	"path/filepath"

	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" database/sql driver
)

// runDatabase returns the --db of run i: "" (SQLite in the run's data dir) or, with -pg, the
// URL of a fresh PostgreSQL database, and the function that drops it afterwards.
func runDatabase(cfg config, dir string, i int) (string, func(), error) {
	if cfg.pg == "" {
		return "", func() {}, nil
	}
	admin, err := sql.Open("pgx", cfg.pg)
	if err != nil {
		return "", nil, err
	}
	name := fmt.Sprintf("troco_load_%d_%d", os.Getpid(), i+1)
	if _, err := admin.Exec("CREATE DATABASE " + name); err != nil {
		admin.Close()
		return "", nil, fmt.Errorf("-pg: create database: %w", err)
	}
	u, err := url.Parse(cfg.pg)
	if err != nil {
		admin.Close()
		return "", nil, err
	}
	u.Path = "/" + name
	drop := func() {
		if _, err := admin.Exec("DROP DATABASE IF EXISTS " + name + " WITH (FORCE)"); err != nil {
			fmt.Fprintf(os.Stderr, "drop database %s: %v\n", name, err)
		}
		admin.Close()
	}
	return u.String(), drop, nil
}

// copyDataDir gives a replica the first server's data dir files (master key, CA and
// certificate), so that it opens the same database and the clients trust it.
func copyDataDir(from, to string) error {
	if err := os.MkdirAll(to, 0o700); err != nil {
		return err
	}
	entries, err := os.ReadDir(from)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if !e.Type().IsRegular() {
			continue
		}
		b, err := os.ReadFile(filepath.Join(from, e.Name()))
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(to, e.Name()), b, 0o600); err != nil {
			return err
		}
	}
	return nil
}
