package integration

import (
	"net/http"
	"net/http/httputil"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/internal/testenv"
	"github.com/nanobot-durable/nanobot/providers/modeltest"
)

// holdingProxy stands between the gateway and the Bot API emulator and
// holds the nth sendMessage: it never reaches the emulator, so the test
// can kill the gateway while that part is in flight.
type holdingProxy struct {
	srv     *http.Server
	url     string
	mu      sync.Mutex
	sends   int
	hold    int
	holding chan struct{} // closed when the held call arrives
	release chan struct{} // closed to fail the held call
}

func startHoldingProxy(t *testing.T, target string, hold int) *holdingProxy {
	t.Helper()
	u, err := url.Parse(target)
	require.NoError(t, err)
	p := &holdingProxy{hold: hold, holding: make(chan struct{}), release: make(chan struct{})}
	rp := httputil.NewSingleHostReverseProxy(u)
	port := testenv.FreePort(t)
	p.url = "http://127.0.0.1:" + strconv.Itoa(port)
	p.srv = &http.Server{Addr: "127.0.0.1:" + strconv.Itoa(port), Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/sendMessage") {
			p.mu.Lock()
			p.sends++
			n := p.sends
			p.mu.Unlock()
			if n == p.hold {
				close(p.holding)
				<-p.release
				http.Error(w, "held", http.StatusBadGateway)
				return
			}
		}
		rp.ServeHTTP(w, r)
	})}
	go func() { _ = p.srv.ListenAndServe() }()
	t.Cleanup(func() {
		select {
		case <-p.release:
		default:
			close(p.release)
		}
		_ = p.srv.Close()
	})
	return p
}

// TestDeliveryResumesOnTheNextGateway: a gateway is killed while part 3 of
// a 3-part reply is in flight (parts 1 and 2 shown); the next gateway's
// retry reads the progress from the delivery activity's heartbeat details
// on the Temporal server and sends part 3 only.
func TestDeliveryResumesOnTheNextGateway(t *testing.T) {
	tg := startTelegramEmulator(t)
	dev := testenv.StartDevServer(t)
	parts := []string{strings.Repeat("alpha ", 600), strings.Repeat("bravo ", 600), strings.Repeat("charlie ", 450)}
	model := modeltest.New(modeltest.Text(strings.Join(parts, "\n\n")))
	defer model.Close()
	proxy := startHoldingProxy(t, tg.URL, 3)
	home := testenv.NewHome(t, model.URL(), map[string]any{
		"channels": map[string]any{
			"telegram": map[string]any{"enabled": true, "token": tg.Token, "apiBase": proxy.url, "allowFrom": []string{"1001"}, "streaming": false},
		},
	})
	first, out, errOut := startNanobot(t, home.Env(dev.Addr), "gateway")
	require.Eventually(t, func() bool { return strings.Contains(out.String(), "  telegram: @") }, time.Minute, 50*time.Millisecond, "%s\n%s", out, errOut)

	tg.say(t, tgUser{ID: 1001, FirstName: "Alice", Username: "alice"}, 1001, "private", "tell me a long story")
	select {
	case <-proxy.holding:
	case <-time.After(2 * time.Minute):
		t.Fatalf("part 3 never sent; bot messages: %+v\n%s", tg.botMessages(t, 1001), errOut)
	}
	require.Len(t, tg.botMessages(t, 1001), 2, "parts 1 and 2 are in the chat")
	require.NoError(t, first.Process.Kill())
	_, _ = first.Process.Wait()
	close(proxy.release)

	startChannelGateway(t, home.Env(dev.Addr), "telegram")
	var texts []string
	require.Eventually(t, func() bool {
		texts = texts[:0]
		for _, m := range tg.botMessages(t, 1001) {
			texts = append(texts, m.Text)
		}
		return len(texts) >= 3
	}, 2*time.Minute, 100*time.Millisecond, "part 3 after the restart")
	var heads []string
	for _, x := range texts {
		heads = append(heads, strings.Fields(x)[0])
	}
	require.Len(t, texts, 3, "each part once; the chat shows parts starting %q", heads)
	for i, want := range parts {
		require.Equal(t, strings.TrimSpace(want), strings.TrimSpace(texts[i]), "part %d", i+1)
	}
	require.Equal(t, 1, model.Count(), "the reply was journaled once; only its delivery was retried")
}
