package feishupeer

import (
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"

	"github.com/gorilla/websocket"

	"github.com/nanobot-durable/nanobot/channels/feishu/pbbp2"
	"github.com/nanobot-durable/nanobot/channels/peerkit"
)

// endpoint is POST /callback/ws/endpoint: the app's id and secret buy the
// long connection's URL and its client config.
func (p *Peer) endpoint(w http.ResponseWriter, r *http.Request) {
	var req struct{ AppID, AppSecret string }
	_ = json.NewDecoder(r.Body).Decode(&req)
	p.record(r, "")
	if req.AppID != AppID || req.AppSecret != AppSecret {
		writeJSON(w, http.StatusOK, map[string]any{"code": 514, "msg": "auth failed"})
		return
	}
	if f := p.failure(r); f != nil {
		fail(w, f.status, f.code, "injected failure")
		return
	}
	p.mu.Lock()
	cc := p.config
	p.connections++ // counts discoveries; the socket follows
	n, service := p.connections, p.service
	p.mu.Unlock()
	url := "ws" + strings.TrimPrefix(p.srv.URL, "http") + "/ws?device_id=dev" + strconv.Itoa(n) + "&service_id=" + strconv.Itoa(service)
	writeJSON(w, http.StatusOK, map[string]any{"code": 0, "msg": "ok", "data": map[string]any{"URL": url, "ClientConfig": cc}})
}

// websocket serves one long connection: pings get pongs, acks are recorded.
func (p *Peer) websocket(w http.ResponseWriter, r *http.Request) {
	p.mu.Lock()
	refuse := p.refuse
	p.mu.Unlock()
	if refuse != nil {
		// Feishu refuses the upgrade with its reason in Handshake-* headers.
		w.Header().Set("Handshake-Status", strconv.Itoa(refuse.status))
		w.Header().Set("Handshake-Msg", refuse.msg)
		if refuse.authErr != 0 {
			w.Header().Set("Handshake-Autherrcode", strconv.Itoa(refuse.authErr))
		}
		w.WriteHeader(http.StatusForbidden)
		return
	}
	ws, err := peerkit.UpgradeConn(w, r)
	if err != nil {
		return
	}
	p.mu.Lock()
	if p.conn != nil {
		_ = p.conn.Close() // one connection per app here: the newest wins
	}
	p.conn = ws
	p.mu.Unlock()
	defer func() {
		p.mu.Lock()
		if p.conn == ws {
			p.conn = nil
		}
		p.mu.Unlock()
		_ = ws.Close()
	}()
	for {
		typ, data, err := ws.ReadMessage()
		if err != nil {
			return
		}
		if typ != websocket.BinaryMessage {
			p.t.Errorf("feishupeer: the bot sent a non-binary message: %q", data)
			continue
		}
		f, err := pbbp2.Unmarshal(data)
		if err != nil {
			p.t.Errorf("feishupeer: the bot sent a bad frame: %v", err)
			continue
		}
		switch {
		case f.Method == pbbp2.MethodControl && f.Header(pbbp2.HeaderType) == pbbp2.TypePing:
			p.mu.Lock()
			p.pings++
			cc := p.pongConfig
			p.mu.Unlock()
			pong := &pbbp2.Frame{Service: f.Service, Method: pbbp2.MethodControl, Headers: []pbbp2.Header{{Key: pbbp2.HeaderType, Value: pbbp2.TypePong}}}
			if cc != nil {
				pong.Payload, _ = json.Marshal(cc)
			}
			p.write(ws, pong.Marshal())
		case f.Method == pbbp2.MethodData:
			p.mu.Lock()
			p.acks = append(p.acks, Ack{MessageID: f.Header(pbbp2.HeaderMessageID), Payload: string(f.Payload), BizRT: f.Header(pbbp2.HeaderBizRT)})
			p.mu.Unlock()
		default:
			p.t.Errorf("feishupeer: unexpected frame method %d type %q", f.Method, f.Header(pbbp2.HeaderType))
		}
	}
}

func (p *Peer) write(ws *websocket.Conn, data []byte) bool {
	p.connWrite.Lock()
	defer p.connWrite.Unlock()
	return ws.WriteMessage(websocket.BinaryMessage, data) == nil
}

// Connected tells whether the bot holds the long connection.
func (p *Peer) Connected() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.conn != nil
}

// Connections counts endpoint discoveries that handed out a URL.
func (p *Peer) Connections() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.connections
}

// Pings counts the ping frames the bot sent.
func (p *Peer) Pings() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.pings
}

// Drop closes the long connection without a close frame, as a network drop.
func (p *Peer) Drop() {
	p.mu.Lock()
	ws := p.conn
	p.conn = nil
	p.mu.Unlock()
	if ws != nil {
		_ = ws.Close()
	}
}

// Fragment splits the next event pushed into n data frames (sum/seq).
func (p *Peer) Fragment(n int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.fragment = n
}

// SendRaw pushes bytes as one binary message (a bad frame, say); false if not connected.
func (p *Peer) SendRaw(data []byte) bool {
	p.mu.Lock()
	ws := p.conn
	p.mu.Unlock()
	return ws != nil && p.write(ws, data)
}

// pushEvent sends an event's payload as data frames and keeps them for Redeliver.
func (p *Peer) pushEvent(frameID string, payload []byte) {
	p.mu.Lock()
	n := max(p.fragment, 1)
	p.fragment = 0
	if p.encryptKey != "" {
		payload = encrypt(p.encryptKey, payload)
	}
	service := p.service
	p.mu.Unlock()
	var frames [][]byte
	size := (len(payload) + n - 1) / n
	for i := range n {
		lo, hi := min(i*size, len(payload)), min((i+1)*size, len(payload))
		f := &pbbp2.Frame{SeqID: uint64(i + 1), LogID: 42, Service: int32(service), Method: pbbp2.MethodData,
			Headers: []pbbp2.Header{{Key: pbbp2.HeaderType, Value: pbbp2.TypeEvent}, {Key: pbbp2.HeaderMessageID, Value: frameID},
				{Key: pbbp2.HeaderSum, Value: strconv.Itoa(n)}, {Key: pbbp2.HeaderSeq, Value: strconv.Itoa(i)},
				{Key: pbbp2.HeaderTraceID, Value: "trace-" + frameID}},
			Payload: payload[lo:hi], LogIDNew: "log-" + frameID}
		frames = append(frames, f.Marshal())
	}
	p.mu.Lock()
	p.frames[frameID] = frames
	p.mu.Unlock()
	p.sendFrames(frames)
}

func (p *Peer) sendFrames(frames [][]byte) {
	for _, f := range frames {
		if !p.SendRaw(f) {
			p.t.Errorf("feishupeer: an event was pushed with no long connection open")
			return
		}
	}
}

// Redeliver sends the frames that carried a message's event again, as
// Feishu does with an event it holds unacked.
func (p *Peer) Redeliver(messageID string) {
	p.mu.Lock()
	frames := p.frames["frame-"+messageID]
	p.mu.Unlock()
	p.sendFrames(frames)
}

// EncryptWith makes the events pushed from now on come encrypted with key
// ("" for plain), as for an app with an Encrypt Key.
func (p *Peer) EncryptWith(key string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.encryptKey = key
}

// encrypt wraps a payload as Feishu does: base64(IV | AES-256-CBC(sha256(key), PKCS#7(payload))).
func encrypt(key string, payload []byte) []byte {
	sum := sha256.Sum256([]byte(key))
	block, _ := aes.NewCipher(sum[:])
	pad := aes.BlockSize - len(payload)%aes.BlockSize
	plain := append(append([]byte{}, payload...), bytes.Repeat([]byte{byte(pad)}, pad)...)
	out := make([]byte, aes.BlockSize+len(plain))
	_, _ = rand.Read(out[:aes.BlockSize])
	cipher.NewCBCEncrypter(block, out[:aes.BlockSize]).CryptBlocks(out[aes.BlockSize:], plain)
	wrapped, _ := json.Marshal(map[string]string{"encrypt": base64.StdEncoding.EncodeToString(out)})
	return wrapped
}

// handshakeRefusal is how the WebSocket upgrade is refused.
type handshakeRefusal struct {
	status, authErr int
	msg             string
}

// RefuseHandshake makes the WebSocket upgrade fail with Feishu's
// Handshake-Status (514: auth failed), Handshake-Autherrcode (1000040350:
// too many connections) and Handshake-Msg; status 0 accepts again.
func (p *Peer) RefuseHandshake(status, authErr int, msg string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.refuse = nil
	if status != 0 {
		p.refuse = &handshakeRefusal{status: status, authErr: authErr, msg: msg}
	}
}
