package whatsapp

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"go.mau.fi/whatsmeow"
	"go.mau.fi/whatsmeow/types/events"

	"github.com/nanobot-durable/nanobot/channels"
)

// settleWithin is how long the login waits, once paired, for whatsmeow's
// reconnect as the new device (the phone then syncs it).
const settleWithin = 30 * time.Second

// login is `nanobot channels login whatsapp [--force]`: it links this
// device to the phone by QR code, or by a pairing code typed on the phone
// when channels.whatsapp.phoneNumber is set, and keeps the session in
// the device store under the nanobot home.
func login(ctx context.Context, l channels.LoginDeps, open openClient) error {
	cfg, err := readConfig(l.Config)
	if err != nil {
		return err
	}
	log := l.Log
	if log == nil {
		log = slog.Default()
	}
	path := cfg.storePath(l.Home)
	client, err := open(ctx, path, log.With("channel", Name))
	if err != nil {
		return fmt.Errorf("whatsapp login: %w", err)
	}
	defer client.Close()
	if client.Paired() && !l.Force {
		pn, _ := client.Self()
		fmt.Fprintf(l.Out, "Already paired as +%s (session in %s).\n`nanobot channels login whatsapp --force` pairs again.\n", pn.User, path)
		return nil
	}
	if client.Paired() {
		if err := client.Unpair(ctx); err != nil {
			return err
		}
	}
	qr, err := client.QR(ctx)
	if err != nil {
		return fmt.Errorf("whatsapp login: %w", err)
	}
	connected := watchConnected(ctx, client)
	if err := client.Connect(ctx); err != nil {
		return fmt.Errorf("whatsapp login: connect: %w", err)
	}
	if err := showCodes(ctx, l, client, qr, phoneDigits(cfg.PhoneNumber)); err != nil {
		return err
	}
	select {
	case <-connected:
	case <-time.After(settleWithin):
		log.Warn("whatsapp paired, but the first connection as the new device did not come in time; the gateway connects anyway")
	case <-ctx.Done():
	}
	pn, _ := client.Self()
	fmt.Fprintf(l.Out, "✅ Paired as +%s. The session is kept in %s; start `nanobot gateway`.\n", pn.User, path)
	return nil
}

// showCodes shows each QR code whatsmeow emits (or, for a phone number,
// one pairing code) until the phone links the device.
func showCodes(ctx context.Context, l channels.LoginDeps, client waClient, qr <-chan whatsmeow.QRChannelItem, phone string) error {
	asked := false
	for {
		var item whatsmeow.QRChannelItem
		select {
		case <-ctx.Done():
			return fmt.Errorf("whatsapp login: %w", ctx.Err())
		case it, ok := <-qr:
			if !ok {
				return errors.New("whatsapp login: the connection ended before the phone linked this device")
			}
			item = it
		}
		switch {
		case item.Event == whatsmeow.QRChannelEventCode && phone != "":
			if asked {
				continue // the pairing code stays valid; the QR codes are not shown
			}
			asked = true
			code, err := client.PairPhone(ctx, phone)
			if err != nil {
				return fmt.Errorf("whatsapp login: pairing code for +%s: %w", phone, err)
			}
			fmt.Fprintf(l.Out, "On the phone of +%s: WhatsApp → Settings → Linked devices → Link a device →\n"+
				"\"Link with phone number instead\", and enter\n\n    %s\n\n", phone, code)
		case item.Event == whatsmeow.QRChannelEventCode:
			fmt.Fprintln(l.Out, "Scan this with WhatsApp → Settings → Linked devices → Link a device:")
			if err := channels.PrintQR(l.Out, item.Code); err != nil {
				return err
			}
			fmt.Fprintf(l.Out, "(a new code follows in %s)\n\n", item.Timeout.Round(time.Second))
		case item == whatsmeow.QRChannelSuccess:
			return nil
		case item == whatsmeow.QRChannelTimeout:
			return errors.New("whatsapp login: no code was scanned in time; run `nanobot channels login whatsapp` again")
		case item.Event == whatsmeow.QRChannelEventError:
			return fmt.Errorf("whatsapp login: pairing failed: %w", item.Error)
		default:
			return fmt.Errorf("whatsapp login: pairing failed (%s)", item.Event)
		}
	}
}

// watchConnected drains the client's events during the login (whatsmeow
// waits on its handlers) and closes the returned channel at the first
// Connected.
func watchConnected(ctx context.Context, client waClient) <-chan struct{} {
	done := make(chan struct{})
	go func() {
		closed := false
		for {
			select {
			case <-ctx.Done():
				return
			case evt, ok := <-client.Events():
				if !ok {
					return
				}
				if _, up := evt.(*events.Connected); up && !closed {
					close(done)
					closed = true
				}
			}
		}
	}()
	return done
}
