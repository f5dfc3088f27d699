package core

import (
	"math/rand/v2"
	"reflect"
	"testing"
	"time"

	"github.com/matryer/is"

	"troco/server/domain"
)

// diffTypes are the objects events carry with previous_attributes, and a few more with every
// shape of field (nested structs, slices, maps, pointers, times, metadata).
var diffTypes = []reflect.Type{
	reflect.TypeFor[domain.PaymentIntent](), reflect.TypeFor[domain.Charge](), reflect.TypeFor[domain.PaymentMethod](),
	reflect.TypeFor[domain.SetupIntent](), reflect.TypeFor[domain.Refund](), reflect.TypeFor[domain.Dispute](),
	reflect.TypeFor[domain.PixAuthorization](), reflect.TypeFor[domain.Customer](), reflect.TypeFor[domain.Invoice](),
	reflect.TypeFor[domain.Subscription](), reflect.TypeFor[domain.CheckoutSession](), reflect.TypeFor[domain.WebhookEndpoint](),
	reflect.TypeFor[domain.Product](), reflect.TypeFor[domain.Price](), reflect.TypeFor[domain.Coupon](),
	reflect.TypeFor[domain.PromotionCode](), reflect.TypeFor[domain.PaymentLink](), reflect.TypeFor[domain.Organization](),
	reflect.TypeFor[domain.File](), reflect.TypeFor[domain.APIKey](), reflect.TypeFor[domain.PayoutAccount](),
	reflect.TypeFor[domain.Email](), reflect.TypeFor[domain.Transaction](), reflect.TypeFor[domain.PortalSession](),
}

// TestDiffMatchesJSONDefinition checks the typed previous_attributes against its definition
// (both objects encoded, decoded into maps, top-level values compared) on many random objects
// of every event type and random changes to them: same keys, same old values, byte for byte
// the same JSON once encoded.
func TestDiffMatchesJSONDefinition(t *testing.T) {
	is := is.New(t)
	rng := rand.New(rand.NewPCG(18, 2026))
	cases := 0
	for _, typ := range diffTypes {
		is.True(planFor(typ) != nil) // every event object takes the typed path
		for range 400 {
			seed := rng.Uint64()
			before := reflect.New(typ)
			fill(rand.New(rand.NewPCG(seed, 1)), before.Elem(), 0)
			after := reflect.New(typ)
			fill(rand.New(rand.NewPCG(seed, 1)), after.Elem(), 0) // the same values, other pointers
			// Change a few top-level fields: a new random value, its zero, or an equal copy.
			for range rng.IntN(4) {
				i := rng.IntN(typ.NumField())
				f := after.Elem().Field(i)
				if !f.CanSet() {
					continue
				}
				switch rng.IntN(3) {
				case 0:
					fill(rng, f, 1)
				case 1:
					f.SetZero()
				default:
					fill(rand.New(rand.NewPCG(seed, 99)), f, 1)
				}
			}
			for _, pair := range [][2]any{{before.Interface(), after.Interface()}, {before.Elem().Interface(), after.Interface()}} {
				want, got := diffJSON(pair[0], pair[1]), diff(pair[0], pair[1])
				if !reflect.DeepEqual(want, got) {
					t.Fatalf("%s: previous_attributes differ\nwant %#v\ngot  %#v", typ, want, got)
				}
				wb, _ := domain.MarshalJSON(want)
				gb, _ := domain.MarshalJSON(got)
				is.Equal(string(wb), string(gb))
			}
			cases++
		}
	}
	t.Logf("%d random changes over %d types", cases, len(diffTypes))
}

// TestDiffEventChanges checks diff on changes operations make: a confirmation, metadata edits,
// a time set, pointers replaced by equal values.
func TestDiffEventChanges(t *testing.T) {
	is := is.New(t)
	now := time.Date(2026, 11, 28, 1, 0, 0, 0, time.UTC)
	amount := int64(1000)
	before := domain.PaymentIntent{ID: "pi_1", Amount: 1000, Status: domain.PIStatusRequiresPaymentMethod, Metadata: domain.Metadata{}}
	after := before
	after.Status = domain.PIStatusSucceeded
	after.AmountReceived = amount
	after.Metadata = nil // encodes as {} too: unchanged
	ch := "ch_1"
	after.LatestCharge = &ch
	got := diff(&before, &after)
	is.Equal(got, diffJSON(&before, &after))
	is.Equal(got["status"], domain.PIStatusRequiresPaymentMethod)
	_, hasMeta := got["metadata"]
	is.True(!hasMeta)
	is.Equal(got["latest_charge"], nil)
	_, ok := got["latest_charge"]
	is.True(ok)

	c1 := domain.Customer{ID: "cus_1", CreatedAt: domain.At(now), Metadata: domain.Metadata{"a": "1"}}
	c2 := c1
	c2.Metadata = domain.Metadata{"a": "1", "b": "2"}
	c2.CreatedAt = domain.Time{Time: now.Add(300 * time.Millisecond)} // the same second on the wire
	is.Equal(diff(&c1, &c2), diffJSON(&c1, &c2))
	is.Equal(diff(&c1, &c2), map[string]any{"metadata": map[string]any{"a": "1"}})
}

// fill sets v to random values: every kind the domain objects use, with nil, empty and
// invalid-UTF-8 values among them.
func fill(rng *rand.Rand, v reflect.Value, depth int) {
	if !v.CanSet() {
		return
	}
	if v.Type() == reflect.TypeFor[domain.Time]() {
		switch rng.IntN(4) {
		case 0:
			v.Set(reflect.ValueOf(domain.Time{}))
		default:
			v.Set(reflect.ValueOf(domain.Time{Time: time.Unix(1.7e9+rng.Int64N(3), rng.Int64N(3)*4e8).UTC()}))
		}
		return
	}
	if v.Type() == reflect.TypeFor[time.Time]() {
		v.Set(reflect.ValueOf(time.Unix(1.7e9+rng.Int64N(3), 0).UTC()))
		return
	}
	switch v.Kind() {
	case reflect.String:
		v.SetString([]string{"", "a", "b", "requires_payment_method", "succeeded", "\xff", "\xfe", "<&>", "ação"}[rng.IntN(9)])
	case reflect.Bool:
		v.SetBool(rng.IntN(2) == 0)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt([]int64{0, 1, 2, 100, -5, 1 << 53, 1<<53 + 1}[rng.IntN(7)])
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v.SetUint(uint64(rng.IntN(3)))
	case reflect.Float32, reflect.Float64:
		v.SetFloat([]float64{0, 0.5, 1, 2.25}[rng.IntN(4)])
	case reflect.Pointer:
		if depth > 4 || rng.IntN(3) == 0 {
			v.SetZero()
			return
		}
		p := reflect.New(v.Type().Elem())
		fill(rng, p.Elem(), depth+1)
		v.Set(p)
	case reflect.Slice:
		switch n := rng.IntN(4); {
		case n == 0 || depth > 4:
			v.SetZero()
		default:
			s := reflect.MakeSlice(v.Type(), n-1, n-1)
			for i := range n - 1 {
				fill(rng, s.Index(i), depth+1)
			}
			v.Set(s)
		}
	case reflect.Map:
		switch n := rng.IntN(4); {
		case n == 0 || depth > 4:
			v.SetZero()
		default:
			m := reflect.MakeMap(v.Type())
			for range n - 1 {
				k, e := reflect.New(v.Type().Key()).Elem(), reflect.New(v.Type().Elem()).Elem()
				fill(rng, k, depth+1)
				fill(rng, e, depth+1)
				m.SetMapIndex(k, e)
			}
			v.Set(m)
		}
	case reflect.Struct:
		for i := range v.NumField() {
			fill(rng, v.Field(i), depth+1)
		}
	case reflect.Interface:
		switch rng.IntN(4) {
		case 0:
			v.SetZero()
		case 1:
			v.Set(reflect.ValueOf("x"))
		case 2:
			v.Set(reflect.ValueOf(map[string]any{"k": float64(rng.IntN(2))}))
		default:
			v.Set(reflect.ValueOf([]any{"a"}))
		}
	}
}
