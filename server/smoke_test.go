package server_test

import (
	"testing"

	"github.com/matryer/is"
)

func TestCustomerRoundTrip(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	r := e.Do("POST", "/v1/customers", e.Test, map[string]any{"email": "ana@example.com", "metadata": map[string]string{"k": "v"}})
	is.Equal(r.Status, 200) // create customer
	is.Equal(r.Str("object"), "customer")
	is.Equal(r.Body["livemode"], false) // test key → test data
	id := r.Str("id")
	is.Equal(e.Do("GET", "/v1/customers/"+id, e.Test, nil).Status, 200)
	is.Equal(e.Do("GET", "/v1/customers/"+id, e.Live, nil).Status, 404) // live cannot see test data
}
