package server

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"troco/db"
	"troco/server/domain"
)

// BenchmarkAPIV1Reads compares reads through /v1 with an API key and through /api/v1 with an
// access token (EdDSA verification plus the key lookup) and with the API key (see
// docs/PERFORMANCE.md):
//
//	go test ./server -run '^$' -bench APIV1Reads -benchmem
func BenchmarkAPIV1Reads(b *testing.B) {
	e := newBenchEnv(b)
	id := e.createCustomer(b)
	for range 200 {
		e.createCustomer(b)
	}
	var jwt string
	err := e.db.Write(context.Background(), func(tx *db.Tx) error {
		k, err := tx.FindAPIKeyByHash(domain.HashToken(e.token))
		if err != nil {
			return err
		}
		jwt, err = e.s.tokens.Issue(tx, k)
		return err
	})
	if err != nil {
		b.Fatal(err)
	}
	for _, tc := range []struct {
		name, path, token string
	}{
		{"v1_key_retrieve", "/v1/customers/" + id, e.token},
		{"apiv1_jwt_retrieve", "/api/v1/customers/" + id, jwt},
		{"apiv1_key_retrieve", "/api/v1/customers/" + id, e.token},
		{"v1_key_list", "/v1/customers?limit=10", e.token},
		{"apiv1_jwt_list", "/api/v1/customers?limit=10", jwt},
	} {
		b.Run(tc.name, func(b *testing.B) {
			b.ReportAllocs()
			defer reportCPU(b, cpuTime())
			b.SetParallelism(16)
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					r := httptest.NewRequest("GET", tc.path, nil)
					r.Header.Set("Authorization", "Bearer "+tc.token)
					w := httptest.NewRecorder()
					e.s.ServeHTTP(w, r)
					if w.Code != http.StatusOK {
						b.Errorf("%d %s", w.Code, w.Body)
						return
					}
				}
			})
		})
	}
}
