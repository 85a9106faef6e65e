package web

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"mime"
	"mime/multipart"
	"net/http"
	"os"
	"path/filepath"
	"strings"
)

// audioPart is the form field the page's recording or picked file comes in.
const audioPart = "audio"

// errNotAudio marks an upload whose type or first bytes are not an audio format.
var errNotAudio = errors.New("not audio")

// audioTypes maps the MIME types the page sends (MediaRecorder, a picked
// file) to the extension the saved file gets, which is what marks it for
// transcription (protocol.IsAudio).
var audioTypes = map[string]string{
	"audio/webm": ".webm", "audio/ogg": ".ogg", "audio/opus": ".opus", "application/ogg": ".ogg",
	"audio/wav": ".wav", "audio/x-wav": ".wav", "audio/wave": ".wav", "audio/vnd.wave": ".wav",
	"audio/mpeg": ".mp3", "audio/mp3": ".mp3", "audio/mp4": ".m4a", "audio/x-m4a": ".m4a", "audio/m4a": ".m4a",
	"audio/flac": ".flac", "audio/x-flac": ".flac", "audio/aac": ".aac", "audio/x-aac": ".aac",
}

// audioExt is the extension for an upload's declared type; a generic type
// (application/octet-stream, none) falls back to the file name's extension.
func audioExt(contentType, fileName string) (string, error) {
	mt, _, _ := mime.ParseMediaType(contentType)
	if ext, ok := audioTypes[strings.ToLower(mt)]; ok {
		return ext, nil
	}
	if mt == "" || mt == "application/octet-stream" {
		ext := strings.ToLower(filepath.Ext(fileName))
		for _, known := range audioTypes {
			if ext == known {
				return ext, nil
			}
		}
	}
	return "", fmt.Errorf("%w: type %q, file %q (send Ogg, WebM, WAV, MP3, M4A, FLAC or AAC)", errNotAudio, contentType, fileName)
}

// soundsLike says whether head, a file's first bytes, starts as the
// container ext names: a text or image file labelled audio is refused.
func soundsLike(ext string, head []byte) bool {
	switch ext {
	case ".ogg", ".opus":
		return bytes.HasPrefix(head, []byte("OggS"))
	case ".webm":
		return bytes.HasPrefix(head, []byte{0x1A, 0x45, 0xDF, 0xA3}) // EBML
	case ".wav":
		return len(head) >= 12 && string(head[:4]) == "RIFF" && string(head[8:12]) == "WAVE"
	case ".mp3":
		return bytes.HasPrefix(head, []byte("ID3")) || (len(head) >= 2 && head[0] == 0xFF && head[1]&0xE0 == 0xE0)
	case ".m4a":
		return len(head) >= 8 && string(head[4:8]) == "ftyp"
	case ".flac":
		return bytes.HasPrefix(head, []byte("fLaC"))
	case ".aac":
		return bytes.HasPrefix(head, []byte("ID3")) || (len(head) >= 2 && head[0] == 0xFF && head[1]&0xF6 == 0xF0) // ADTS
	}
	return false
}

// formMessage is a multipart/form-data /api/send: chat and text fields, at
// most one audio file and maxFiles other files, already saved under <workspace>/media.
type formMessage struct {
	sendRequest
	media []string // the saved files' paths
	audio bool     // an audio part came
	files int      // how many file parts came
}

// readForm reads a multipart send, streaming the audio part into
// <workspace>/media as name+ext (at most maxAudio bytes) and each file part
// as name-n-<its name> (saveFile). On error nothing is left on disk.
func (c *Channel) readForm(r *http.Request, name string) (formMessage, int, error) {
	var m formMessage
	mr, err := r.MultipartReader()
	if err != nil {
		return m, http.StatusBadRequest, fmt.Errorf("the form is not multipart/form-data: %w", err)
	}
	fail := func(status int, err error) (formMessage, int, error) {
		removeAll(m.media)
		return formMessage{}, status, err
	}
	for {
		part, err := mr.NextPart()
		if errors.Is(err, io.EOF) {
			return m, http.StatusOK, nil
		}
		if err != nil {
			return fail(readStatus(err), fmt.Errorf("could not read the form: %w", err))
		}
		switch part.FormName() {
		case "chat", "text":
			b, err := io.ReadAll(io.LimitReader(part, maxBody+1))
			if err != nil {
				return fail(readStatus(err), fmt.Errorf("could not read the form's %s: %w", part.FormName(), err))
			}
			if len(b) > maxBody {
				return fail(http.StatusRequestEntityTooLarge, fmt.Errorf("the form's %s is larger than %d MB", part.FormName(), maxBody>>20))
			}
			if part.FormName() == "chat" {
				m.Chat = string(b)
			} else {
				m.Text = string(b)
			}
		case audioPart:
			if m.audio {
				return fail(http.StatusBadRequest, errors.New("send one audio file per message"))
			}
			path, status, err := c.saveAudio(part, name)
			if err != nil {
				return fail(status, err)
			}
			m.media, m.audio = append(m.media, path), true
		case filePart:
			if m.files++; m.files > maxFiles {
				return fail(http.StatusRequestEntityTooLarge, fmt.Errorf("send at most %d files per message", maxFiles))
			}
			path, status, err := c.saveFile(part, fmt.Sprintf("%s-%d", name, m.files))
			if err != nil {
				return fail(status, err)
			}
			m.media = append(m.media, path)
		default:
			return fail(http.StatusBadRequest, fmt.Errorf("unknown form field %q (want chat, text, %s, %s)", part.FormName(), audioPart, filePart))
		}
	}
}

// saveAudio checks a file part is audio by type and first bytes and saves it.
func (c *Channel) saveAudio(part *multipart.Part, name string) (string, int, error) {
	ext, err := audioExt(part.Header.Get("Content-Type"), part.FileName())
	if err != nil {
		return "", http.StatusUnsupportedMediaType, err
	}
	br := bufio.NewReader(part)
	head, err := br.Peek(12)
	if len(head) == 0 {
		if err != nil && !errors.Is(err, io.EOF) {
			return "", readStatus(err), fmt.Errorf("could not read the audio: %w", err)
		}
		return "", http.StatusBadRequest, errors.New("the audio file is empty")
	}
	if !soundsLike(ext, head) {
		return "", http.StatusUnsupportedMediaType, fmt.Errorf("%w: the file's content is not %s audio", errNotAudio, strings.TrimPrefix(ext, "."))
	}
	return c.saveMedia(name+ext, br, c.maxAudio, "the audio", fmt.Sprintf("the audio is larger than transcription.maxUploadMb (%d MB)", c.maxAudio>>20))
}

// readStatus is the answer to a body that failed to read: 413 past the
// request's byte limit, 500 for the disk's own error, else the client's 400.
func readStatus(err error) int {
	var tooBig *http.MaxBytesError
	var disk *fs.PathError
	var rename *os.LinkError
	switch {
	case errors.As(err, &tooBig):
		return http.StatusRequestEntityTooLarge
	case errors.As(err, &disk), errors.As(err, &rename):
		return http.StatusInternalServerError
	}
	return http.StatusBadRequest
}
