package main

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/config"
	"github.com/nanobot-durable/nanobot/internal/testenv"
)

func TestSecurityExposureSaysWhoReachesWhat(t *testing.T) {
	t.Setenv("NANOBOT_DEV_PORT", "17233") // devPorts reads the process's own environment
	cfg := config.Default()
	e := securityExposure(cfg, envOf(nil))
	require.Equal(t, []string{
		"Web chat: 127.0.0.1:18790 (this machine only), no channels.web.token, answers to 127.0.0.1, localhost, [::1]",
		"API:      off",
		"Temporal: 127.0.0.1:17233 (embedded temporal-dev, loopback only), plaintext",
	}, e.lines())

	c := testenv.NewCerts(t)
	require.NoError(t, cfg.SetChannelBlock("web", map[string]any{"host": "0.0.0.0", "token": "s3cret", "allowedHosts": []string{"nanobot.lan"}}))
	cfg.API.Enabled, cfg.API.Host, cfg.API.APIKey = true, "192.168.1.5", "k"
	e = securityExposure(cfg, envOf(map[string]string{
		"TEMPORAL_ADDRESS": "temporal.example:7233", "TEMPORAL_TLS_CERT": c.ClientCert, "TEMPORAL_TLS_KEY": c.ClientKey, "TEMPORAL_TLS_CA": c.CA,
	}))
	require.False(t, e.Web.Enabled, "against an external cluster the chat is off unless enabled")
	require.True(t, e.Temporal.MTLS)
	require.NoError(t, cfg.SetChannelBlock("web", map[string]any{"enabled": true}))
	e = securityExposure(cfg, envOf(map[string]string{"TEMPORAL_ADDRESS": "temporal.example:7233", "TEMPORAL_API_KEY": "tk"}))
	require.Equal(t, []string{
		"Web chat: 0.0.0.0:18790 (beyond this machine), channels.web.token required, answers to 127.0.0.1, localhost, [::1], any IP, nanobot.lan",
		"API:      192.168.1.5:8900 (beyond this machine), api.apiKey required, answers to 127.0.0.1, localhost, [::1], 192.168.1.5",
		"Temporal: temporal.example:7233, TLS without a client certificate, API key",
	}, e.lines())

	e = securityExposure(cfg, envOf(map[string]string{"TEMPORAL_ADDRESS": "temporal.example:7233", "TEMPORAL_TLS_CA": "/nonexistent/ca.pem"}))
	require.Contains(t, e.lines()[2], "TLS settings do not load: TEMPORAL_TLS_CA: open /nonexistent/ca.pem")
}
