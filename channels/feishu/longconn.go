package feishu

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strconv"
	"sync"
	"time"

	"github.com/nanobot-durable/nanobot/channels"
	"github.com/nanobot-durable/nanobot/channels/feishu/pbbp2"
	"github.com/nanobot-durable/nanobot/channels/wsconn"
)

// The long connection (Feishu's "WebSocket event mode"): the app asks for
// an endpoint with its id and secret, dials it, pings, takes events in
// data frames (fragmented by sum/seq), and answers each with an ack frame.

// clientConfig is the connection's timing as Feishu hands it out (seconds).
type clientConfig struct {
	ReconnectCount    int `json:"ReconnectCount"`
	ReconnectInterval int `json:"ReconnectInterval"`
	ReconnectNonce    int `json:"ReconnectNonce"`
	PingInterval      int `json:"PingInterval"`
}

// defaultClientConfig is what the SDKs use before Feishu says otherwise.
var defaultClientConfig = clientConfig{ReconnectCount: -1, ReconnectInterval: 120, ReconnectNonce: 30, PingInterval: 120}

// Endpoint answers' codes that a new attempt cannot fix by itself.
var fatalEndpoint = map[int]string{
	403:        "forbidden (is the long connection enabled for the app?)",
	514:        "authentication failed (check channels.feishu.appId and appSecret)",
	1000040350: "too many connections for the app",
}

// minWait keeps a reconnect loop from spinning on a zero interval.
const minWait = 100 * time.Millisecond

// endpointError is a refusal of the endpoint discovery.
type endpointError struct {
	Code int
	Msg  string
}

func (e *endpointError) Error() string {
	return fmt.Sprintf("feishu ws endpoint: code %d: %s", e.Code, e.Msg)
}

// endpoint asks Feishu where to connect: POST /callback/ws/endpoint.
func (c *Channel) endpoint(ctx context.Context) (string, *clientConfig, error) {
	body, _ := json.Marshal(map[string]string{"AppID": c.cfg.AppID, "AppSecret": c.cfg.AppSecret})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.cfg.base()+"/callback/ws/endpoint", bytes.NewReader(body))
	if err != nil {
		return "", nil, fmt.Errorf("feishu ws endpoint: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("locale", "zh")
	resp, err := c.http.Do(req)
	if err != nil {
		return "", nil, fmt.Errorf("feishu ws endpoint: %w", err)
	}
	defer resp.Body.Close()
	var got struct {
		Code int    `json:"code"`
		Msg  string `json:"msg"`
		Data struct {
			URL          string        `json:"URL"`
			ClientConfig *clientConfig `json:"ClientConfig"`
		} `json:"data"`
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&got); err != nil {
		return "", nil, fmt.Errorf("feishu ws endpoint: HTTP %d: %w", resp.StatusCode, err)
	}
	if got.Code != 0 || got.Data.URL == "" {
		return "", nil, &endpointError{Code: got.Code, Msg: got.Msg}
	}
	return got.Data.URL, got.Data.ClientConfig, nil
}

// connLoop holds the long connection until ctx ends: on every drop it
// waits ReconnectNonce (a random part of it) and then ReconnectInterval
// between attempts, as Feishu's client config says; until Feishu hands
// out its config, the usual backoff.
func (c *Channel) connLoop(ctx context.Context) {
	cc := defaultClientConfig
	attempt := 0
	c.Reconnect(ctx, channels.Backoff{}, func(ctx context.Context) error {
		configured := cc != defaultClientConfig
		connected, err := c.connectOnce(ctx, &cc)
		var ee *endpointError
		switch {
		case ctx.Err() != nil:
			return err
		case errors.As(err, &ee) && fatalEndpoint[ee.Code] != "":
			return channels.Fatal(fmt.Errorf("feishu refused the long connection: %s: %w", fatalEndpoint[ee.Code], err))
		case connected:
			attempt = 1 // a connection that was up: the first retry only waits the nonce
			return channels.RetryIn(max(nonce(cc), minWait), fmt.Errorf("feishu long connection dropped: %w", err))
		case !configured && cc == defaultClientConfig:
			return fmt.Errorf("feishu long connection failed: %w", err)
		}
		attempt++
		wait := time.Duration(cc.ReconnectInterval) * time.Second
		if attempt == 1 {
			wait = nonce(cc)
		}
		return channels.RetryIn(max(wait, minWait), fmt.Errorf("feishu long connection failed: %w", err))
	})
}

// nonce is the random wait before a first reconnect, so a fleet of bots
// does not come back at once.
func nonce(cc clientConfig) time.Duration {
	if cc.ReconnectNonce <= 0 {
		return 0
	}
	return time.Duration(rand.Int64N(int64(cc.ReconnectNonce) * int64(time.Second)))
}

// conn is one open long connection.
type conn struct {
	ws      *wsconn.Conn
	service int32
	cfgMu   sync.Mutex
	cc      *clientConfig
	ping    chan time.Duration // a new ping interval from a pong
	parts   map[string]*fragments
}

// fragments are the pieces of one fragmented payload, by seq.
type fragments struct {
	got     [][]byte
	n       int
	started time.Time
}

// fragmentTTL drops the pieces of a payload whose rest never came.
const fragmentTTL = 5 * time.Second

func (k *conn) write(f *pbbp2.Frame) error { return k.ws.WriteBinary(f.Marshal()) }

// connectOnce discovers the endpoint, dials it and serves it until it
// drops; connected tells whether the socket was ever open.
func (c *Channel) connectOnce(ctx context.Context, cc *clientConfig) (connected bool, err error) {
	ectx, cancel := context.WithTimeout(ctx, callTimeout)
	wsURL, got, err := c.endpoint(ectx)
	cancel()
	if err != nil {
		return false, err
	}
	if got != nil {
		*cc = *got
	}
	u, err := url.Parse(wsURL)
	if err != nil {
		return false, fmt.Errorf("feishu ws endpoint url: %w", err)
	}
	service, _ := strconv.ParseInt(u.Query().Get("service_id"), 10, 32)
	ws, err := wsconn.Dial(ctx, wsURL, wsconn.Options{DialTimeout: callTimeout})
	if err != nil {
		var de *wsconn.DialError
		if errors.As(err, &de) && de.Header.Get("Handshake-Status") != "" {
			code, _ := strconv.Atoi(de.Header.Get("Handshake-Autherrcode"))
			if code == 0 {
				code, _ = strconv.Atoi(de.Header.Get("Handshake-Status"))
			}
			return false, &endpointError{Code: code, Msg: de.Header.Get("Handshake-Msg")}
		}
		return false, fmt.Errorf("feishu ws dial: %w", err)
	}
	defer ws.Close()
	k := &conn{ws: ws, service: int32(service), cc: cc, ping: make(chan time.Duration, 1), parts: map[string]*fragments{}}
	c.Up()
	c.Log.Info("feishu long connection open", "service_id", service, "device_id", u.Query().Get("device_id"))
	pingCtx, stopPing := context.WithCancel(ctx)
	defer stopPing()
	go c.pingLoop(pingCtx, k, time.Duration(cc.PingInterval)*time.Second)
	return true, c.readLoop(ctx, k)
}

// pingLoop sends a ping frame every PingInterval (a pong may change it).
func (c *Channel) pingLoop(ctx context.Context, k *conn, every time.Duration) {
	for {
		if err := k.write(&pbbp2.Frame{Service: k.service, Method: pbbp2.MethodControl,
			Headers: []pbbp2.Header{{Key: pbbp2.HeaderType, Value: pbbp2.TypePing}}}); err != nil {
			return // the read loop sees the drop
		}
		t := time.NewTimer(max(every, minWait))
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case d := <-k.ping:
			t.Stop()
			every = d
		case <-t.C:
		}
	}
}

// readLoop takes frames until the socket drops.
func (c *Channel) readLoop(ctx context.Context, k *conn) error {
	for {
		data, err := k.ws.Read()
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return fmt.Errorf("feishu ws read: %w", err)
		}
		c.Touch()
		f, err := pbbp2.Unmarshal(data)
		if err != nil {
			c.Log.Warn("feishu ws: bad frame dropped", "error", err, "bytes", len(data))
			continue
		}
		switch f.Method {
		case pbbp2.MethodControl:
			c.control(k, f)
		case pbbp2.MethodData:
			c.data(k, f)
		default:
			c.Log.Warn("feishu ws: frame of unknown method dropped", "method", f.Method, "seq_id", f.SeqID)
		}
	}
}

// control handles a pong: its payload may carry a new client config.
func (c *Channel) control(k *conn, f *pbbp2.Frame) {
	if f.Header(pbbp2.HeaderType) != pbbp2.TypePong || len(f.Payload) == 0 {
		return
	}
	var cc clientConfig
	if err := json.Unmarshal(f.Payload, &cc); err != nil {
		c.Log.Warn("feishu ws: unreadable pong payload dropped", "error", err)
		return
	}
	k.cfgMu.Lock()
	old := k.cc.PingInterval
	*k.cc = cc
	k.cfgMu.Unlock()
	if cc.PingInterval != old {
		select {
		case k.ping <- time.Duration(cc.PingInterval) * time.Second:
		default:
		}
	}
}

// data reassembles a data frame's payload and hands an event over, with
// the ack to send once it is taken in.
func (c *Channel) data(k *conn, f *pbbp2.Frame) {
	msgID := f.Header(pbbp2.HeaderMessageID)
	payload := f.Payload
	if sum, _ := strconv.Atoi(f.Header(pbbp2.HeaderSum)); sum > 1 {
		seq, _ := strconv.Atoi(f.Header(pbbp2.HeaderSeq))
		if payload = k.combine(msgID, sum, seq, f.Payload); payload == nil {
			return // more pieces to come
		}
	}
	if f.Header(pbbp2.HeaderType) != pbbp2.TypeEvent {
		return // card callbacks are not used; Feishu's SDKs do not ack them either
	}
	start := time.Now()
	c.takeEvent(msgID, payload, func() {
		ack := *f
		ack.Headers = append([]pbbp2.Header(nil), f.Headers...)
		ack.SetHeader(pbbp2.HeaderBizRT, strconv.FormatInt(time.Since(start).Milliseconds(), 10))
		ack.Payload = []byte(`{"code":200,"headers":null,"data":null}`)
		if err := k.write(&ack); err != nil {
			c.Log.Warn("feishu ws: event not acked; Feishu will deliver it again", "message_id", msgID, "error", err)
		}
	})
}

// combine keeps a fragment and returns the whole payload once all are in.
func (k *conn) combine(msgID string, sum, seq int, piece []byte) []byte {
	for id, p := range k.parts {
		if time.Since(p.started) > fragmentTTL {
			delete(k.parts, id)
		}
	}
	if seq < 0 || seq >= sum || sum > 1024 {
		return nil
	}
	p := k.parts[msgID]
	if p == nil || len(p.got) != sum {
		p = &fragments{got: make([][]byte, sum), started: time.Now()}
		k.parts[msgID] = p
	}
	if p.got[seq] == nil {
		p.got[seq] = append([]byte{}, piece...)
		p.n++
	}
	if p.n < sum {
		return nil
	}
	delete(k.parts, msgID)
	return bytes.Join(p.got, nil)
}
