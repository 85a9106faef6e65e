package weixin

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/nanobot-durable/nanobot/channels"
)

// QR login timing.
const (
	qrPollEvery   = time.Second
	qrPollTimeout = 60 * time.Second // get_qrcode_status may hold the request
	maxQRRefresh  = 3                // an expired code is replaced this often
)

// loginInput is where a verification code is read from (tests replace it).
var loginInput io.Reader = os.Stdin

// login is `nanobot channels login weixin [--force]`: it shows the QR code
// get_bot_qrcode gives, polls get_qrcode_status until the scan is
// confirmed and stores the bot token in account.json (mode 0600).
func login(ctx context.Context, l channels.LoginDeps) error {
	cfg, err := channels.Block(l.Config, Name, defaults)
	if err != nil {
		return err
	}
	dir := stateDir(cfg, l.Home)
	if dir == "" {
		return errors.New("weixin login: no state dir (set channels.weixin.stateDir)")
	}
	acct, err := loadAccount(dir)
	if err != nil && !l.Force {
		return err
	}
	if acct.Token != "" && !l.Force {
		fmt.Fprintf(l.Out, "WeChat is already logged in (%s). Run `nanobot channels login weixin --force` to scan again.\n", dir)
		return nil
	}
	tag, err := cfg.routeTag()
	if err != nil {
		return err
	}
	c := newClient(&http.Client{Timeout: qrPollTimeout + 10*time.Second}, cfg.BaseURL, "", tag)
	var known []string
	if !l.Force {
		known = channels.Distinct(cfg.Token, acct.Token) // nanobot's local_token_list
	}
	st, err := scan(ctx, c, known, l.Out)
	if err != nil {
		return err
	}
	if st.Status == "binded_redirect" {
		if l.Force || acct.Token == "" && cfg.Token == "" {
			return errors.New("weixin login: WeChat reports this account already bound but no credentials are stored here; run `nanobot channels login weixin --force`")
		}
		fmt.Fprintln(l.Out, "WeChat is already connected to this nanobot.")
		return nil
	}
	base := st.BaseURL
	if base == "" {
		base = cfg.BaseURL
	}
	// A new token starts a new poll: the old cursor and context tokens belonged to the old login.
	if err := saveAccount(dir, account{Token: st.BotToken, BaseURL: base, BotID: st.BotID, UserID: st.UserID}); err != nil {
		return err
	}
	if l.Log != nil {
		l.Log.Info("weixin login confirmed", "bot_id", st.BotID, "user_id", st.UserID)
	}
	fmt.Fprintf(l.Out, "WeChat login confirmed (bot %s). Credentials saved in %s.\n", st.BotID, dir)
	return nil
}

// scan shows QR codes and polls until one is confirmed (or WeChat says
// the account is bound already); expired codes are replaced a few times.
func scan(ctx context.Context, c *client, known []string, out io.Writer) (qrStatus, error) {
	qr, err := fetchQR(ctx, c, known, out)
	if err != nil {
		return qrStatus{}, err
	}
	poll, verify, refreshed := c, "", 0
	in := bufio.NewReader(loginInput)
	for {
		q := url.Values{"qrcode": {qr}}
		if verify != "" {
			q.Set("verify_code", verify)
		}
		var st qrStatus
		err := poll.Call(ctx, http.MethodGet, epQRStatus+"?"+q.Encode(), nil, &st)
		switch {
		case ctx.Err() != nil:
			return qrStatus{}, ctx.Err()
		case err != nil && retryableQRPoll(err):
			st.Status = "wait"
		case err != nil:
			return qrStatus{}, fmt.Errorf("weixin login: %w", err)
		}
		switch st.Status {
		case "confirmed":
			if st.BotToken == "" {
				return qrStatus{}, errors.New("weixin login: WeChat confirmed the scan but returned no token")
			}
			return st, nil
		case "binded_redirect":
			return st, nil
		case "scaned_but_redirect":
			if h := strings.TrimSpace(st.RedirectHost); h != "" {
				if !strings.HasPrefix(h, "http://") && !strings.HasPrefix(h, "https://") {
					h = "https://" + h
				}
				poll = c.at(h)
			}
		case "need_verifycode":
			fmt.Fprint(out, "Enter the number shown in WeChat to continue: ")
			line, err := in.ReadString('\n')
			if strings.TrimSpace(line) == "" && err != nil {
				return qrStatus{}, fmt.Errorf("weixin login: no verification code: %w", err)
			}
			verify = strings.TrimSpace(line)
			continue
		case "expired", "verify_code_blocked":
			if refreshed++; refreshed > maxQRRefresh {
				return qrStatus{}, fmt.Errorf("weixin login: the QR code expired %d times; run the login again", maxQRRefresh)
			}
			fmt.Fprintln(out, "The QR code expired; here is a new one.")
			if qr, err = fetchQR(ctx, c, known, out); err != nil {
				return qrStatus{}, err
			}
			poll, verify = c, ""
			continue
		}
		select {
		case <-ctx.Done():
			return qrStatus{}, ctx.Err()
		case <-time.After(qrPollEvery):
		}
	}
}

// fetchQR asks for a QR code and prints it; WeChat refusing the known
// tokens (-3) gets a second request without them.
func fetchQR(ctx context.Context, c *client, known []string, out io.Writer) (string, error) {
	if known == nil {
		known = []string{}
	}
	var qr qrCode
	err := c.Call(ctx, http.MethodPost, epGetQRCode, map[string]any{"local_token_list": known}, &qr)
	if answered(err, errInvalidArgument) && len(known) > 0 {
		err = c.Call(ctx, http.MethodPost, epGetQRCode, map[string]any{"local_token_list": []string{}}, &qr)
	}
	if err != nil {
		return "", fmt.Errorf("weixin login: %w", err)
	}
	if qr.QRCode == "" {
		return "", errors.New("weixin login: WeChat returned no QR code")
	}
	content := qr.QRCodeImgContent
	if content == "" {
		content = qr.QRCode
	}
	fmt.Fprintln(out, "Scan this QR code with WeChat:")
	if err := channels.PrintQR(out, content); err != nil {
		return "", err
	}
	return qr.QRCode, nil
}

// retryableQRPoll: a timeout, a dropped connection, 408/425/429 or a 5xx.
func retryableQRPoll(err error) bool {
	var he *channels.HTTPError
	if errors.As(err, &he) {
		return he.Code == "" && retryableStatus(he.Status)
	}
	var syntax *json.SyntaxError
	var mistyped *json.UnmarshalTypeError
	return !errors.As(err, &syntax) && !errors.As(err, &mistyped)
}

func retryableStatus(status int) bool {
	return status == 408 || status == 425 || status == 429 || status >= 500
}
