package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/matryer/is"
)

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// `troco dev psp` starts the doubles and prints the serve flags; `troco processors check` with
// those flags verifies mutual TLS, the OAuth credentials and the Cielo keys against them, and
// fails with a wrong secret.
func TestDevPSPAndProcessorsCheck(t *testing.T) {
	is := is.New(t)
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	out := &lockedBuffer{}
	ready := make(chan string, 1)
	env := testCLIEnv(t, out, "dev", "psp", "--dir", dir, "--cielo", "--troco-ca", filepath.Join(dir, "none.pem"))
	env.Ready = func(addr string) { ready <- addr }
	done := make(chan error, 1)
	go func() { done <- Run(ctx, env) }()
	<-ready
	printed := out.String()
	is.True(strings.Contains(printed, "troco serve --pix-provider api-pix"))
	// The printed serve flags, as arguments.
	var flags []string
	for _, line := range strings.Split(printed, "\n") {
		line = strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(line), "\\"))
		line = strings.TrimPrefix(line, "troco serve ")
		if strings.HasPrefix(line, "--") {
			flags = append(flags, strings.Fields(line)...)
		}
	}
	is.True(len(flags) > 20)

	var check bytes.Buffer
	err := Run(context.Background(), testCLIEnv(t, &check, append([]string{"processors", "check"}, flags...)...))
	is.NoErr(err)
	is.True(strings.Contains(check.String(), "pix (api-pix): ok"))
	is.True(strings.Contains(check.String(), "cards (cielo): ok"))

	is.NoErr(os.WriteFile(filepath.Join(dir, "pix-client-secret"), []byte("wrong\n"), 0o600))
	is.NoErr(os.WriteFile(filepath.Join(dir, "cielo-merchant-key"), []byte("wrong\n"), 0o600))
	check.Reset()
	err = Run(context.Background(), testCLIEnv(t, &check, append([]string{"processors", "check"}, flags...)...))
	is.True(err != nil)
	is.True(strings.Contains(check.String(), "pix (api-pix): FAILED"))
	is.True(strings.Contains(check.String(), "cards (cielo): FAILED"))
	is.True(!strings.Contains(check.String(), "dev-psp-secret")) // secrets never printed

	cancel()
	is.NoErr(<-done)
}

func TestProcessorFlagsNameWhatIsMissing(t *testing.T) {
	is := is.New(t)
	var out bytes.Buffer
	err := Run(context.Background(), testCLIEnv(t, &out, "processors", "check", "--pix-provider", "api-pix", "--pix-base-url", "https://psp.example"))
	is.True(err != nil)
	is.True(strings.Contains(err.Error(), "--pix-token-url"))
	is.True(strings.Contains(err.Error(), "--pix-webhook-ca"))
	err = Run(context.Background(), testCLIEnv(t, &out, "processors", "check", "--card-provider", "rede"))
	is.True(err != nil)
	err = Run(context.Background(), testCLIEnv(t, &out, "processors", "check"))
	is.True(err != nil && strings.Contains(err.Error(), "no live processor configured"))
}
