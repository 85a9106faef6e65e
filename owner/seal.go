package owner

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"strings"

	"github.com/nanobot-durable/nanobot/protocol"
)

// Who vouches for a sealed message.
const (
	// ByChat: a channel admitted it (allowFrom, pairing) into the chat its route names.
	ByChat = "chat"
	// ByOwner: the owner's CLI sent it.
	ByOwner = "owner"
)

// Why a message's seal does not open.
var (
	ErrNoSeal  = errors.New("no seal")
	ErrBadSeal = errors.New("bad seal")
	ErrNoKey   = errors.New("no owner key in this process")
)

// Purposes of the derived keys.
const (
	sealPurpose   = "nanobot message seal v1"
	answerPurpose = "nanobot approval answer v1"
	sealVersion   = "v1"
)

// Seal vouches for msg as by: an HMAC over what the message says and where
// it comes from, in msg.Seal. Without a key it leaves the message unsealed.
func (k Key) Seal(msg *protocol.Inbound, by string) {
	msg.Seal = ""
	if !k.Valid() {
		return
	}
	msg.Seal = sealVersion + "." + by + "." + hex.EncodeToString(k.messageMAC(*msg, by))
}

// Opened is who sealed msg (ByChat, ByOwner), or why nobody did.
func (k Key) Opened(msg protocol.Inbound) (string, error) {
	if !k.Valid() {
		return "", ErrNoKey
	}
	if msg.Seal == "" {
		return "", ErrNoSeal
	}
	parts := strings.SplitN(msg.Seal, ".", 3)
	if len(parts) != 3 || parts[0] != sealVersion || (parts[1] != ByChat && parts[1] != ByOwner) {
		return "", ErrBadSeal
	}
	got, err := hex.DecodeString(parts[2])
	if err != nil || !hmac.Equal(got, k.messageMAC(msg, parts[1])) {
		return "", ErrBadSeal
	}
	return parts[1], nil
}

func (k Key) messageMAC(msg protocol.Inbound, by string) []byte {
	fields := []string{by, msg.ID, msg.SessionKey, msg.Route.Channel, msg.Route.ChatID, msg.Route.SenderID,
		string(msg.Kind), msg.Content}
	return mac(k.derive(sealPurpose), append(fields, msg.Media...)...)
}

// ProveAnswer signs an answer for the run that asked: its workflow and run,
// the request, the verdict and the rule it grants.
func (k Key) ProveAnswer(a *protocol.ApprovalAnswer, workflowID, runID string) {
	a.Proof = ""
	if k.Valid() {
		a.Proof = hex.EncodeToString(k.answerMAC(*a, workflowID, runID))
	}
}

// AnswerProven reports whether a's proof was made with this key for this run.
func (k Key) AnswerProven(a protocol.ApprovalAnswer, workflowID, runID string) bool {
	got, err := hex.DecodeString(a.Proof)
	return k.Valid() && err == nil && len(got) > 0 && hmac.Equal(got, k.answerMAC(a, workflowID, runID))
}

func (k Key) answerMAC(a protocol.ApprovalAnswer, workflowID, runID string) []byte {
	return mac(k.derive(answerPurpose), workflowID, runID, a.ID, a.Verdict, a.Rule)
}

// mac is an HMAC over fields, each length-prefixed so no two lists of
// fields encode alike.
func mac(key []byte, fields ...string) []byte {
	m := hmac.New(sha256.New, key)
	var n [8]byte
	binary.BigEndian.PutUint64(n[:], uint64(len(fields)))
	m.Write(n[:])
	for _, f := range fields {
		binary.BigEndian.PutUint64(n[:], uint64(len(f)))
		m.Write(n[:])
		m.Write([]byte(f))
	}
	return m.Sum(nil)
}
