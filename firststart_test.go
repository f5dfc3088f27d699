package main

import (
	"bytes"
	"context"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/matryer/is"

	"troco/db"
)

// serveChild runs the real program (`troco serve` in a child process) until its stdout matches
// want or it exits; it returns stdout, stderr and whether it exited (with its error).
func serveChild(t *testing.T, want *regexp.Regexp, args ...string) (stdout, stderr string, exited bool, exitErr error) {
	t.Helper()
	cmd := exec.Command(os.Args[0], append([]string{"serve"}, args...)...)
	cmd.Env = append(os.Environ(), crashChildEnv+"=1")
	var out, errb syncBuffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	deadline := time.After(30 * time.Second)
	for {
		select {
		case err := <-done:
			return out.String(), errb.String(), true, err
		case <-deadline:
			_ = cmd.Process.Kill()
			t.Fatalf("serve neither printed %v nor exited:\n%s\n%s", want, out.String(), errb.String())
		case <-time.After(20 * time.Millisecond):
		}
		if want.MatchString(out.String()) {
			_ = cmd.Process.Signal(syscall.SIGTERM)
			select {
			case err := <-done:
				if err != nil {
					t.Errorf("serve did not exit cleanly on SIGTERM: %v\n%s", err, errb.String())
				}
			case <-time.After(30 * time.Second):
				_ = cmd.Process.Kill()
				t.Error("serve did not exit on SIGTERM")
			}
			return out.String(), errb.String(), false, nil
		}
	}
}

// A first start on a busy port fails before it writes anything (no database, so no organization
// whose key nobody saw); the next start on a free port prints the key; a start after one that
// died between creating the key and showing it says how to get a key.
func TestFirstStartNeverLosesTheKey(t *testing.T) {
	is := is.New(t)
	dir := t.TempDir()
	dbPath := filepath.Join(dir, "troco.db")
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	is.NoErr(err)
	defer busy.Close()

	_, stderr, exited, err := serveChild(t, regexp.MustCompile(`never`), "--addr", busy.Addr().String(), "--data-dir", dir)
	is.True(exited)
	is.True(err != nil)                                     // the start failed
	is.True(strings.Contains(stderr, busy.Addr().String())) // naming the busy address
	is.True(strings.Contains(stderr, "--addr"))             // and what to do
	_, statErr := os.Stat(dbPath)
	is.True(os.IsNotExist(statErr)) // nothing created: no organization, no unshown key

	// A busy --http-addr fails the same way, before anything is written.
	_, stderr, exited, _ = serveChild(t, regexp.MustCompile(`never`), "--addr", freeAddr(t), "--http-addr", busy.Addr().String(), "--data-dir", dir)
	is.True(exited)
	is.True(strings.Contains(stderr, "--http-addr"))
	_, statErr = os.Stat(dbPath)
	is.True(os.IsNotExist(statErr))

	out, _, exited, _ := serveChild(t, bootKeyLine, "--addr", freeAddr(t), "--data-dir", dir)
	is.True(!exited)
	m := bootKeyLine.FindStringSubmatch(out)
	is.True(m != nil) // the key, on the first start that works
	org := bootOrgLine.FindStringSubmatch(out)[1]
	is.True(strings.Contains(out, `"Minha Loja"`))
	is.True(!strings.Contains(out, "never shown"))

	// Simulate a first start killed after its bootstrap transaction and before its banner: the
	// mark it leaves makes every later start say how to get a key, until one is created.
	d, err := db.Open(context.Background(), dbPath, db.Options{Schema: schema})
	is.NoErr(err)
	is.NoErr(d.Write(context.Background(), func(tx *db.Tx) error { return tx.PutSetting("bootstrap_key_unshown", "key_lost") }))
	is.NoErr(d.Close())
	hint := regexp.MustCompile(`troco key create --org (org_\w+) --env test --db (\S+)`)
	out, _, exited, _ = serveChild(t, hint, "--addr", freeAddr(t), "--data-dir", dir)
	is.True(!exited)
	h := hint.FindStringSubmatch(out)
	is.Equal(h[1], org)
	is.Equal(h[2], dbPath)
	is.True(!bootKeyLine.MatchString(out)) // no second bootstrap key

	// Following the hint gives a test key, and the hint goes away.
	var kout bytes.Buffer
	is.NoErr(run(context.Background(), []string{"key", "create", "--org", org, "--env", "test", "--db", dbPath}, envFrom(nil), &kout, &bytes.Buffer{}))
	is.True(strings.Contains(kout.String(), "ch_test_"))
	out, _, _, _ = serveChild(t, regexp.MustCompile(`listening on`), "--addr", freeAddr(t), "--data-dir", dir)
	is.True(!strings.Contains(out, "never shown"))
}

// `troco version`, and -h on every command and group, answer without an error.
func TestVersionAndHelp(t *testing.T) {
	is := is.New(t)
	for _, args := range [][]string{{"version"}, {"-h"}, {"key", "-h"}, {"key", "create", "-h"}, {"org", "-h"}, {"org", "update", "-h"},
		{"org", "create", "-h"}, {"org", "set-status", "-h"}, {"key", "list", "-h"}, {"key", "revoke", "-h"}, {"platform", "-h"},
		{"platform", "configure", "-h"}, {"events", "-h"}, {"events", "tail", "-h"}, {"trigger", "-h"}, {"serve", "-h"}} {
		var out, errb bytes.Buffer
		err := run(context.Background(), args, envFrom(nil), &out, &errb)
		if err != nil {
			t.Fatalf("troco %s: %v", strings.Join(args, " "), err)
		}
		is.True(out.Len()+errb.Len() > 0) // something was printed
	}
	var out, errb bytes.Buffer
	is.NoErr(run(context.Background(), []string{"version"}, envFrom(nil), &out, &errb))
	is.True(strings.HasPrefix(out.String(), "troco "))
	out.Reset()
	errb.Reset()
	is.NoErr(run(context.Background(), []string{"key", "create", "-h"}, envFrom(nil), &out, &errb))
	is.True(strings.Contains(errb.String(), "the default environment is live")) // says the default
	is.True(strings.Contains(errb.String(), "-env"))
	errb.Reset()
	is.NoErr(run(context.Background(), []string{"trigger", "-h"}, envFrom(nil), &out, &errb))
	is.True(strings.Contains(errb.String(), "customer.created")) // the supported types
	out.Reset()
	err := run(context.Background(), []string{"key", "frobnicate"}, envFrom(nil), &out, &errb)
	is.True(err != nil)
	is.True(strings.Contains(errb.String(), "troco key create")) // the group's commands
}

// The first start's sign-in link lasts 15 minutes; every later start says how to get a new one
// for the bootstrap owner, and following it gives a link to the port serve runs on.
func TestRestartSaysHowToSignIn(t *testing.T) {
	is := is.New(t)
	dir := t.TempDir()
	dbPath := filepath.Join(dir, "troco.db")
	out, _, exited, _ := serveChild(t, regexp.MustCompile(`dashboard: .*signin/link/`), "--addr", freeAddr(t), "--data-dir", dir)
	is.True(!exited)
	is.True(bootKeyLine.MatchString(out))

	hint := regexp.MustCompile(`dashboard: https://localhost:(\d+)/dashboard \(a new one-time sign-in link for admin@localhost: troco user signin-link (user_\w+) --db (\S+)\)`)
	addr := freeAddr(t)
	out, _, exited, _ = serveChild(t, hint, "--addr", addr, "--data-dir", dir)
	is.True(!exited)
	h := hint.FindStringSubmatch(out)
	is.True(h != nil)
	is.Equal(h[3], dbPath)
	is.True(!bootKeyLine.MatchString(out)) // no second key

	var lout bytes.Buffer
	is.NoErr(run(context.Background(), []string{"user", "signin-link", h[2], "--db", h[3]}, envFrom(nil), &lout, &bytes.Buffer{}))
	is.True(strings.Contains(lout.String(), "https://localhost:"+h[1]+"/dashboard/signin/link/")) // the port serve ran on
}
