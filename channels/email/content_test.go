package email

import (
	"encoding/base64"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/channels/email/mailpeer"
)

func TestHTMLOnlyMailIsReducedToText(t *testing.T) {
	h := startHarness(t, mailpeer.Options{}, nil)
	html := `<html><head><title>T</title><style>p{color:red}</style></head><body>` +
		`<p>Hello&nbsp;<b>bot</b>,</p><p>see <a href="https://example.org/x">the page</a><br>and this:</p>` +
		`<ul><li>one</li><li>two &amp; three</li></ul><script>alert(1)</script></body></html>`
	h.deliver(html, mailFrom(alice, "html@x", "HTML", "Content-Type: text/html; charset=utf-8")...)

	in := h.waitPublished("html@x")
	_, body, _ := strings.Cut(in.Content, "\n\n")
	require.Equal(t, "Hello bot,\n\nsee the page (https://example.org/x)\nand this:\n\n- one\n- two & three", body)
	require.Contains(t, h.waitMails(1)[0].Text, "echo: Hello bot,")
}

func TestTextPartWinsOverHTML(t *testing.T) {
	h := startHarness(t, mailpeer.Options{}, nil)
	body := "--b\r\nContent-Type: text/plain; charset=utf-8\r\n\r\nplain words\r\n" +
		"--b\r\nContent-Type: text/html; charset=utf-8\r\n\r\n<p>html words</p>\r\n--b--\r\n"
	h.deliver(body, mailFrom(alice, "alt@x", "Both", `Content-Type: multipart/alternative; boundary="b"`)...)
	in := h.waitPublished("alt@x")
	require.True(t, strings.HasSuffix(in.Content, "\n\nplain words"), in.Content)
}

func TestAttachmentInLandsInMediaAndOutIsAttached(t *testing.T) {
	h := startHarness(t, mailpeer.Options{}, func(b map[string]any) {
		b["allowedAttachmentTypes"] = []string{"application/pdf", "image/*"}
		b["maxAttachmentSize"] = 1000
	})
	pdf := []byte("%PDF-1.4 a tiny document")
	big := strings.Repeat("x", 2000)
	report := filepath.Join(h.Workspace, "out", "report.csv")
	require.NoError(t, os.MkdirAll(filepath.Dir(report), 0o755))
	require.NoError(t, os.WriteFile(report, []byte("a,b\n1,2\n"), 0o644))
	h.agent.media = []string{"out/report.csv", "missing.txt"}

	body := "--m\r\nContent-Type: text/plain\r\n\r\nsee attached\r\n" +
		"--m\r\nContent-Type: application/pdf; name=\"in.pdf\"\r\nContent-Disposition: attachment; filename=\"../../in.pdf\"\r\nContent-Transfer-Encoding: base64\r\n\r\n" +
		base64.StdEncoding.EncodeToString(pdf) + "\r\n" +
		"--m\r\nContent-Type: image/png\r\nContent-Disposition: attachment; filename=\"big.png\"\r\n\r\n" + big + "\r\n" +
		"--m\r\nContent-Type: application/zip\r\nContent-Disposition: attachment; filename=\"x.zip\"\r\n\r\nPK\r\n--m--\r\n"
	h.deliver(body, mailFrom(alice, "att@x", "Files", `Content-Type: multipart/mixed; boundary="m"`)...)

	in := h.waitPublished("att@x")
	require.Len(t, in.Media, 1)
	require.Equal(t, filepath.Join(h.Workspace, "media"), filepath.Dir(in.Media[0]), "saved in <workspace>/media, the name cannot climb out")
	require.True(t, strings.HasSuffix(in.Media[0], "-in.pdf"), in.Media[0])
	saved, err := os.ReadFile(in.Media[0])
	require.NoError(t, err)
	require.Equal(t, pdf, saved)
	require.Contains(t, in.Content, "[attachment: "+filepath.Base(in.Media[0])+" — saved to "+in.Media[0]+"]")
	require.Contains(t, in.Content, "[attachment: big.png — not saved: over maxAttachmentSize (1000 bytes)]")
	require.Contains(t, in.Content, "[attachment: x.zip — not saved: type application/zip is not in allowedAttachmentTypes]")

	m := h.waitMails(1)[0]
	require.Len(t, h.smtp.Mails(), 1, "the files ride on the text mail: one reply, one mail")
	require.Len(t, m.Files, 1)
	require.Equal(t, "report.csv", m.Files[0].Name)
	require.Equal(t, "a,b\n1,2\n", string(m.Files[0].Data))
	require.True(t, strings.HasPrefix(m.Header.Get("Content-Type"), "multipart/mixed"))
	require.Contains(t, m.Text, "[attachment: missing.txt - send failed]")
	require.Equal(t, "<att@x>", m.Header.Get("In-Reply-To"))
}
