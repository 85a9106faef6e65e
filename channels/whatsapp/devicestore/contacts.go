package devicestore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"go.mau.fi/whatsmeow/store"
	"go.mau.fi/whatsmeow/types"
)

// Contacts, chat settings, message secrets and privacy tokens are kept
// per user or chat, without device (JID.ToNonAD).

// PutPushName records user's push name; changed and the previous name
// tell whatsmeow whether to emit a push-name event.
func (c *Container) PutPushName(ctx context.Context, user types.JID, pushName string) (bool, string, error) {
	return c.putContactField(ctx, user, "push_name", pushName)
}

// PutBusinessName records user's verified business name, as PutPushName.
func (c *Container) PutBusinessName(ctx context.Context, user types.JID, businessName string) (bool, string, error) {
	return c.putContactField(ctx, user, "business_name", businessName)
}

// putContactField sets one name column of user's contact, reporting the
// previous value and whether it changed.
func (c *Container) putContactField(ctx context.Context, user types.JID, column, value string) (changed bool, previous string, err error) {
	jid := user.ToNonAD().String()
	err = c.inTx(ctx, "put "+column+" of "+jid, func(ctx context.Context) error {
		err := c.q(ctx).QueryRowContext(ctx, `SELECT `+column+` FROM contacts WHERE jid = ?`, jid).Scan(&previous)
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("get %s of %s: %w", column, jid, err)
		}
		if err == nil && previous == value {
			return nil
		}
		_, err = c.q(ctx).ExecContext(ctx, `INSERT INTO contacts (jid, `+column+`) VALUES (?, ?)
			ON CONFLICT (jid) DO UPDATE SET `+column+` = excluded.`+column, jid, value)
		if err != nil {
			return fmt.Errorf("put %s of %s: %w", column, jid, err)
		}
		changed = true
		return nil
	})
	return changed, previous, err
}

// PutContactName records the name the phone's address book has for user.
func (c *Container) PutContactName(ctx context.Context, user types.JID, fullName, firstName string) error {
	jid := user.ToNonAD().String()
	_, err := c.q(ctx).ExecContext(ctx, `INSERT INTO contacts (jid, full_name, first_name) VALUES (?, ?, ?)
		ON CONFLICT (jid) DO UPDATE SET full_name = excluded.full_name, first_name = excluded.first_name`,
		jid, fullName, firstName)
	if err != nil {
		return fmt.Errorf("put contact name of %s: %w", jid, err)
	}
	return nil
}

// PutAllContactNames records many address-book names in one transaction.
func (c *Container) PutAllContactNames(ctx context.Context, contacts []store.ContactEntry) error {
	return c.inTx(ctx, "put contact names", func(ctx context.Context) error {
		for _, e := range contacts {
			if err := c.PutContactName(ctx, e.JID, e.FullName, e.FirstName); err != nil {
				return err
			}
		}
		return nil
	})
}

// PutManyRedactedPhones records the masked numbers groups show for LID
// members, in one transaction.
func (c *Container) PutManyRedactedPhones(ctx context.Context, entries []store.RedactedPhoneEntry) error {
	return c.inTx(ctx, "put redacted phones", func(ctx context.Context) error {
		for _, e := range entries {
			jid := e.JID.ToNonAD().String()
			_, err := c.q(ctx).ExecContext(ctx, `INSERT INTO contacts (jid, redacted_phone) VALUES (?, ?)
				ON CONFLICT (jid) DO UPDATE SET redacted_phone = excluded.redacted_phone`, jid, e.RedactedPhone)
			if err != nil {
				return fmt.Errorf("put redacted phone of %s: %w", jid, err)
			}
		}
		return nil
	})
}

const contactColumns = `first_name, full_name, push_name, business_name, redacted_phone`

func scanContact(row interface{ Scan(...any) error }, extra ...any) (types.ContactInfo, error) {
	info := types.ContactInfo{Found: true}
	dest := append(extra, &info.FirstName, &info.FullName, &info.PushName, &info.BusinessName, &info.RedactedPhone)
	return info, row.Scan(dest...)
}

// GetContact is what is known of user; Found is false when nothing is.
func (c *Container) GetContact(ctx context.Context, user types.JID) (types.ContactInfo, error) {
	jid := user.ToNonAD().String()
	info, err := scanContact(c.q(ctx).QueryRowContext(ctx, `SELECT `+contactColumns+` FROM contacts WHERE jid = ?`, jid))
	if errors.Is(err, sql.ErrNoRows) {
		return types.ContactInfo{}, nil
	} else if err != nil {
		return types.ContactInfo{}, fmt.Errorf("get contact %s: %w", jid, err)
	}
	return info, nil
}

// GetAllContacts is every known contact.
func (c *Container) GetAllContacts(ctx context.Context) (map[types.JID]types.ContactInfo, error) {
	rows, err := c.q(ctx).QueryContext(ctx, `SELECT jid, `+contactColumns+` FROM contacts`)
	if err != nil {
		return nil, fmt.Errorf("list contacts: %w", err)
	}
	defer func() { _ = rows.Close() }()
	out := make(map[types.JID]types.ContactInfo)
	for rows.Next() {
		var raw string
		info, err := scanContact(rows, &raw)
		if err != nil {
			return nil, fmt.Errorf("list contacts: %w", err)
		}
		jid, err := types.ParseJID(raw)
		if err != nil {
			return nil, fmt.Errorf("list contacts: jid %q: %w", raw, err)
		}
		out[jid] = info
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list contacts: %w", err)
	}
	return out, nil
}

// PutMutedUntil records until when chat is muted (zero: not muted).
func (c *Container) PutMutedUntil(ctx context.Context, chat types.JID, mutedUntil time.Time) error {
	var ms int64
	if !mutedUntil.IsZero() {
		ms = mutedUntil.UnixMilli()
	}
	return c.putChatSetting(ctx, chat, "muted_until", ms)
}

// PutPinned records whether chat is pinned.
func (c *Container) PutPinned(ctx context.Context, chat types.JID, pinned bool) error {
	return c.putChatSetting(ctx, chat, "pinned", pinned)
}

// PutArchived records whether chat is archived.
func (c *Container) PutArchived(ctx context.Context, chat types.JID, archived bool) error {
	return c.putChatSetting(ctx, chat, "archived", archived)
}

func (c *Container) putChatSetting(ctx context.Context, chat types.JID, column string, value any) error {
	jid := chat.ToNonAD().String()
	_, err := c.q(ctx).ExecContext(ctx, `INSERT INTO chat_settings (jid, `+column+`) VALUES (?, ?)
		ON CONFLICT (jid) DO UPDATE SET `+column+` = excluded.`+column, jid, value)
	if err != nil {
		return fmt.Errorf("put %s of chat %s: %w", column, jid, err)
	}
	return nil
}

// GetChatSettings is chat's local settings; Found is false when none
// were ever set.
func (c *Container) GetChatSettings(ctx context.Context, chat types.JID) (types.LocalChatSettings, error) {
	jid := chat.ToNonAD().String()
	settings := types.LocalChatSettings{Found: true}
	var muted int64
	err := c.q(ctx).QueryRowContext(ctx, `SELECT muted_until, pinned, archived FROM chat_settings WHERE jid = ?`, jid).
		Scan(&muted, &settings.Pinned, &settings.Archived)
	if errors.Is(err, sql.ErrNoRows) {
		return types.LocalChatSettings{}, nil
	} else if err != nil {
		return types.LocalChatSettings{}, fmt.Errorf("get settings of chat %s: %w", jid, err)
	}
	if muted != 0 {
		settings.MutedUntil = time.UnixMilli(muted)
	}
	return settings, nil
}

// PutMessageSecrets records many messages' secrets in one transaction.
func (c *Container) PutMessageSecrets(ctx context.Context, inserts []store.MessageSecretInsert) error {
	return c.inTx(ctx, "put message secrets", func(ctx context.Context) error {
		for _, in := range inserts {
			if err := c.PutMessageSecret(ctx, in.Chat, in.Sender, in.ID, in.Secret); err != nil {
				return err
			}
		}
		return nil
	})
}

// PutMessageSecret records a message's secret (for reactions, polls and
// edits that refer to it); the first one recorded for a message stays.
func (c *Container) PutMessageSecret(ctx context.Context, chat, sender types.JID, id types.MessageID, secret []byte) error {
	chatJID, senderJID := chat.ToNonAD().String(), sender.ToNonAD().String()
	_, err := c.q(ctx).ExecContext(ctx, `INSERT INTO message_secrets (chat, sender, id, secret) VALUES (?, ?, ?, ?)
		ON CONFLICT (chat, sender, id) DO NOTHING`, chatJID, senderJID, id, nonNil(secret))
	if err != nil {
		return fmt.Errorf("put secret of message %s from %s in %s: %w", id, senderJID, chatJID, err)
	}
	return nil
}

// GetMessageSecret is a message's secret and the sender it was recorded
// under; chat and sender may be given as phone JID or LID, whichever the
// message was recorded with. A nil secret: none is known.
func (c *Container) GetMessageSecret(ctx context.Context, chat, sender types.JID, id types.MessageID) ([]byte, types.JID, error) {
	chats, err := c.bothForms(ctx, chat.ToNonAD())
	if err != nil {
		return nil, types.EmptyJID, err
	}
	senders, err := c.bothForms(ctx, sender.ToNonAD())
	if err != nil {
		return nil, types.EmptyJID, err
	}
	for _, ch := range chats {
		for _, s := range senders {
			var secret []byte
			err := c.q(ctx).QueryRowContext(ctx, `SELECT secret FROM message_secrets WHERE chat = ? AND sender = ? AND id = ?`,
				ch.String(), s.String(), id).Scan(&secret)
			if errors.Is(err, sql.ErrNoRows) {
				continue
			} else if err != nil {
				return nil, types.EmptyJID, fmt.Errorf("get secret of message %s from %s: %w", id, s, err)
			}
			return secret, s, nil
		}
	}
	return nil, types.EmptyJID, nil
}

// bothForms is jid and, for a user known under both, its other form
// (phone JID ↔ LID).
func (c *Container) bothForms(ctx context.Context, jid types.JID) ([]types.JID, error) {
	var alt types.JID
	var err error
	switch jid.Server {
	case types.DefaultUserServer:
		alt, err = c.GetLIDForPN(ctx, jid)
	case types.HiddenUserServer:
		alt, err = c.GetPNForLID(ctx, jid)
	}
	if err != nil {
		return nil, err
	}
	if alt.IsEmpty() {
		return []types.JID{jid}, nil
	}
	return []types.JID{jid, alt}, nil
}

// PutPrivacyTokens records the tokens users' privacy settings gave us,
// in one transaction.
func (c *Container) PutPrivacyTokens(ctx context.Context, tokens ...store.PrivacyToken) error {
	return c.inTx(ctx, "put privacy tokens", func(ctx context.Context) error {
		for _, t := range tokens {
			jid := t.User.ToNonAD().String()
			_, err := c.q(ctx).ExecContext(ctx, `INSERT INTO privacy_tokens (jid, token, timestamp) VALUES (?, ?, ?)
				ON CONFLICT (jid) DO UPDATE SET token = excluded.token, timestamp = excluded.timestamp`,
				jid, nonNil(t.Token), t.Timestamp.Unix())
			if err != nil {
				return fmt.Errorf("put privacy token of %s: %w", jid, err)
			}
		}
		return nil
	})
}

// GetPrivacyToken is user's privacy token, nil if there is none.
func (c *Container) GetPrivacyToken(ctx context.Context, user types.JID) (*store.PrivacyToken, error) {
	jid := user.ToNonAD()
	token := store.PrivacyToken{User: jid}
	var ts int64
	err := c.q(ctx).QueryRowContext(ctx, `SELECT token, timestamp FROM privacy_tokens WHERE jid = ?`, jid.String()).Scan(&token.Token, &ts)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	} else if err != nil {
		return nil, fmt.Errorf("get privacy token of %s: %w", jid, err)
	}
	token.Timestamp = time.Unix(ts, 0)
	return &token, nil
}
