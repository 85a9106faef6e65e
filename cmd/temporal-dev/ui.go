package main

import (
	"fmt"
	"log/slog"
	"net"
	"strconv"
	"time"

	uiserver "github.com/temporalio/ui-server/v2/server"
	uiconfig "github.com/temporalio/ui-server/v2/server/config"
	"github.com/temporalio/ui-server/v2/server/server_options"
)

// webUI wraps the embedded Temporal Web UI server.
type webUI struct {
	srv  *uiserver.Server
	done chan error
}

// startUI serves the embedded UI assets on ip:port, proxying API calls to the frontend.
func startUI(ip string, port int, frontend string, logger *slog.Logger) (*webUI, error) {
	// ui-server exits the process on a listen error, so check the port ourselves first.
	if err := checkListen("UI", ip, port); err != nil {
		return nil, err
	}
	cfg := &uiconfig.Config{
		TemporalGRPCAddress: frontend,
		Host:                ip,
		Port:                port,
		EnableUI:            true,
		DefaultNamespace:    defaultNamespace,
		// Plain http on localhost: the CSRF cookie must not require https.
		CORS:             uiconfig.CORS{CookieInsecure: true},
		HideLogs:         true,
		DisableNewsFetch: true, // no outbound fetches from a dev tool
	}
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("UI config: %w", err)
	}
	srv := uiserver.NewServer(server_options.WithConfigProvider(cfg))
	ui := &webUI{srv: srv, done: make(chan error, 1)}
	go func() {
		ui.done <- srv.Start()
	}()
	// Wait until it accepts connections, so the printed URL works and stop() cannot race Start.
	addr := net.JoinHostPort(dialHost(ip), strconv.Itoa(port))
	deadline := time.Now().Add(10 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			_ = c.Close()
			break
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("UI server on %s did not start: %w", addr, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	logger.Debug("UI server started", "addr", addr)
	return ui, nil
}

// stop closes the UI's listener and connections.
func (u *webUI) stop() {
	if u == nil {
		return
	}
	u.srv.Stop()
	select {
	case <-u.done:
	case <-time.After(5 * time.Second):
	}
}
