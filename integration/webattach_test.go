package integration

import (
	"bytes"
	"image"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/internal/testenv"
	"github.com/nanobot-durable/nanobot/providers/modeltest"
)

// TestWebConsoleAttachments: images and files reach the agent from the
// picker, a paste and a drop, within the channel's limits; the model is
// shown the images and told of the files; the transcript draws them inline,
// from the journal after a reload.
func TestWebConsoleAttachments(t *testing.T) {
	chromium := browser(t)
	model := modeltest.New(modeltest.Text("A red square, a blue one and your notes."), modeltest.Text("Got the dropped file."))
	defer model.Close()
	webPort := testenv.FreePort(t)
	home := testenv.NewHome(t, model.URL(), map[string]any{"channels": map[string]any{"web": map[string]any{"port": webPort}}})
	env, _ := embeddedEnv(t, home)
	base, out, errOut := startWebGateway(t, env)

	dir := t.TempDir()
	square := image.NewRGBA(image.Rect(0, 0, 96, 96))
	for i := range square.Pix {
		square.Pix[i] = []byte{220, 20, 20, 255}[i%4]
	}
	var buf bytes.Buffer
	require.NoError(t, png.Encode(&buf, square))
	red, notes, huge := filepath.Join(dir, "red square.png"), filepath.Join(dir, "notes.txt"), filepath.Join(dir, "huge.bin")
	require.NoError(t, os.WriteFile(red, buf.Bytes(), 0o644))
	require.NoError(t, os.WriteFile(notes, []byte("buy green tea\n"), 0o644))
	require.NoError(t, os.WriteFile(huge, bytes.Repeat([]byte{1}, 21<<20), 0o644))

	pg, errs := newWebPage(t, chromium, 1200, 860, out, errOut)
	ctx := pg.ctx
	run, waitFor, send := pg.run, pg.waitFor, pg.send
	chips := func(n int) string {
		return `document.querySelectorAll('#pending .chip').length === ` + string(rune('0'+n))
	}

	pg.openChat(base, "attach")
	run("pick two files", chromedp.SetUploadFiles(chromedp.CSS("#files"), []string{red, notes}))
	waitFor("both waiting to be sent", chips(2))
	run("pick one too large", chromedp.SetUploadFiles(chromedp.CSS("#files"), []string{huge}))
	waitFor("refused at once", `document.getElementById('log').textContent.includes('huge.bin is larger than 20 MB') && `+chips(2))
	run("paste an image", chromedp.Evaluate[chromedp.Void](`(async () => {
		const c = document.createElement('canvas'); c.width = c.height = 96;
		const g = c.getContext('2d'); g.fillStyle = '#1040e0'; g.fillRect(0, 0, 96, 96);
		const blob = await new Promise((ok) => c.toBlob(ok, 'image/png'));
		const dt = new DataTransfer(); dt.items.add(new File([blob], 'pasted.png', {type: 'image/png'}));
		document.getElementById('text').dispatchEvent(new ClipboardEvent('paste', {clipboardData: dt, bubbles: true, cancelable: true}));
	})()`, chromedp.EvalAwaitPromise))
	waitFor("the pasted image waits too", chips(3))
	shot(t, ctx, "web-attachments-pending.png")
	send("what are these?")
	waitFor("the answer", `document.getElementById('log').textContent.includes('A red square, a blue one and your notes.')`)
	waitFor("sent: nothing pending", `document.getElementById('pending').hidden`)
	first := string(model.Requests()[0].Body)
	require.Equal(t, 2, strings.Count(first, "data:image/png;base64,"), "the model is shown both images")
	require.Contains(t, first, "notes.txt]", "and told of the file")

	run("drop a file", chromedp.Evaluate[chromedp.Void](`(() => {
		const dt = new DataTransfer(); dt.items.add(new File(['a dropped note'], 'dropped.txt', {type: 'text/plain'}));
		document.querySelector('main').dispatchEvent(new DragEvent('drop', {dataTransfer: dt, bubbles: true, cancelable: true}));
	})()`))
	waitFor("the dropped file waits", chips(1))
	send("and this one")
	waitFor("its answer", `document.getElementById('log').textContent.includes('Got the dropped file.')`)
	require.Contains(t, string(model.Requests()[1].Body), "dropped.txt]")
	saved, err := filepath.Glob(filepath.Join(home.Workspace, "media", "*-dropped.txt"))
	require.NoError(t, err)
	require.Len(t, saved, 1, "stored like other channels' media, under <workspace>/media")

	run("reload", chromedp.Reload())
	waitFor("the files drawn inline from the journal", `(() => {
		const imgs = [...document.querySelectorAll('.msg.user .media img')];
		const links = [...document.querySelectorAll('.msg.user .media a.file')].map(a => a.textContent);
		return imgs.length === 2 && imgs.every(i => i.complete && i.naturalWidth > 0 && i.src.includes('api/media?name=')) &&
			links.some(l => l.endsWith(' notes.txt')) && links.some(l => l.endsWith(' dropped.txt'));
	})()`)
	shot(t, ctx, "web-attachments.png")
	require.Empty(t, errs.all(), "the page reported errors")
}
