package integration

import (
	"bytes"
	"context"
	"encoding/base64"
	"image"
	"image/color"
	"image/png"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/channels/discord/discordpeer"
	"github.com/nanobot-durable/nanobot/internal/pgtest"
	"github.com/nanobot-durable/nanobot/internal/testenv"
	"github.com/nanobot-durable/nanobot/pgstore"
	"github.com/nanobot-durable/nanobot/providers/modeltest"
)

// TestMediaCrossHostsThroughPostgreSQL: a gateway without the workspace
// (its own HOME) takes a Discord photo into its own media/; the workspace
// host (another HOME) builds the turn, and the model's request carries the
// photo as a data URL, named by its path on the workspace host. The model
// writes report.txt in the workspace and attaches it with the message
// tool; the gateway, which never had the file, uploads its bytes to
// Discord. Both files cross only through the database.
func TestMediaCrossHostsThroughPostgreSQL(t *testing.T) {
	url := pgtest.Database(t)
	dev := testenv.StartDevServer(t)
	peer := discordpeer.New(t)
	peer.DM(discordDM)
	model := modeltest.New().Handle(func(req *modeltest.RecordedRequest) modeltest.Step {
		results := 0
		for _, m := range req.Messages {
			if m.Role == "tool" {
				results++
			}
		}
		switch results {
		case 0:
			return modeltest.ToolCalls(modeltest.Call{ID: "call_write", Name: "write_file", Args: `{"path":"report.txt","content":"the report"}`})
		case 1:
			return modeltest.ToolCalls(modeltest.Call{ID: "call_send", Name: "message",
				Args: `{"content":"here is the report","media":["report.txt"]}`})
		}
		return modeltest.Text("Sent you the report.")
	})
	defer model.Close()
	database := map[string]any{"url": url}
	gw := testenv.NewHome(t, model.URL(), map[string]any{"database": database, "channels": map[string]any{"discord": map[string]any{
		"enabled": true, "token": discordpeer.Token, "apiBase": peer.URL(), "allowFrom": []string{discordAlice.ID}, "workingEmoji": "",
	}}})
	ws := testenv.NewHome(t, model.URL(), map[string]any{"database": database})
	gwTemp := t.TempDir() // where the gateway, holding no workspace, keeps what it fetches
	_, gwOut, gwErr := startNanobot(t, gw.Env(dev.Addr, "TMPDIR="+gwTemp), "gateway", "--workspace=false")
	_, wsOut, wsErr := startNanobot(t, ws.Env(dev.Addr), "worker", "--workspace")
	logs := func() string {
		return "gateway:\n" + gwOut.String() + gwErr.String() + "\nworkspace host:\n" + wsOut.String() + wsErr.String()
	}
	require.Eventually(t, peer.Connected, time.Minute, 50*time.Millisecond, "the gateway never identified\n%s", logs())

	photo := redPNG(t)
	link := peer.AddFile(discordDM, "4001", "photo.png", photo)
	peer.Say(discordpeer.Incoming{ChannelID: discordDM, Author: discordAlice, Content: "what is in this picture?",
		Attachments: []discordpeer.Attachment{{ID: "4001", Filename: "photo.png", ContentType: "image/png", Size: len(photo), URL: link}}})

	var sent []discordpeer.File
	require.Eventually(t, func() bool {
		for _, m := range peer.Messages(discordDM) {
			sent = append(sent[:0], m.Files...)
			if len(sent) > 0 {
				return true
			}
		}
		return false
	}, 2*time.Minute, 50*time.Millisecond, "no file reached Discord: %+v\n%s", peer.Messages(discordDM), logs())
	require.Len(t, sent, 1)
	require.Equal(t, "report.txt", sent[0].Name)
	require.Equal(t, "the report", string(sent[0].Data), "the gateway uploaded the workspace host's file")

	gwPhoto := filepath.Join(gw.Workspace, "media", "discord-4001-photo.png")
	wsPhoto := filepath.Join(ws.Workspace, "media", "discord-4001-photo.png")
	require.FileExists(t, gwPhoto, "the gateway saved the download in its own media/")
	kept, err := os.ReadFile(wsPhoto)
	require.NoError(t, err, "the workspace host has the photo where its file tools look")
	require.Equal(t, photo, kept)
	var first *modeltest.RecordedRequest
	for _, r := range model.Requests() {
		if bytes.Contains(r.Body, []byte("what is in this picture?")) {
			first = &r
			break
		}
	}
	require.NotNil(t, first, "the model never saw the message\n%s", logs())
	require.Contains(t, string(first.Body), "data:image/png;base64,"+base64.StdEncoding.EncodeToString(photo), "the photo went to the model inline")
	require.Contains(t, string(first.Body), "[image: "+wsPhoto+"]", "named by its path on the workspace host")

	db, err := pgstore.Open(context.Background(), url, nil)
	require.NoError(t, err)
	defer db.Close()
	sess, err := db.Sessions().Load(context.Background(), "discord:"+discordDM)
	require.NoError(t, err)
	require.Contains(t, sess.Messages[0].Content, "[image: "+wsPhoto+"]", "the journal names the file the model can read")
	require.Empty(t, filesNamed(t, gw.Dir, "report.txt"), "the report was never in the gateway's HOME")
	fetched := filesNamed(t, gwTemp, "report.txt")
	require.Len(t, fetched, 1, "the gateway uploaded its own copy, fetched from the database into its temp cache")
	data, err := os.ReadFile(fetched[0])
	require.NoError(t, err)
	require.Equal(t, "the report", string(data))
	require.False(t, strings.Contains(logs(), "cannot be shared"), "every file was shared\n%s", logs())
}

// filesNamed lists the files called name under root.
func filesNamed(t *testing.T, root, name string) []string {
	t.Helper()
	var found []string
	require.NoError(t, filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && d.Name() == name {
			found = append(found, p)
		}
		return err
	}))
	return found
}

// redPNG is a small image the model can be sent.
func redPNG(t *testing.T) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, 3, 3))
	for i := range img.Pix {
		img.Pix[i] = 0xff
	}
	img.Set(1, 1, color.RGBA{R: 0xff, A: 0xff})
	var b bytes.Buffer
	require.NoError(t, png.Encode(&b, img))
	return b.Bytes()
}
