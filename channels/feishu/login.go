package feishu

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/nanobot-durable/nanobot/channels"
	"github.com/nanobot-durable/nanobot/config"
)

// `nanobot channels login feishu` is nanobot's scan-to-create onboarding:
// a device-code flow on the accounts site (POST /oauth/v1/app/registration,
// actions init → begin → poll) in which scanning the QR code with the
// Feishu or Lark app creates a bot app; its id and secret are written into
// channels.feishu of the config file.

// accountsBase is where the registration runs: apiBase (tests), else the domain's accounts site.
func (c Config) accountsBase() string {
	if c.APIBase != "" {
		return strings.TrimRight(c.APIBase, "/")
	}
	if c.Domain == "lark" {
		return "https://accounts.larksuite.com"
	}
	return "https://accounts.feishu.cn"
}

// registration is one answer of the registration endpoint (JSON even on a 400).
type registration struct {
	SupportedAuthMethods []string `json:"supported_auth_methods"`
	DeviceCode           string   `json:"device_code"`
	URL                  string   `json:"verification_uri_complete"`
	Interval             int      `json:"interval"`
	ExpireIn             int      `json:"expire_in"`
	ClientID             string   `json:"client_id"`
	ClientSecret         string   `json:"client_secret"`
	Error                string   `json:"error"`
	UserInfo             struct {
		TenantBrand string `json:"tenant_brand"`
	} `json:"user_info"`
}

func register(ctx context.Context, hc *http.Client, base string, form url.Values) (registration, error) {
	var r registration
	cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(cctx, http.MethodPost, base+"/oauth/v1/app/registration", strings.NewReader(form.Encode()))
	if err != nil {
		return r, fmt.Errorf("feishu registration %s: %w", form.Get("action"), err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, err := hc.Do(req)
	if err != nil {
		return r, fmt.Errorf("feishu registration %s: %w", form.Get("action"), err)
	}
	defer resp.Body.Close()
	if err := json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&r); err != nil {
		return r, fmt.Errorf("feishu registration %s: HTTP %d: %w", form.Get("action"), resp.StatusCode, err)
	}
	return r, nil
}

// login is the Spec's Login.
func login(ctx context.Context, l channels.LoginDeps) error {
	cfg, err := channels.Block(l.Config, Name, defaults)
	if err != nil {
		return err
	}
	if cfg.AppID != "" && cfg.AppSecret != "" && !l.Force {
		fmt.Fprintf(l.Out, "channels.feishu already has app %s; --force creates a new app\n", cfg.AppID)
		return nil
	}
	hc := &http.Client{}
	base := cfg.accountsBase()
	init, err := register(ctx, hc, base, url.Values{"action": {"init"}})
	if err != nil {
		return err
	}
	if !slices.Contains(init.SupportedAuthMethods, "client_secret") {
		return fmt.Errorf("feishu registration does not offer client_secret auth (offers %v)", init.SupportedAuthMethods)
	}
	begin, err := register(ctx, hc, base, url.Values{"action": {"begin"}, "archetype": {"PersonalAgent"},
		"auth_method": {"client_secret"}, "request_user_info": {"open_id"}})
	if err != nil {
		return err
	}
	if begin.DeviceCode == "" || begin.URL == "" {
		return errors.New("feishu registration did not return a device code and a login URL")
	}
	fmt.Fprintln(l.Out, "Scan with Feishu or Lark:")
	if err := channels.PrintQR(l.Out, begin.URL); err != nil {
		return err
	}
	interval := time.Duration(max(begin.Interval, 0)) * time.Second
	if begin.Interval == 0 && begin.ExpireIn == 0 {
		interval = 5 * time.Second // nanobot's defaults: every 5 s for 10 min
	}
	expire := time.Duration(begin.ExpireIn) * time.Second
	if expire <= 0 {
		expire = 10 * time.Minute
	}
	deadline := time.Now().Add(expire)
	domain := cfg.Domain
	for time.Now().Before(deadline) {
		r, err := register(ctx, hc, base, url.Values{"action": {"poll"}, "device_code": {begin.DeviceCode}, "tp": {"ob_app"}})
		switch {
		case err != nil:
			l.Log.Debug("feishu registration poll failed; polling on", "error", err)
		case r.UserInfo.TenantBrand == "lark":
			domain = "lark"
		}
		if err == nil && r.ClientID != "" && r.ClientSecret != "" {
			if err := saveApp(l.Config, r.ClientID, r.ClientSecret, domain); err != nil {
				return err
			}
			fmt.Fprintf(l.Out, "App %s created and saved in channels.feishu of %s; start `nanobot gateway`.\n", r.ClientID, l.Config.Path)
			return nil
		}
		if err == nil && (r.Error == "access_denied" || r.Error == "expired_token") {
			return fmt.Errorf("feishu registration: %s", r.Error)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(max(interval, minWait)):
		}
	}
	return errors.New("feishu registration timed out: the QR code was not scanned")
}

// saveApp writes the app into channels.feishu (however the block is spelt) and saves the config.
func saveApp(cfg *config.Config, appID, secret, domain string) error {
	key := Name
	for k := range cfg.Channels.Other {
		if config.BlockName(k) == Name {
			key = k
		}
	}
	block := map[string]any{}
	if raw, ok := cfg.Channels.Other[key]; ok {
		if err := json.Unmarshal(raw, &block); err != nil {
			return fmt.Errorf("channels.%s: %w", key, err)
		}
	}
	for _, k := range []string{"app_id", "app_secret"} {
		delete(block, k) // the camelCase keys below win
	}
	block["enabled"], block["appId"], block["appSecret"], block["domain"] = true, appID, secret, domain
	raw, err := json.Marshal(block)
	if err != nil {
		return err
	}
	if cfg.Channels.Other == nil {
		cfg.Channels.Other = map[string]json.RawMessage{}
	}
	cfg.Channels.Other[key] = raw
	if err := config.Save(cfg.Path, cfg); err != nil {
		return fmt.Errorf("save the feishu app: %w", err)
	}
	return nil
}
