package db

import (
	"strings"
	"testing"

	"github.com/matryer/is"
)

// TestDisplayHidesPasswords: messages name a PostgreSQL URL without its password, whether the
// password is in the user information or in a query parameter (pgx reads both).
func TestDisplayHidesPasswords(t *testing.T) {
	is := is.New(t)
	for _, u := range []string{
		"postgres://troco:hunter2@db.example:5432/troco?sslmode=require",
		"postgres://troco@db.example:5432/troco?sslmode=require&password=hunter2",
		"postgresql:///troco?host=/run/pg&user=troco&password=hunter2",
		"postgres://troco@db.example/troco?sslpassword=hunter2",
	} {
		got := Display(u)
		is.True(!strings.Contains(got, "hunter2")) // the password is not shown
		is.True(strings.Contains(got, "troco"))    // the rest still says where
	}
	is.Equal(Display("/var/lib/troco/troco.db"), "/var/lib/troco/troco.db") // SQLite paths as is
}
