package whatsapp

import (
	"strings"

	"go.mau.fi/whatsmeow/proto/waE2E"
)

// The parts of a WhatsApp message this channel reads (waE2E.Message is
// one of many kinds; only text, images, voice and audio, documents,
// videos and stickers carry something for the model).

// text is what the user wrote: a plain conversation, an extended text
// (with a link preview, a quote or mentions), or a media message's caption.
func text(m *waE2E.Message) string {
	if t := strings.TrimSpace(m.GetConversation()); t != "" {
		return t
	}
	if t := strings.TrimSpace(m.GetExtendedTextMessage().GetText()); t != "" {
		return t
	}
	for _, caption := range []string{
		m.GetImageMessage().GetCaption(), m.GetVideoMessage().GetCaption(),
		m.GetDocumentMessage().GetCaption(),
	} {
		if t := strings.TrimSpace(caption); t != "" {
			return t
		}
	}
	return ""
}

// contextInfos are the message's context infos (mentions, the quoted
// message), wherever its kind keeps one.
func contextInfos(m *waE2E.Message) []*waE2E.ContextInfo {
	var out []*waE2E.ContextInfo
	for _, ci := range []*waE2E.ContextInfo{
		m.GetExtendedTextMessage().GetContextInfo(), m.GetImageMessage().GetContextInfo(),
		m.GetVideoMessage().GetContextInfo(), m.GetAudioMessage().GetContextInfo(),
		m.GetDocumentMessage().GetContextInfo(), m.GetStickerMessage().GetContextInfo(),
	} {
		if ci != nil {
			out = append(out, ci)
		}
	}
	return out
}

// attachment is a message's file, for download.
type attachment struct {
	kind     string // image, video, audio, voice, file, sticker
	media    downloadable
	mimetype string
	filename string
	size     uint64
}

// downloadable is what whatsmeow's Download reads from a media message.
type downloadable interface {
	GetDirectPath() string
	GetMediaKey() []byte
	GetFileSHA256() []byte
	GetFileEncSHA256() []byte
}

// mediaOf is the message's file, nil for text; a voice note (ptt) is
// "voice", saved as audio/ogg for transcription.
func mediaOf(m *waE2E.Message) *attachment {
	switch {
	case m.GetImageMessage() != nil:
		im := m.GetImageMessage()
		return &attachment{"image", im, or(im.GetMimetype(), "image/jpeg"), "", im.GetFileLength()}
	case m.GetAudioMessage() != nil:
		am := m.GetAudioMessage()
		kind := "audio"
		if am.GetPTT() {
			kind = "voice"
		}
		return &attachment{kind, am, or(am.GetMimetype(), "audio/ogg; codecs=opus"), "", am.GetFileLength()}
	case m.GetDocumentMessage() != nil:
		dm := m.GetDocumentMessage()
		return &attachment{"file", dm, or(dm.GetMimetype(), "application/octet-stream"), or(dm.GetFileName(), dm.GetTitle()), dm.GetFileLength()}
	case m.GetVideoMessage() != nil:
		vm := m.GetVideoMessage()
		return &attachment{"video", vm, or(vm.GetMimetype(), "video/mp4"), "", vm.GetFileLength()}
	case m.GetStickerMessage() != nil:
		sm := m.GetStickerMessage()
		return &attachment{"sticker", sm, or(sm.GetMimetype(), "image/webp"), "", sm.GetFileLength()}
	}
	return nil
}

func or(s, fallback string) string {
	if strings.TrimSpace(s) == "" {
		return fallback
	}
	return s
}
