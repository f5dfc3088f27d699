package main

import (
	"fmt"
	"os"
	"testing"

	"github.com/matryer/is"
)

// TestMain lets the test binary be the floor scenario's child, as the loadtest binary is.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == "-floor-server" {
		if err := floorServerMain(os.Args[2:]); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// TestFloorScenario runs -scenario floor end to end: the child server starts on a loopback
// port with its own certificate, answers the POSTs over verified HTTPS with the fixed JSON, and
// stops.
func TestFloorScenario(t *testing.T) {
	is := is.New(t)
	is.NoErr(run([]string{"-scenario", "floor", "-c", "2", "-n", "50", "-warmup", "100ms", "-dir", t.TempDir()}))

	srv, err := startFloorServer(t.TempDir(), t.TempDir()+"/floor.log")
	is.NoErr(err)
	defer srv.stop()
	clients, tr, err := newClients(config{conns: 1, cacert: srv.cacert}, srv.url, srv.cacert, "floor", nil)
	is.NoErr(err)
	defer tr.CloseIdleConnections()
	st, body, err := clients[0].do("POST", "/floor", fmt.Appendf(nil, floorRequest, 1, 2, 3))
	is.NoErr(err)
	is.Equal(st, 200)
	is.Equal(string(body), string(floorAnswer))
	st, _, err = clients[0].do("POST", "/floor", []byte(`{"amount":`))
	is.NoErr(err)
	is.Equal(st, 400) // the body is read and checked
}
