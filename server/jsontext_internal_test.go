package server

import (
	"math/rand/v2"
	"testing"

	"github.com/matryer/is"
)

// The fast path may only say "passes" for a body the full walk passes, and must say it for the
// ordinary bodies every request sends (or it saves nothing).
func TestPlainJSONTextNeverPassesWhatTheWalkRefuses(t *testing.T) {
	is := is.New(t)
	plain := []string{
		`{"amount":1000,"currency":"brl","description":"Pedido 1","metadata":{"order":"1","note":"olá"}}`,
		`{"a":{"x":1},"b":{"x":2},"c":[{"x":1},{"x":1}],"d":"{\"x\":1,\"x\":2}"}`,
		`{ "payment_method" : "pm_card_visa" , "items" : [ { "price" : "p_1" } , { "price" : "p_2" } ] }`,
	}
	for _, b := range plain {
		is.True(plainJSONText([]byte(b))) // an ordinary body takes the fast path
		is.True(walkJSONText([]byte(b)) == nil)
	}
	refused := []string{
		`{"amount":1000,"amount":5}`,
		`{"metadata":{"a":"1","b":"2","a":"3"}}`,
		`{"items":[{"price":"p","price":"q"}]}`,
		`{"a":{"k":1},"k":2,"k":3}`,
		"{\"note\":\"a\u202eb\"}",
		"{\"note\":\"a\u2067b\"}",
		`{"note":"a\u0000b"}`,
		`{"note":"\u202e"}`,
		"{\"note\":\"\xff\"}",
		`{"a\u0062":1,"ab":2}`,
		`{"a\/b":1,"a/b":2}`,
	}
	for _, b := range refused {
		is.True(!plainJSONText([]byte(b)))      // never the fast path
		is.True(checkJSONText([]byte(b)) != nil) // and the walk refuses it
	}
	// Random objects with keys from a small set (so duplicates are frequent) and values that are
	// sometimes suspicious: whatever the fast path passes, the walk passes.
	r := rand.New(rand.NewPCG(1, 2))
	keys := []string{`"a"`, `"b"`, `"c"`, `"a\/"`, `"a/"`, `"\u0061"`}
	values := []string{`1`, `"x"`, `null`, `"\u202e"`, "\"\u2066\"", `"x\"y"`, `"\u0000"`, `"{\"a\":1}"`}
	var gen func(depth int) string
	gen = func(depth int) string {
		if depth > 2 || r.IntN(3) == 0 {
			return values[r.IntN(len(values))]
		}
		if r.IntN(4) == 0 {
			out := "["
			for i := range r.IntN(3) {
				if i > 0 {
					out += ","
				}
				out += gen(depth + 1)
			}
			return out + "]"
		}
		out := "{"
		for i := range r.IntN(4) {
			if i > 0 {
				out += ", "
			}
			out += keys[r.IntN(len(keys))] + ":" + gen(depth+1)
		}
		return out + "}"
	}
	passed, walkRefused := 0, 0
	for range 20000 {
		b := []byte("{" + `"k":` + gen(0) + "}")
		walk := walkJSONText(b)
		if walk != nil {
			walkRefused++
		}
		if plainJSONText(b) {
			passed++
			if walk != nil {
				t.Fatalf("fast path passed %s, the walk refuses it: %v", b, walk)
			}
		}
	}
	is.True(passed > 1000 && walkRefused > 1000) // both kinds were generated
}
