package db

import (
	"testing"

	"github.com/matryer/is"
)

// TestRebase: a stored link keeps its path, query and secret and takes the current base's
// scheme and host; with no base known it is kept as stored.
func TestRebase(t *testing.T) {
	is := is.New(t)
	for _, c := range [][3]string{
		{"https://localhost:43577/invoices/inv_1?s=abc", "https://pay.example.com", "https://pay.example.com/invoices/inv_1?s=abc"},
		{"https://old.example/receipts/ch_1?s=x", "https://127.0.0.1:9443", "https://127.0.0.1:9443/receipts/ch_1?s=x"},
		{"/invoices/inv_1?s=abc", "https://pay.example.com", "https://pay.example.com/invoices/inv_1?s=abc"},
		{"https://old.example/invoices/inv_1?s=abc", "", "https://old.example/invoices/inv_1?s=abc"},
		{"https://old.example", "https://pay.example.com", "https://old.example"},
	} {
		is.Equal(rebase(c[0], c[1]), c[2])
	}
}
