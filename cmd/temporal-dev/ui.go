package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/labstack/echo/v4/middleware"
	"github.com/temporalio/ui-server/v2/server/api"
	"github.com/temporalio/ui-server/v2/server/auth"
	uiconfig "github.com/temporalio/ui-server/v2/server/config"
	"github.com/temporalio/ui-server/v2/server/cors"
	"github.com/temporalio/ui-server/v2/server/csrf"
	"github.com/temporalio/ui-server/v2/server/headers"
	"github.com/temporalio/ui-server/v2/server/route"
	"github.com/temporalio/ui-server/v2/ui"
)

// webUI is the embedded Temporal Web UI on its own listener.
type webUI struct {
	srv  *http.Server
	done chan error
}

// uiOptions are what the Web UI needs beyond its address.
type uiOptions struct {
	frontend string // the frontend's host:port, dialed over gRPC
	tls      uiconfig.TLS
	hosts    *allowedHosts
}

// startUI serves the Web UI on ip:port behind the Host check; the UI's API calls go to the frontend.
func startUI(ip string, port int, o uiOptions, logger *slog.Logger) (*webUI, error) {
	cfg := &uiconfig.Config{
		TemporalGRPCAddress: o.frontend,
		Host:                ip,
		Port:                port,
		TLS:                 o.tls,
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
	h, err := uiHandler(cfg)
	if err != nil {
		return nil, err
	}
	addr := net.JoinHostPort(ip, strconv.Itoa(port))
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("UI port %d on %s is not available: %w", port, ip, err)
	}
	u := &webUI{srv: &http.Server{Handler: o.hosts.guard(h), ReadHeaderTimeout: 10 * time.Second}, done: make(chan error, 1)}
	go func() { u.done <- u.srv.Serve(ln) }()
	logger.Debug("UI server started", "addr", ln.Addr().String())
	return u, nil
}

// uiHandler assembles the Web UI as ui-server's NewServer does (v2.55.0): NewServer keeps its
// handler to itself and listens on its own, leaving no place for the Host check.
func uiHandler(cfg *uiconfig.Config) (http.Handler, error) {
	provider, err := uiconfig.NewConfigProviderWithRefresh(cfg)
	if err != nil {
		return nil, fmt.Errorf("UI config: %w", err)
	}
	cookieSecure := !cfg.CORS.CookieInsecure
	e := echo.New()
	e.HideBanner, e.HidePort = true, true
	e.Use(middleware.Recover())
	e.Use(middleware.Gzip())
	e.Use(cors.CORSMiddleware(cors.CORSConfig{
		AllowHeaders: []string{
			echo.HeaderOrigin, echo.HeaderContentType, echo.HeaderAccept,
			echo.HeaderXCSRFToken, echo.HeaderAuthorization, auth.AuthorizationExtrasHeader, "Caller-Type",
		},
		AllowCredentials: true,
		ConfigProvider:   provider,
	}))
	e.Use(middleware.Secure())
	e.Use(csrf.EnsureTokenCookie(cookieSecure))
	e.Use(middleware.CSRFWithConfig(csrf.MiddlewareConfig(provider, cookieSecure)))
	e.Pre(route.PublicPath(cfg.PublicPath))
	route.SetHealthRoute(e)
	forward := []api.Middleware{headers.WithForwardHeaders([]string{auth.AuthorizationExtrasHeader, "Caller-Type"})}
	if err := route.SetAPIRoutes(e, provider, forward); err != nil {
		return nil, fmt.Errorf("UI API routes: %w", err)
	}
	assets, err := ui.Assets()
	if err != nil {
		return nil, fmt.Errorf("UI assets: %w", err)
	}
	if assets, err = fs.Sub(assets, "local"); err != nil {
		return nil, fmt.Errorf("UI assets: %w", err)
	}
	if err := route.SetUIRoutes(e, cfg.PublicPath, assets, provider); err != nil {
		return nil, fmt.Errorf("UI routes: %w", err)
	}
	route.SetRenderRoute(e, "/")
	return e, nil
}

// stop closes the UI's listener and connections.
func (u *webUI) stop() {
	if u == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := u.srv.Shutdown(ctx); err != nil {
		_ = u.srv.Close()
	}
	if err := <-u.done; err != nil && !errors.Is(err, http.ErrServerClosed) {
		slog.Default().Debug("UI server stopped", "error", err)
	}
}
