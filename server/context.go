package server

import (
	"context"
	"strconv"

	"troco/server/domain"
)

type ctxKey int

const (
	ctxRequestID ctxKey = iota
	ctxAuth
	ctxIdem
	ctxURLRepaired // *urlRepair: validURLText replaced bytes that were not UTF-8
)

func requestID(ctx context.Context) string {
	id, _ := ctx.Value(ctxRequestID).(string)
	return id
}

// authInfo is the authenticated caller of a /v1 request.
type authInfo struct {
	Key   *domain.APIKey
	Actor domain.Actor
	// Platform is set when a platform key acts through the Organization header.
	Platform *domain.Organization
	// Customer is set on the customer-portal path of /api/v1: the one customer a customer
	// session token acts for (Key is then a stand-in naming the token for rate limits).
	Customer string
}

func authFrom(ctx context.Context) *authInfo {
	a, _ := ctx.Value(ctxAuth).(*authInfo)
	return a
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
