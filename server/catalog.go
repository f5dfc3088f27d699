package server

import (
	"net/http"

	"troco/db"
	"troco/server/core"
	"troco/server/domain"
)

func (s *Server) handleProductCreate() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var p core.ProductParams
		if err := s.decode(w, r, &p); err != nil {
			s.writeError(w, r, err)
			return
		}
		p.FilesBaseURL = s.origin(r)
		s.mutate(w, r, func(tx *db.Tx, a domain.Actor) (any, error) { return core.CreateProduct(tx, a, p) })
	})
}

func (s *Server) handleProductGet() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := pathID(r)
		s.read(w, r, func(tx *db.Tx, a domain.Actor) (any, error) { return core.GetProduct(tx, a.Scope, id) })
	})
}

func (s *Server) handleProductUpdate() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := pathID(r)
		var p core.ProductParams
		if err := s.decode(w, r, &p); err != nil {
			s.writeError(w, r, err)
			return
		}
		p.FilesBaseURL = s.origin(r)
		s.mutate(w, r, func(tx *db.Tx, a domain.Actor) (any, error) { return core.UpdateProduct(tx, a, id, p) })
	})
}

func (s *Server) handleProductDelete() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := pathID(r)
		s.mutate(w, r, func(tx *db.Tx, a domain.Actor) (any, error) { return core.DeleteProduct(tx, a, id) })
	})
}

func (s *Server) handleProductList() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		q, err := parseList(r, "is_active")
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		active, err := q.boolean("is_active")
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		s.read(w, r, func(tx *db.Tx, a domain.Actor) (any, error) {
			items, more, err := tx.ListProducts(a.Scope, db.ProductFilter{IsActive: active}, q.ListParams)
			return listOf(r, items, more), err
		})
	})
}

func (s *Server) handlePriceCreate() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var p core.PriceParams
		if err := s.decode(w, r, &p); err != nil {
			s.writeError(w, r, err)
			return
		}
		s.mutate(w, r, func(tx *db.Tx, a domain.Actor) (any, error) { return core.CreatePrice(tx, a, p) })
	})
}

func (s *Server) handlePriceGet() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := pathID(r)
		s.read(w, r, func(tx *db.Tx, a domain.Actor) (any, error) { return core.GetPrice(tx, a.Scope, id) })
	})
}

func (s *Server) handlePriceUpdate() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := pathID(r)
		var p core.PriceParams
		if err := s.decode(w, r, &p); err != nil {
			s.writeError(w, r, err)
			return
		}
		s.mutate(w, r, func(tx *db.Tx, a domain.Actor) (any, error) { return core.UpdatePrice(tx, a, id, p) })
	})
}

func (s *Server) handlePriceDelete() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := pathID(r)
		s.mutate(w, r, func(tx *db.Tx, a domain.Actor) (any, error) { return core.DeletePrice(tx, a, id) })
	})
}

func (s *Server) handlePriceList() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		q, err := parseList(r, "product", "is_active", "type")
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		active, err := q.boolean("is_active")
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		if _, err := q.oneOf("type", domain.PriceOneTime, domain.PriceRecurring); err != nil {
			s.writeError(w, r, err)
			return
		}
		s.read(w, r, func(tx *db.Tx, a domain.Actor) (any, error) {
			items, more, err := tx.ListPrices(a.Scope, db.PriceFilter{Product: q.str("product"), IsActive: active, Type: q.str("type")}, q.ListParams)
			return listOf(r, items, more), err
		})
	})
}
