package transcription

import (
	"bytes"
	"encoding/binary"
	"os"
	"time"
)

// Duration reads the length of an Ogg (Opus or Vorbis) or WAV file; false
// when the format is another or the file does not say.
func Duration(path string) (time.Duration, bool) {
	data, err := os.ReadFile(path)
	if err != nil {
		return 0, false
	}
	switch {
	case bytes.HasPrefix(data, []byte("OggS")):
		return oggDuration(data)
	case len(data) >= 44 && bytes.HasPrefix(data, []byte("RIFF")) && string(data[8:12]) == "WAVE":
		return wavDuration(data)
	}
	return 0, false
}

// oggDuration is the last page's granule position over the sample rate
// (48 kHz for Opus, the identification header's rate for Vorbis).
func oggDuration(data []byte) (time.Duration, bool) {
	rate := 0
	switch {
	case bytes.Contains(data[:min(len(data), 512)], []byte("OpusHead")):
		rate = 48000
	default:
		if i := bytes.Index(data[:min(len(data), 512)], []byte("\x01vorbis")); i >= 0 && i+16 <= len(data) {
			rate = int(binary.LittleEndian.Uint32(data[i+12 : i+16]))
		}
	}
	last := bytes.LastIndex(data, []byte("OggS"))
	if rate <= 0 || last < 0 || last+14 > len(data) {
		return 0, false
	}
	granule := int64(binary.LittleEndian.Uint64(data[last+6 : last+14]))
	if granule <= 0 {
		return 0, false
	}
	return time.Duration(granule) * time.Second / time.Duration(rate), true
}

// wavDuration is the data chunk's size over the byte rate.
func wavDuration(data []byte) (time.Duration, bool) {
	byteRate := int64(binary.LittleEndian.Uint32(data[28:32]))
	for i := 12; i+8 <= len(data); {
		id, size := string(data[i:i+4]), int64(binary.LittleEndian.Uint32(data[i+4:i+8]))
		if id == "data" && byteRate > 0 {
			return time.Duration(size) * time.Second / time.Duration(byteRate), true
		}
		i += 8 + int(size) + int(size&1)
	}
	return 0, false
}
