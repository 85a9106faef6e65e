package execsession

import (
	"os"
	"unicode/utf8"
)

// ring is a file of fixed size holding the last cap bytes of one output
// stream; total counts every byte ever written, so an absolute offset says
// whether a reader's bytes are still there.
type ring struct {
	f     *os.File
	cap   int64
	total int64
}

func openRing(path string, capBytes int64) (*ring, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return nil, err
	}
	return &ring{f: f, cap: capBytes}, nil
}

// write appends p, overwriting the oldest bytes once the file is full.
func (r *ring) write(p []byte) error {
	if int64(len(p)) > r.cap { // only the last cap bytes can survive anyway
		r.total += int64(len(p)) - r.cap
		p = p[int64(len(p))-r.cap:]
	}
	for len(p) > 0 {
		at := r.total % r.cap
		n := min(int64(len(p)), r.cap-at)
		if _, err := r.f.WriteAt(p[:n], at); err != nil {
			return err
		}
		r.total += n
		p = p[n:]
	}
	return nil
}

// read returns the bytes from offset from to the end still held, and how
// many bytes after from the ring no longer has.
func (r *ring) read(from int64) ([]byte, int64) {
	oldest := max(r.total-r.cap, 0)
	lost := int64(0)
	if from < oldest {
		lost, from = oldest-from, oldest
	}
	if from >= r.total {
		return nil, lost
	}
	out := make([]byte, 0, r.total-from)
	for from < r.total {
		at := from % r.cap
		n := min(r.total-from, r.cap-at)
		buf := make([]byte, n)
		if _, err := r.f.ReadAt(buf, at); err != nil {
			break
		}
		out = append(out, buf...)
		from += n
	}
	return out, lost
}

// completeRunes is how much of b ends on a whole UTF-8 character: a
// character cut by the read stays for the next poll.
func completeRunes(b []byte) int {
	for cut := 1; cut < utf8.UTFMax && cut <= len(b); cut++ {
		if utf8.RuneStart(b[len(b)-cut]) {
			if !utf8.FullRune(b[len(b)-cut:]) {
				return len(b) - cut
			}
			break
		}
	}
	return len(b)
}
