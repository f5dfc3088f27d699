package webhooks

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/matryer/is"

	"troco/server/domain"
)

// The example of the Standard Webhooks specification's reference libraries.
const (
	specSecret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
	specID     = "msg_p5jXN8AQM9LWM0D4loKWxJek"
	specTS     = 1614265330
	specBody   = `{"test": 2432232314}`
	specSig    = "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="
)

func TestSignMatchesTheStandardWebhooksExample(t *testing.T) {
	is := is.New(t)
	sig, err := Sign(specSecret, specID, time.Unix(specTS, 0), []byte(specBody))
	is.NoErr(err)
	is.Equal(sig, specSig) // same bytes as the specification's reference implementations
	is.NoErr(Verify(specSecret, specID, "1614265330", "v1,bogus "+specSig, []byte(specBody), time.Unix(specTS+60, 0), 5*time.Minute))
	is.True(errors.Is(Verify(specSecret, specID, "1614265330", specSig, []byte(specBody+" "), time.Unix(specTS, 0), 5*time.Minute), ErrInvalidSignature))  // body changed
	is.True(errors.Is(Verify(specSecret, specID, "1614265330", specSig, []byte(specBody), time.Unix(specTS+3600, 0), 5*time.Minute), ErrInvalidSignature)) // stale
}

func TestNewSecretShape(t *testing.T) {
	is := is.New(t)
	s := NewSecret()
	is.True(strings.HasPrefix(s, "whsec_"))
	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(s, "whsec_"))
	is.NoErr(err)
	is.Equal(len(key), 32)
	is.True(NewSecret() != s) // random
}

func TestSignatureHeaderSignsWithEverySecret(t *testing.T) {
	is := is.New(t)
	a, b := NewSecret(), NewSecret()
	ts := time.Unix(1700000000, 0)
	h, err := SignatureHeader([]string{a, b}, "evt_1", ts, []byte("{}"))
	is.NoErr(err)
	parts := strings.Fields(h)
	is.Equal(len(parts), 2)
	// Independent computation: HMAC-SHA256 keyed by the decoded secret over id.ts.body.
	for i, s := range []string{a, b} {
		key, _ := base64.StdEncoding.DecodeString(strings.TrimPrefix(s, "whsec_"))
		m := hmac.New(sha256.New, key)
		fmt.Fprintf(m, "evt_1.%d.{}", ts.Unix())
		is.Equal(parts[i], "v1,"+base64.StdEncoding.EncodeToString(m.Sum(nil)))
	}
}

func TestRetryDelay(t *testing.T) {
	is := is.New(t)
	want := []time.Duration{30 * time.Second, time.Minute, 2 * time.Minute, 4 * time.Minute, 8 * time.Minute, 16 * time.Minute, 32 * time.Minute, time.Hour, time.Hour}
	for i, w := range want {
		is.Equal(RetryDelay(i+1, 0), w) // nominal schedule without jitter
	}
	is.Equal(RetryDelay(1, 0.999), 37*time.Second) // at most +25%
	is.Equal(RetryDelay(100, 0.5), time.Hour+7*time.Minute+30*time.Second)
}

func TestValidateURL(t *testing.T) {
	long := "https://example.com/" + strings.Repeat("a", MaxURLLength)
	for _, tc := range []struct {
		url         string
		live, allow bool
		ok          bool
	}{
		{"http://localhost:4242/hook", false, false, true},
		{"http://127.0.0.1/hook", false, false, true},
		{"https://example.com/hook", true, false, true},
		{"http://example.com/hook", true, false, false}, // live needs https
		{"https://127.0.0.1/hook", true, false, false},
		{"https://10.1.2.3/hook", true, false, false},
		{"https://169.254.169.254/latest/meta-data", true, false, false},
		{"https://[::1]/hook", true, false, false},
		{"https://[::ffff:127.0.0.1]/hook", true, false, false},
		{"https://[fd00::1]/hook", true, false, false},
		{"https://100.64.0.1/hook", true, false, false},
		{"https://0.0.0.0/hook", true, false, false},
		{"https://localhost/hook", true, false, false},
		{"https://api.localhost/hook", true, false, false},
		{"https://2130706433/hook", true, false, false}, // 127.0.0.1 as one number
		{"https://0x7f000001/hook", true, false, false},
		{"https://127.1/hook", true, false, false},
		{"https://017700000001/hook", true, false, false},
		{"https://0x7F.1/hook", true, false, false},
		{"https://134744072/hook", true, false, false}, // 8.8.8.8: not dotted decimal
		{"https://1e100.net/hook", true, false, true},  // a name, not a number
		{"https://127.0.0.1/hook", true, true, true},   // --allow-private-webhooks
		{"http://127.0.0.1/hook", true, true, false},   // still https in live
		{"ftp://example.com/", false, false, false},
		{"/relative", false, false, false},
		{"https://user:pw@example.com/", false, false, false},
		{"https://example.com/#frag", false, false, false},
		{"https://example.com:99999/", false, false, false},
		{long, false, false, false},
		{"", false, false, false},
	} {
		_, err := ValidateURL(tc.url, tc.live, tc.allow)
		if (err == nil) != tc.ok {
			t.Errorf("ValidateURL(%.60q, live=%v, allow=%v) = %v; want ok=%v", tc.url, tc.live, tc.allow, err, tc.ok)
		}
		if err != nil {
			if e, ok := domain.AsError(err); !ok || e.Param != "url" || e.Status != 400 {
				t.Errorf("ValidateURL(%.60q): want a 400 naming url, got %v", tc.url, err)
			}
		}
	}
}

type fakeResolver map[string][]netip.Addr

func (f fakeResolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	if a, ok := f[host]; ok {
		return a, nil
	}
	return nil, errors.New("no such host")
}

func TestCheckURLResolvesLiveHosts(t *testing.T) {
	is := is.New(t)
	r := fakeResolver{
		"public.example":   {netip.MustParseAddr("93.184.216.34")},
		"internal.example": {netip.MustParseAddr("93.184.216.34"), netip.MustParseAddr("10.0.0.5")},
		"meta.example":     {netip.MustParseAddr("169.254.169.254")},
	}
	ctx := context.Background()
	is.NoErr(CheckURL(ctx, "https://public.example/h", true, false, r))
	is.True(CheckURL(ctx, "https://internal.example/h", true, false, r) != nil) // any private answer refuses
	is.True(CheckURL(ctx, "https://meta.example/h", true, false, r) != nil)
	is.NoErr(CheckURL(ctx, "https://nowhere.example/h", true, false, r))  // unresolved: checked when dialled
	is.NoErr(CheckURL(ctx, "https://nowhere.example/h", false, false, r)) // test mode does not resolve
	is.NoErr(CheckURL(ctx, "https://internal.example/h", true, true, r))  // allowed private
}

func TestLegacyIPv4(t *testing.T) {
	for host, want := range map[string]string{"2130706433": "127.0.0.1", "0x7f000001": "127.0.0.1", "127.1": "127.0.0.1",
		"017700000001": "127.0.0.1", "0177.0.0.1": "127.0.0.1", "10.1.258": "10.1.1.2", "0": "0.0.0.0"} {
		got, ok := legacyIPv4(host)
		if !ok || got.String() != want {
			t.Errorf("legacyIPv4(%q) = %v, %v; want %s", host, got, ok, want)
		}
	}
	for _, host := range []string{"example.com", "1e100", "256.1.1.1.1", "4294967296", "1.2.3.256", "08", "a.b"} {
		if got, ok := legacyIPv4(host); ok {
			t.Errorf("legacyIPv4(%q) = %v; want no address", host, got)
		}
	}
}

func TestBlocked(t *testing.T) {
	for _, a := range []string{"127.0.0.1", "10.0.0.1", "172.16.0.1", "192.168.1.1", "169.254.169.254", "100.64.0.1", "0.0.0.0",
		"224.0.0.1", "255.255.255.255", "::1", "::", "fe80::1", "fc00::1", "fd12::1", "::ffff:10.0.0.1", "64:ff9b::a00:1", "2002:7f00:1::", "ff02::1"} {
		if !Blocked(netip.MustParseAddr(a)) {
			t.Errorf("Blocked(%s) = false", a)
		}
	}
	for _, a := range []string{"93.184.216.34", "8.8.8.8", "2606:4700::1111", "64:ff9b::808:808"} {
		if Blocked(netip.MustParseAddr(a)) {
			t.Errorf("Blocked(%s) = true", a)
		}
	}
}

// TestGuardedClientRefusesLoopbackByName dials a name that resolves to loopback: the check runs
// on the address actually dialled, so it also holds after a DNS change (rebinding).
func TestGuardedClientRefusesLoopbackByName(t *testing.T) {
	is := is.New(t)
	var hit atomic.Bool
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hit.Store(true) }))
	defer srv.Close()
	d := New(Options{Timeout: 2 * time.Second})
	url := strings.Replace(srv.URL, "127.0.0.1", "localhost", 1)
	_, err := d.live.Post(url, "application/json", strings.NewReader("{}"))
	var blocked *BlockedAddressError
	is.True(errors.As(err, &blocked)) // refused at dial time
	is.True(blocked.Addr.IsLoopback())
	is.True(!hit.Load())
	res, err := d.test.Post(url, "application/json", strings.NewReader("{}")) // test mode may use loopback
	is.NoErr(err)
	res.Body.Close()
	is.True(hit.Load())
	d2 := New(Options{Timeout: 2 * time.Second, AllowPrivate: true})
	res, err = d2.live.Post(url, "application/json", strings.NewReader("{}"))
	is.NoErr(err) // --allow-private-webhooks
	res.Body.Close()
}
