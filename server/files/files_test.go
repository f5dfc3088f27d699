package files

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/iotest"
	"time"

	"github.com/matryer/is"
)

func TestCheckFilename(t *testing.T) {
	for _, name := range []string{"recibo.pdf", "nota fiscal (2).PDF", "ação-ñ.png", strings.Repeat("a", 255)} {
		if err := CheckFilename(name); err != nil {
			t.Errorf("%q refused: %v", name, err)
		}
	}
	for _, name := range []string{"", ".", "..", "../a.png", "a/b.png", `a\b.png`, "C:a.png", "a..b.png", "a\x00.png", "a\n.png", `a".png`, strings.Repeat("a", 256), "\xff.png"} {
		if err := CheckFilename(name); err == nil {
			t.Errorf("%q accepted", name)
		}
	}
}

func TestSniffAccepted(t *testing.T) {
	is := is.New(t)
	is.Equal(Sniff([]byte("\x89PNG\r\n\x1a\n....")), "image/png")
	is.Equal(Sniff([]byte("\xff\xd8\xff\xe0....")), "image/jpeg")
	is.Equal(Sniff([]byte("RIFF\x00\x00\x00\x00WEBPVP8 ")), "image/webp")
	is.Equal(Sniff([]byte("%PDF-1.7\n")), "application/pdf")
	is.Equal(Sniff([]byte("<html>")), "text/html")
	is.True(!slices.Contains(Accepted("product_image"), "application/pdf"))
	is.True(slices.Contains(Accepted("dispute_evidence"), "application/pdf"))
	is.True(slices.Contains(Accepted("identity_document"), "image/webp"))
}

func TestSignVerify(t *testing.T) {
	is := is.New(t)
	s, err := Open(t.TempDir(), []byte("key"))
	is.NoErr(err)
	now := time.Unix(1_800_000_000, 0)
	sig := s.Sign("file_a", now.Add(time.Hour).Unix())
	exp := "1800003600"
	is.True(s.Verify("file_a", exp, sig, now))
	is.True(s.Verify("file_a", exp, sig, now.Add(59*time.Minute)))
	is.True(!s.Verify("file_a", exp, sig, now.Add(time.Hour)))   // expired
	is.True(!s.Verify("file_b", exp, sig, now))                  // another id
	is.True(!s.Verify("file_a", "1800007200", sig, now))         // another expiry
	is.True(!s.Verify("file_a", exp, strings.ToUpper(sig), now)) // altered
	is.True(!s.Verify("file_a", "x", sig, now))
	other, _ := Open(t.TempDir(), []byte("other key"))
	is.True(!other.Verify("file_a", exp, sig, now)) // another server's key
}

func TestSpoolCommitSweep(t *testing.T) {
	is := is.New(t)
	dir := t.TempDir()
	s, err := Open(dir, nil)
	is.NoErr(err)
	tmp, err := s.Spool(bytes.NewReader([]byte("%PDF-1.4 hello")), 100)
	is.NoErr(err)
	is.Equal(tmp.Size, int64(14))
	is.Equal(string(tmp.Head), "%PDF-1.4 hello")
	is.NoErr(s.Commit(tmp, "file_keep"))
	b, err := os.ReadFile(filepath.Join(dir, "file_keep"))
	is.NoErr(err)
	is.Equal(string(b), "%PDF-1.4 hello")

	_, err = s.Spool(bytes.NewReader(make([]byte, 101)), 100)
	is.True(errors.Is(err, ErrTooLarge))
	_, err = s.Spool(iotest.ErrReader(errors.New("connection reset")), 100)
	is.True(err != nil)
	entries, _ := os.ReadDir(dir)
	is.Equal(len(entries), 1) // refused uploads leave nothing

	is.True(s.Commit(&Temp{}, "../escape") != nil) // ids are checked before any rename
	_, err = s.OpenFile("../etc/passwd")
	is.True(err != nil)

	os.WriteFile(filepath.Join(dir, "file_orphan"), []byte("x"), 0o600)
	os.WriteFile(filepath.Join(dir, ".upload-1"), []byte("x"), 0o600)
	removed, missing, err := s.Sweep(map[string]bool{"file_keep": true, "file_gone": true})
	is.NoErr(err)
	is.Equal(removed, 2)
	is.Equal(missing, []string{"file_gone"})
	entries, _ = os.ReadDir(dir)
	is.Equal(len(entries), 1)
}
