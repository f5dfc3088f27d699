package server

import (
	"net/http"

	"github.com/julienschmidt/httprouter"

	"troco/server/domain"
)

// routes registers every route of troco in one place.
func (s *Server) routes() http.Handler {
	r := httprouter.New()
	r.RedirectTrailingSlash = false
	r.RedirectFixedPath = false
	r.HandleMethodNotAllowed = true
	r.NotFound = s.handleNotFound()
	r.MethodNotAllowed = s.handleMethodNotAllowed()

	read, write := domain.ScopeRead, domain.ScopeWrite
	v1 := func(method, path, need string, h http.Handler) { r.Handler(method, path, s.api(need, h)) }

	r.Handler(http.MethodGet, "/healthz", s.handleHealthz())

	v1("GET", "/v1/customers", read, s.handleCustomerList())
	v1("POST", "/v1/customers", write, s.handleCustomerCreate())
	v1("GET", "/v1/customers/:id", read, s.handleCustomerGet())
	v1("POST", "/v1/customers/:id", write, s.handleCustomerUpdate())
	v1("DELETE", "/v1/customers/:id", write, s.handleCustomerDelete())

	v1("GET", "/v1/products", read, s.handleProductList())
	v1("POST", "/v1/products", write, s.handleProductCreate())
	v1("GET", "/v1/products/:id", read, s.handleProductGet())
	v1("POST", "/v1/products/:id", write, s.handleProductUpdate())
	v1("DELETE", "/v1/products/:id", write, s.handleProductDelete())

	v1("GET", "/v1/prices", read, s.handlePriceList())
	v1("POST", "/v1/prices", write, s.handlePriceCreate())
	v1("GET", "/v1/prices/:id", read, s.handlePriceGet())
	v1("POST", "/v1/prices/:id", write, s.handlePriceUpdate())
	v1("DELETE", "/v1/prices/:id", write, s.handlePriceDelete())

	v1("GET", "/v1/organizations/:id", read, s.handleOrganizationGet())

	v1("GET", "/v1/events", read, s.handleEventList())
	v1("GET", "/v1/events/:id", read, s.handleEventGet())

	v1("POST", "/v1/test-helpers/advance-clock", write, s.handleAdvanceClock())

	return s.observe(r)
}

func (s *Server) handleHealthz() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
	})
}

func (s *Server) handleNotFound() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.writeError(w, r, &domain.Error{Status: http.StatusNotFound, Type: domain.TypeInvalidRequest, Code: domain.CodeResourceMissing,
			Message: "Unrecognized request URL (" + r.Method + " " + r.URL.Path + ")."})
	})
}

func (s *Server) handleMethodNotAllowed() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.writeError(w, r, &domain.Error{Status: http.StatusMethodNotAllowed, Type: domain.TypeInvalidRequest, Code: domain.CodeMethodNotAllowed,
			Message: "Method " + r.Method + " is not allowed on " + r.URL.Path + "."})
	})
}

// pathID returns the :id path parameter.
func pathID(r *http.Request) string {
	return httprouter.ParamsFromContext(r.Context()).ByName("id")
}
