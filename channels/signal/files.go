package signal

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/nanobot-durable/nanobot/channels"
	"github.com/nanobot-durable/nanobot/protocol"
)

// maxFile bounds a received attachment copied into the workspace, and a
// file sent (Signal's limit is 100 MiB).
const maxFile = 100 << 20

// takeFiles copies the message's attachments from the daemon's
// attachments folder into <workspace>/media and names them in the text,
// as nanobot does ("[image: path]"); one that cannot be had says so.
func (c *Channel) takeFiles(atts []attachment, msg *protocol.Inbound) {
	var lines []string
	for _, a := range atts {
		name, id := channels.SafeFileName(a.Filename, 64), a.ID
		if id == "" || channels.SafeFileName(id, len(id)) != id { // it names a file in the daemon's folder
			c.Log.Warn("signal attachment dropped: bad id", "message", msg.Route.ReplyTo, "id", a.ID)
			continue
		}
		shown := name
		if shown == "" {
			shown = "attachment_" + id
		}
		path, err := c.copyFile(id, channels.MediaName("signal", id, name, a.ContentType))
		if err != nil {
			c.Log.Warn("signal attachment not taken", "message", msg.Route.ReplyTo, "id", id, "error", err)
			lines = append(lines, channels.FileNote(shown, "not found"))
			continue
		}
		msg.Media = append(msg.Media, path)
		lines = append(lines, channels.FileLine(channels.FileKind(a.ContentType), path))
	}
	msg.Content = channels.WithNotes(msg.Content, lines)
}

func (c *Channel) copyFile(id, name string) (string, error) {
	f, err := os.Open(filepath.Join(c.cfg.AttachmentsDir, id))
	if err != nil {
		return "", err
	}
	defer f.Close()
	return channels.SaveMedia(c.workspace, strings.TrimSuffix(name, "-"), f, maxFile)
}
