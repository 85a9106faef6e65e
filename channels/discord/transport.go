package discord

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// discordHost is where discordgo sends every REST call.
const discordHost = "discord.com"

// clients are the HTTP client (REST, downloads) and the proxy of the
// gateway's socket, both channels.discord.proxy when set; with apiBase the
// REST calls go there instead of discord.com.
func clients(cfg Config) (*http.Client, func(*http.Request) (*url.URL, error), error) {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	if p := strings.TrimSpace(cfg.Proxy); p != "" {
		pu, err := url.Parse(p)
		if err != nil {
			return nil, nil, fmt.Errorf("channels.discord.proxy: %w", err)
		}
		// nanobot takes the credentials only as a pair.
		if cfg.ProxyUsername != "" && cfg.ProxyPassword != "" {
			pu.User = url.UserPassword(cfg.ProxyUsername, cfg.ProxyPassword)
		}
		tr.Proxy = http.ProxyURL(pu)
	}
	var rt http.RoundTripper = tr
	if b := strings.TrimSpace(cfg.APIBase); b != "" {
		base, err := url.Parse(strings.TrimRight(b, "/"))
		if err != nil || (base.Scheme != "http" && base.Scheme != "https") || base.Host == "" {
			return nil, nil, fmt.Errorf("channels.discord.apiBase %q is not an http(s) URL", b)
		}
		rt = rebase{base: base, next: tr}
	}
	return &http.Client{Transport: rt, Timeout: 60 * time.Second}, tr.Proxy, nil
}

// rebase sends discordgo's calls to https://discord.com/... to apiBase.
// discordgo's endpoints are package variables shared by every session;
// rewriting here keeps each channel's base its own.
type rebase struct {
	base *url.URL
	next http.RoundTripper
}

func (r rebase) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.URL.Host != discordHost {
		return r.next.RoundTrip(req)
	}
	out := req.Clone(req.Context())
	u := *req.URL
	u.Scheme, u.Host = r.base.Scheme, r.base.Host
	u.Path = r.base.Path + req.URL.Path
	u.RawPath = ""
	if req.URL.RawPath != "" {
		u.RawPath = r.base.EscapedPath() + req.URL.RawPath
	}
	out.URL, out.Host = &u, ""
	return r.next.RoundTrip(out)
}
