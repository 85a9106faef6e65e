package email

import (
	"bytes"
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"mime"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/emersion/go-imap/v2"

	"github.com/nanobot-durable/nanobot/channels"
	"github.com/nanobot-durable/nanobot/protocol"
)

// saveFiles writes the mail's attachments nanobot's settings let in
// (allowedAttachmentTypes, maxAttachmentSize, maxAttachmentsPerEmail) into
// <workspace>/media, and tells the model about each, saved or not. It runs
// only for a sender the manager admitted.
func (c *Channel) saveFiles(m *parsedMail, uid imap.UID, in *protocol.Inbound) {
	saved := 0
	for _, f := range m.files {
		name := fileName(f.name)
		var why string
		switch {
		case !c.typeAllowed(f.contentType):
			why = "type " + f.contentType + " is not in allowedAttachmentTypes"
		case len(f.data) > c.cfg.MaxAttachmentSize:
			why = fmt.Sprintf("over maxAttachmentSize (%d bytes)", c.cfg.MaxAttachmentSize)
		case saved >= c.cfg.MaxAttachmentsPerEmail:
			why = fmt.Sprintf("over maxAttachmentsPerEmail (%d)", c.cfg.MaxAttachmentsPerEmail)
		}
		if why == "" {
			p, err := c.saveFile(f.data, name, f.contentType)
			if err == nil {
				saved++
				in.Media = append(in.Media, p)
				in.Content += fmt.Sprintf("\n[attachment: %s — saved to %s]", filepath.Base(p), p)
				continue
			}
			c.Log.Warn("email attachment not saved", "uid", uid, "file", name, "error", err)
			why = "could not be saved"
		} else {
			c.Log.Info("email attachment not saved: "+why, "uid", uid, "file", name)
		}
		in.Content += fmt.Sprintf("\n[attachment: %s — not saved: %s]", name, why)
	}
}

// typeAllowed matches a MIME type against allowedAttachmentTypes as
// nanobot's fnmatch does ("*" matches everything, "image/*" every image).
func (c *Channel) typeAllowed(ct string) bool {
	ct = strings.ToLower(ct)
	for _, p := range c.cfg.AllowedAttachmentTypes {
		p = strings.ToLower(strings.TrimSpace(p))
		if ok, _ := path.Match(p, ct); ok || p == "*" {
			return true
		}
	}
	return false
}

// saveFile writes data as media/email-<hash>-<name>: the hash keeps names
// apart and makes a mail read twice land on the same file.
func (c *Channel) saveFile(data []byte, name, contentType string) (string, error) {
	if c.workspace == "" {
		return "", fmt.Errorf("no workspace to save files in")
	}
	sum := sha256.Sum256(data)
	return channels.SaveMedia(c.workspace, channels.MediaName("email", hex.EncodeToString(sum[:6]), name, contentType), bytes.NewReader(data), int64(len(data)))
}

// fileName is an attachment's name (its MIME words decoded) as the model
// reads it and the saved file keeps it.
func fileName(name string) string {
	if d, err := new(mime.WordDecoder).DecodeHeader(name); err == nil {
		name = d
	}
	return cmp.Or(channels.SafeFileName(name, 64), "attachment")
}

// outFile is a workspace file attached to a reply.
type outFile struct {
	name        string
	contentType string
	data        []byte
}

// loadFiles reads a reply's files for attaching, within maxAttachmentSize
// and maxAttachmentsPerEmail; each one left out becomes a line of the text,
// as in nanobot. Links are listed, not fetched.
func (c *Channel) loadFiles(refs []string) (files []outFile, notes []string) {
	for _, ref := range refs {
		if channels.IsLink(ref) {
			notes = append(notes, "[attachment: "+ref+"]")
			continue
		}
		p := channels.WorkspacePath(c.workspace, ref)
		name := filepath.Base(p)
		if len(files) >= c.cfg.MaxAttachmentsPerEmail {
			notes = append(notes, "[attachment: "+name+" - too many attachments]")
			continue
		}
		st, err := os.Stat(p)
		if err != nil || !st.Mode().IsRegular() {
			c.Log.Warn("email attachment not found", "file", p, "error", err)
			notes = append(notes, channels.FileNote(name, "send failed"))
			continue
		}
		if st.Size() > int64(c.cfg.MaxAttachmentSize) {
			c.Log.Warn("email attachment too large", "file", p, "size", st.Size(), "max", c.cfg.MaxAttachmentSize)
			notes = append(notes, channels.FileNote(name, "too large"))
			continue
		}
		data, err := os.ReadFile(p)
		if err != nil {
			c.Log.Warn("email attachment unreadable", "file", p, "error", err)
			notes = append(notes, channels.FileNote(name, "send failed"))
			continue
		}
		files = append(files, outFile{name: name, contentType: channels.FileType(name, data), data: data})
	}
	return files, notes
}
