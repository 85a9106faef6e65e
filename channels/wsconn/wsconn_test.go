package wsconn

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/channels/peerkit"
)

// echoPeer answers each message with itself, counts pings, and hands its
// sockets to the test.
func echoPeer(t *testing.T) (string, *atomic.Int32, chan *peerkit.Socket) {
	var pings atomic.Int32
	sockets := make(chan *peerkit.Socket, 4)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s, err := peerkit.Upgrade(w, r)
		if err != nil {
			return
		}
		s.PingsSeen(func() { pings.Add(1) })
		sockets <- s
		for {
			data, err := s.Read()
			if err != nil {
				return
			}
			_ = s.SendBinary(data)
		}
	}))
	t.Cleanup(srv.Close)
	return peerkit.WSURL(srv.URL, "/"), &pings, sockets
}

func TestServeOpensReadsAndEndsWithThePeersCloseCode(t *testing.T) {
	url, _, sockets := echoPeer(t)
	var got []string
	err := Serve(context.Background(), url, Options{}, func(c *Conn) error {
		return c.WriteJSON(map[string]string{"op": "identify"})
	}, func(c *Conn, data []byte) error {
		got = append(got, string(data))
		if len(got) == 1 {
			(<-sockets).Close(4004, "authentication failed")
		}
		return nil
	})
	require.Equal(t, []string{`{"op":"identify"}`}, got, "the open hook's message came back")
	require.Equal(t, 4004, CloseCode(err))
}

func TestPingsKeepASocketAliveAndSilenceKillsIt(t *testing.T) {
	url, pings, sockets := echoPeer(t)
	c, err := Dial(context.Background(), url, Options{PingEvery: 10 * time.Millisecond, ReadTimeout: time.Second})
	require.NoError(t, err)
	defer c.Close()
	<-sockets
	require.Eventually(t, func() bool { return pings.Load() >= 3 }, 5*time.Second, 5*time.Millisecond, "pings sent")

	quiet, err := Dial(context.Background(), url, Options{ReadTimeout: 50 * time.Millisecond})
	require.NoError(t, err)
	<-sockets
	_, err = quiet.Read() // the peer says nothing and no ping asks it to
	var ne interface{ Timeout() bool }
	require.True(t, errors.As(err, &ne) && ne.Timeout(), "a silent socket is taken for dead: %v", err)
	require.Equal(t, -1, CloseCode(err))
	select {
	case <-quiet.Done():
	default:
		t.Fatal("a failed read closes the connection")
	}
}

func TestContextEndClosesAndHeartbeatFailureCloses(t *testing.T) {
	url, _, sockets := echoPeer(t)
	ctx, cancel := context.WithCancel(context.Background())
	c, err := Dial(ctx, url, Options{})
	require.NoError(t, err)
	<-sockets
	cancel()
	_, err = c.Read()
	require.Error(t, err, "a read blocked on the socket returns when ctx ends")

	c2, err := Dial(context.Background(), url, Options{})
	require.NoError(t, err)
	<-sockets
	beats := 0
	c2.Every(5*time.Millisecond, func() error {
		beats++
		if beats == 3 {
			return errors.New("heartbeat not acknowledged")
		}
		return nil
	})
	select {
	case <-c2.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("a failed heartbeat closes the connection")
	}
	require.Equal(t, 3, beats)
}
