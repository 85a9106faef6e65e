package main

import (
	"fmt"
	"net"
	"strconv"
	"strings"

	"github.com/nanobot-durable/nanobot/channels/web"
	"github.com/nanobot-durable/nanobot/config"
	"github.com/nanobot-durable/nanobot/internal/hostcheck"
)

// exposure is who can reach this nanobot's HTTP surfaces and how it reaches
// Temporal: the web chat, the API and Temporal lines of `nanobot status`'s Security block.
type exposure struct {
	Web, API listenerExposure
	Temporal temporalExposure
}

// listenerExposure is one HTTP surface as configured.
type listenerExposure struct {
	Enabled  bool
	Addr     string
	Loopback bool // only this machine reaches it
	Token    bool // channels.web.token / api.apiKey is set
	// AllowedHosts are the names configured beside 127.0.0.1, localhost, [::1] and the bound IP.
	AllowedHosts []string
}

// temporalExposure is how this process dials Temporal.
type temporalExposure struct {
	Address  string
	Embedded bool // TEMPORAL_ADDRESS unset: the embedded temporal-dev, plaintext on loopback
	TLS      bool
	MTLS     bool // a client certificate is presented
	APIKey   bool
	Err      string // the TLS variables do not load
}

// securityExposure reads the config and environment the way the gateway does.
func securityExposure(cfg *config.Config, getenv func(string) string) exposure {
	listener := func(enabled bool, host string, port int, token bool, allowed []string) listenerExposure {
		if host == "" {
			host = "127.0.0.1"
		}
		return listenerExposure{Enabled: enabled, Addr: net.JoinHostPort(host, strconv.Itoa(port)),
			Loopback: hostcheck.Loopback(host), Token: token, AllowedHosts: allowed}
	}
	w, _ := web.ReadConfig(cfg) // checked when the config was loaded
	a := cfg.API
	e := exposure{
		Web: listener(w.EnabledOr(getenv("TEMPORAL_ADDRESS") == ""), w.Host, w.Port, w.Token != "", w.AllowedHosts),
		API: listener(a.Enabled, a.Host, a.Port, a.APIKey != "", a.AllowedHosts),
	}
	e.Temporal.Address = getenv("TEMPORAL_ADDRESS")
	if e.Temporal.Address == "" {
		port, _ := devPorts()
		e.Temporal.Address, e.Temporal.Embedded = net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), true
	}
	sec, err := temporalSecurityFromEnv(getenv)
	if err != nil {
		e.Temporal.Err = err.Error()
		return e
	}
	e.Temporal.TLS, e.Temporal.MTLS, e.Temporal.APIKey = sec.TLS != nil, sec.MTLS, sec.APIKey != ""
	return e
}

// lines are the exposure in words, one surface a line.
func (e exposure) lines() []string {
	return []string{"Web chat: " + e.Web.describe("channels.web.token"), "API:      " + e.API.describe("api.apiKey"), "Temporal: " + e.Temporal.describe()}
}

func (l listenerExposure) describe(tokenKey string) string {
	if !l.Enabled {
		return "off"
	}
	reach := "this machine only"
	if !l.Loopback {
		reach = "beyond this machine"
	}
	token := "no " + tokenKey
	if l.Token {
		token = tokenKey + " required"
	}
	hosts := "127.0.0.1, localhost, [::1]"
	if host, _, _ := net.SplitHostPort(l.Addr); !l.Loopback {
		if ip := net.ParseIP(host); ip != nil && ip.IsUnspecified() {
			hosts += ", any IP"
		} else {
			hosts += ", " + host
		}
	}
	if len(l.AllowedHosts) > 0 {
		hosts += ", " + strings.Join(l.AllowedHosts, ", ")
	}
	return fmt.Sprintf("%s (%s), %s, answers to %s", l.Addr, reach, token, hosts)
}

func (t temporalExposure) describe() string {
	where := t.Address
	if t.Embedded {
		where += " (embedded temporal-dev, loopback only)"
	}
	switch {
	case t.Err != "":
		return where + ", TLS settings do not load: " + t.Err
	case t.MTLS:
		where += ", TLS with a client certificate (mTLS)"
	case t.TLS:
		where += ", TLS without a client certificate"
	default:
		where += ", plaintext"
	}
	if t.APIKey {
		where += ", API key"
	}
	return where
}
