package webhooks

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"syscall"
	"time"

	"troco/server/domain"
)

// MaxURLLength bounds an endpoint URL (the limit SPEC 8 sets for return_url).
const MaxURLLength = 2048

// ValidateURL applies the URL rules of CONTRACT 8 that need no network: an absolute http(s) URL
// of at most 2048 characters, without credentials or fragment; in live mode https only and, unless
// allowPrivate, no literal private address or localhost name. Errors name the param "url".
func ValidateURL(raw string, livemode, allowPrivate bool) (*url.URL, error) {
	if raw == "" {
		return nil, domain.Missing("url")
	}
	if len(raw) > MaxURLLength {
		return nil, domain.Invalid("url", "url must be at most %d characters.", MaxURLLength)
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.Opaque != "" {
		return nil, domain.Invalid("url", "url must be an absolute URL starting with http:// or https://.")
	}
	if u.User != nil {
		return nil, domain.Invalid("url", "url must not contain a user name or password.")
	}
	if u.Fragment != "" || strings.Contains(raw, "#") {
		return nil, domain.Invalid("url", "url must not contain a fragment (#).")
	}
	if p := u.Port(); p != "" {
		if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
			return nil, domain.Invalid("url", "url has an invalid port.")
		}
	}
	host := u.Hostname()
	if host == "" {
		return nil, domain.Invalid("url", "url must name a host.")
	}
	if !livemode {
		return u, nil // test endpoints: any http(s) URL, loopback included (the local sandbox)
	}
	if u.Scheme != "https" {
		return nil, domain.Invalid("url", "Live webhook endpoints must use https://.")
	}
	if allowPrivate {
		return u, nil
	}
	if ip, err := netip.ParseAddr(host); err == nil {
		if Blocked(ip) {
			return nil, privateURL(ip.String())
		}
		return u, nil
	}
	// Resolvers and browsers read 2130706433, 0x7f000001, 127.1 and 017700000001 as 127.0.0.1
	// (the inet_aton forms): refuse a blocked one as its dotted form is, and any other too.
	if ip, ok := legacyIPv4(host); ok {
		if Blocked(ip) {
			return nil, privateURL(ip.String() + " written as " + host)
		}
		return nil, domain.Invalid("url", "url must write an IPv4 address as four decimal numbers (%s).", ip)
	}
	if h := strings.ToLower(strings.TrimSuffix(host, ".")); h == "localhost" || strings.HasSuffix(h, ".localhost") {
		return nil, privateURL("loopback")
	}
	return u, nil
}

func privateURL(what string) *domain.Error {
	return domain.Invalid("url", "Live webhook endpoints cannot point to loopback, private or link-local addresses (%s).", what)
}

// Resolver looks host names up; net.DefaultResolver is one.
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// CheckURL is ValidateURL plus, for live endpoints without allowPrivate, a DNS lookup: a name that
// resolves to any blocked address is refused. A name that does not resolve (not yet published, or
// no DNS where troco runs) is accepted: the dispatcher enforces the same rule on every connection,
// so its deliveries fail until it resolves to public addresses (DNS may change after creation).
func CheckURL(ctx context.Context, raw string, livemode, allowPrivate bool, r Resolver) error {
	u, err := ValidateURL(raw, livemode, allowPrivate)
	if err != nil || !livemode || allowPrivate {
		return err
	}
	host := u.Hostname()
	if _, err := netip.ParseAddr(host); err == nil {
		return nil // literal, already checked
	}
	if r == nil {
		r = net.DefaultResolver
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	addrs, err := r.LookupNetIP(ctx, "ip", host)
	if err != nil {
		return nil // checked again when dialled
	}
	for _, a := range addrs {
		if Blocked(a) {
			return privateURL(host + " resolves to " + a.Unmap().String())
		}
	}
	return nil
}

// Special-purpose ranges that are not covered by netip's predicates and must not be reached from
// live webhooks: "this network", CGNAT, IETF protocol assignments, documentation, benchmarking,
// reserved (with broadcast), IPv6 discard, documentation, deprecated site-local and Teredo.
var blockedPrefixes = []netip.Prefix{
	netip.MustParsePrefix("0.0.0.0/8"),
	netip.MustParsePrefix("100.64.0.0/10"),
	netip.MustParsePrefix("192.0.0.0/24"),
	netip.MustParsePrefix("192.0.2.0/24"),
	netip.MustParsePrefix("198.18.0.0/15"),
	netip.MustParsePrefix("198.51.100.0/24"),
	netip.MustParsePrefix("203.0.113.0/24"),
	netip.MustParsePrefix("240.0.0.0/4"),
	netip.MustParsePrefix("100::/64"),
	netip.MustParsePrefix("2001::/32"),
	netip.MustParsePrefix("2001:db8::/32"),
	netip.MustParsePrefix("fec0::/10"),
}

var (
	nat64     = netip.MustParsePrefix("64:ff9b::/96")
	sixToFour = netip.MustParsePrefix("2002::/16")
)

// Blocked reports whether a live webhook may not connect to ip: loopback, private (RFC 1918 and
// unique-local), link-local (169.254.0.0/16 with the cloud metadata address, fe80::/10),
// unspecified, multicast, CGNAT and the other special ranges above. IPv4-mapped, NAT64 and 6to4
// addresses are judged by the IPv4 address they carry.
func Blocked(ip netip.Addr) bool {
	ip = ip.Unmap().WithZone("")
	if !ip.IsValid() || ip.IsUnspecified() || ip.IsLoopback() || ip.IsPrivate() || ip.IsLinkLocalUnicast() ||
		ip.IsLinkLocalMulticast() || ip.IsInterfaceLocalMulticast() || ip.IsMulticast() {
		return true
	}
	for _, p := range blockedPrefixes {
		if p.Contains(ip) {
			return true
		}
	}
	b := ip.As16()
	switch {
	case nat64.Contains(ip):
		return Blocked(netip.AddrFrom4([4]byte{b[12], b[13], b[14], b[15]}))
	case sixToFour.Contains(ip):
		return Blocked(netip.AddrFrom4([4]byte{b[2], b[3], b[4], b[5]}))
	}
	return false
}

// BlockedAddressError is the dial error of a live delivery to a blocked address.
type BlockedAddressError struct{ Addr netip.Addr }

func (e *BlockedAddressError) Error() string {
	return fmt.Sprintf("refused to connect to %s: live webhooks cannot reach loopback, private or link-local addresses", e.Addr)
}

// guardControl is a net.Dialer Control hook: it runs after DNS resolution, on the address actually
// being dialled, so a name that re-resolves to a private address after creation (DNS rebinding)
// is still refused.
func guardControl(network, address string, _ syscall.RawConn) error {
	host, _, err := net.SplitHostPort(address)
	if err != nil {
		return err
	}
	ip, err := netip.ParseAddr(host)
	if err != nil {
		return errors.New("webhooks: dial to a non-IP address")
	}
	if Blocked(ip) {
		return &BlockedAddressError{Addr: ip.Unmap()}
	}
	return nil
}

// legacyIPv4 parses the numeric IPv4 spellings that inet_aton accepts beyond dotted decimal: one
// to four parts, each decimal, octal (leading 0) or hexadecimal (0x), the last filling the bytes
// left (127.1 is 127.0.0.1, 2130706433 is one 32-bit number).
func legacyIPv4(host string) (netip.Addr, bool) {
	parts := strings.Split(strings.TrimSuffix(host, "."), ".")
	if len(parts) == 0 || len(parts) > 4 {
		return netip.Addr{}, false
	}
	vals := make([]uint64, len(parts))
	for i, p := range parts {
		if p == "" {
			return netip.Addr{}, false
		}
		base, digits := 10, p
		switch {
		case len(p) > 1 && (p[:2] == "0x" || p[:2] == "0X"):
			base, digits = 16, p[2:]
			if digits == "" {
				digits = "0"
			}
		case len(p) > 1 && p[0] == '0':
			base, digits = 8, p[1:]
		}
		v, err := strconv.ParseUint(digits, base, 64)
		if err != nil {
			return netip.Addr{}, false
		}
		vals[i] = v
	}
	var out uint64
	for i, v := range vals[:len(vals)-1] {
		if v > 255 {
			return netip.Addr{}, false
		}
		out |= v << (8 * (3 - i))
	}
	last := vals[len(vals)-1]
	if last >= 1<<(8*(5-len(vals))) {
		return netip.Addr{}, false
	}
	out |= last
	return netip.AddrFrom4([4]byte{byte(out >> 24), byte(out >> 16), byte(out >> 8), byte(out)}), true
}
