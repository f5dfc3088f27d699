package main

import (
	"bytes"
	"crypto/rand"
	"encoding/json"
	"io"
	"mime/multipart"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/matryer/is"
)

// TestCrashDuringUploads kills the server with SIGKILL while uploads stream in, restarts it on
// the same data dir, and checks that every acknowledged file is there with its bytes, and that
// the files directory holds exactly the bytes of the recorded files: no bytes without a row, no
// row without bytes, no temporary upload left over.
func TestCrashDuringUploads(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns the server")
	}
	is := is.New(t)
	dir, addr, key := t.TempDir(), freeAddr(t), crashKey(t)
	srv := startChild(t, dir, addr, key)
	c := crashClient(dir, addr, key)

	type upload struct {
		content []byte
		id      string
	}
	var mu sync.Mutex
	var acked []upload
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for range 6 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				content := make([]byte, 512<<10)
				rand.Read(content)
				copy(content, "\x89PNG\r\n\x1a\n")
				var buf bytes.Buffer
				mw := multipart.NewWriter(&buf)
				_ = mw.WriteField("purpose", "product_image")
				fw, _ := mw.CreateFormFile("file", "foto.png")
				fw.Write(content)
				mw.Close()
				req, _ := http.NewRequest("POST", c.base+"/v1/files", &buf)
				req.Header.Set("Authorization", "Bearer "+c.key)
				req.Header.Set("Content-Type", mw.FormDataContentType())
				res, err := c.hc.Do(req)
				if err != nil {
					continue // in flight at the kill
				}
				var f struct{ ID string }
				_ = json.NewDecoder(res.Body).Decode(&f)
				res.Body.Close()
				if res.StatusCode == 200 {
					mu.Lock()
					acked = append(acked, upload{content, f.ID})
					mu.Unlock()
				}
			}
		}()
	}
	// Kill once some uploads are acknowledged (on a busy machine the first can take seconds),
	// while the others are in flight.
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); {
		mu.Lock()
		n := len(acked)
		mu.Unlock()
		if n >= 3 {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	time.Sleep(30 * time.Millisecond)
	is.NoErr(srv.cmd.Process.Signal(syscall.SIGKILL))
	<-srv.exited
	close(stop)
	wg.Wait()
	if len(acked) == 0 {
		t.Fatal("no upload was acknowledged before the kill")
	}

	startChild(t, dir, addr, key)
	c = crashClient(dir, addr, key)
	var rows []string
	after := ""
	for {
		path := "/v1/files?limit=100"
		if after != "" {
			path += "&starting_after=" + after
		}
		status, body, _ := c.send("GET", path, "", nil)
		is.Equal(status, 200)
		for _, it := range body["data"].([]any) {
			rows = append(rows, it.(map[string]any)["id"].(string))
		}
		if body["has_more"] != true {
			break
		}
		after = rows[len(rows)-1]
	}
	for _, u := range acked {
		res, err := c.hc.Get(c.base + "/files/" + u.id + "/contents")
		is.NoErr(err)
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		is.Equal(res.StatusCode, 200)      // an acknowledged upload survived
		is.True(bytes.Equal(b, u.content)) // with its bytes
	}
	entries, err := os.ReadDir(filepath.Join(dir, "files"))
	is.NoErr(err)
	var onDisk []string
	for _, e := range entries {
		onDisk = append(onDisk, e.Name())
	}
	sort.Strings(rows)
	sort.Strings(onDisk)
	is.Equal(onDisk, rows) // exactly the recorded files: no orphan either way
	t.Logf("%d uploads acknowledged before the kill, %d files after the restart", len(acked), len(rows))
}
