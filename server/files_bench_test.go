package server

import (
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"mime/multipart"
	"net/http/httptest"
	"runtime"
	"testing"
	"time"

	"troco/server/jobs"
)

// BenchmarkFileUpload10MiB uploads a 10 MiB dispute_evidence file through the whole handler
// stack (auth, multipart streaming to disk with fsync, sniffing, row), without the network:
//
//	go test ./server -run '^$' -bench FileUpload -benchmem
//
// MB/s is the upload throughput; B/op shows that a 10 MiB upload allocates far less than its
// size (it is streamed to disk, never held whole in memory); peak-heap-MiB is the largest live
// heap seen while uploading.
func BenchmarkFileUpload10MiB(b *testing.B) {
	for _, idem := range []bool{false, true} {
		name := "plain"
		if idem {
			name = "idempotency-key"
		}
		b.Run(name, func(b *testing.B) {
			e := newBenchEnv(b)
			log := slog.New(slog.NewTextHandler(io.Discard, nil))
			s := New(Config{DB: e.db, Clock: e.s.cfg.Clock, Logger: log, Jobs: jobs.NewRunner(e.s.cfg.Clock, log), SimDelay: time.Minute, FilesDir: b.TempDir()})
			content := make([]byte, 10<<20)
			copy(content, "%PDF-1.4\n")
			var buf bytes.Buffer
			mw := multipart.NewWriter(&buf)
			_ = mw.WriteField("purpose", "dispute_evidence")
			fw, _ := mw.CreateFormFile("file", "evidence.pdf")
			fw.Write(content)
			mw.Close()
			body, ct := buf.Bytes(), mw.FormDataContentType()
			content = nil

			var peak uint64
			stop := make(chan struct{})
			done := make(chan struct{})
			go func() { // sample the live heap while uploading
				defer close(done)
				var ms runtime.MemStats
				for {
					select {
					case <-stop:
						return
					case <-time.After(2 * time.Millisecond):
						runtime.ReadMemStats(&ms)
						peak = max(peak, ms.HeapAlloc)
					}
				}
			}()
			runtime.GC()
			var base runtime.MemStats
			runtime.ReadMemStats(&base)
			b.SetBytes(int64(len(body)))
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				r := httptest.NewRequest("POST", "/v1/files", bytes.NewReader(body))
				r.Header.Set("Authorization", "Bearer "+e.token)
				r.Header.Set("Content-Type", ct)
				if idem {
					r.Header.Set("Idempotency-Key", "bench-"+itoa(int64(i)))
				}
				w := httptest.NewRecorder()
				s.ServeHTTP(w, r)
				if w.Code != 200 {
					b.Fatalf("upload: %d %s", w.Code, w.Body)
				}
				b.StopTimer()
				var f struct{ ID string }
				_ = json.Unmarshal(w.Body.Bytes(), &f)
				_ = s.files.Remove(f.ID) // keep the disk small; the row stays
				b.StartTimer()
			}
			b.StopTimer()
			close(stop)
			<-done
			// The request body (10 MiB) is the benchmark's own; what the server adds is above it.
			b.ReportMetric(float64(int64(peak)-int64(base.HeapAlloc))/(1<<20), "peak-heap-MiB")
		})
	}
}
