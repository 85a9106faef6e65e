package channels

import (
	"fmt"
	"io"
	"log/slog"

	qrcode "github.com/skip2/go-qrcode"

	"github.com/nanobot-durable/nanobot/config"
)

// LoginDeps is what `nanobot channels login <name>` hands a channel's
// interactive login (a QR code to scan, a pairing code to type).
type LoginDeps struct {
	Config *config.Config
	// Home is the nanobot home (~/.nanobot): where a device session is kept.
	Home string
	// Out is the terminal: the QR code and what to do with it.
	Out io.Writer
	// Force logs in again even when a session is stored.
	Force bool
	Log   *slog.Logger
}

// PrintQR draws content as a QR code in the terminal, two rows of modules
// per line, with the text below for terminals that cannot show it.
func PrintQR(w io.Writer, content string) error {
	qr, err := qrcode.New(content, qrcode.Low)
	if err != nil {
		return fmt.Errorf("qr code: %w", err)
	}
	bits := qr.Bitmap()
	for y := 0; y < len(bits); y += 2 {
		line := make([]rune, 0, len(bits[y]))
		for x := range bits[y] {
			top, bottom := bits[y][x], y+1 < len(bits) && bits[y+1][x]
			switch {
			case top && bottom:
				line = append(line, ' ')
			case top:
				line = append(line, '▄')
			case bottom:
				line = append(line, '▀')
			default:
				line = append(line, '█')
			}
		}
		if _, err := fmt.Fprintln(w, string(line)); err != nil {
			return err
		}
	}
	_, err = fmt.Fprintf(w, "\n%s\n", content)
	return err
}
