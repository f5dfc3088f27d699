// Package fees holds troco's money rules for card instalments, interest,
// processing fees and the per-instalment ledger split (SPEC 2.9, 4.8, 8;
// CONTRACT 5).
//
// Every amount is an int64 in centavos and every rate an int64 in basis
// points (100 = 1%). Nothing here uses floating point: the Price table is
// evaluated exactly with math/big and rounded up to the centavo. The package
// is pure: no HTTP, no database, no clock.
package fees
