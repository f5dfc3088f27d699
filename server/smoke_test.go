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

func TestMetadataNullClearsAndEmptyValueRemovesKey(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	c := e.Do("POST", "/v1/customers", e.Test, map[string]any{"metadata": map[string]string{"a": "1", "b": "2"}})
	is.Equal(c.Status, 200)
	id := c.Str("id")
	r := e.Do("POST", "/v1/customers/"+id, e.Test, map[string]any{"metadata": map[string]string{"a": ""}})
	is.Equal(r.Body["metadata"], map[string]any{"b": "2"}) // an empty value removes only that key
	r = e.Do("POST", "/v1/customers/"+id, e.Test, `{"metadata":null}`)
	is.Equal(r.Status, 200)
	is.Equal(r.Body["metadata"], map[string]any{}) // null clears all metadata
}
