// Package domain holds troco's public objects, their validation rules and the error type every
// interface (the /v1 API, the /api/v1 API and the hosted pages) reports. It knows nothing of
// HTTP or SQL.
package domain
