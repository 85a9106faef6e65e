package devicestore

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/google/uuid"
	"go.mau.fi/whatsmeow/proto/waAdv"
	"go.mau.fi/whatsmeow/store"
	"go.mau.fi/whatsmeow/types"
	"go.mau.fi/whatsmeow/util/keys"
	"google.golang.org/protobuf/proto"
)

// signedPreKeyID is the id of a new device's signed pre-key (its one-time
// pre-keys are numbered apart, see GetOrGenPreKeys).
const signedPreKeyID = 1

// NewDevice is a fresh, unpaired device with new keys, bound to c's
// stores; nothing is written until whatsmeow saves it after pairing.
func (c *Container) NewDevice() *store.Device {
	identity := keys.NewKeyPair()
	d := &store.Device{
		NoiseKey:       keys.NewKeyPair(),
		IdentityKey:    identity,
		SignedPreKey:   identity.CreateSignedPreKey(signedPreKeyID),
		RegistrationID: newRegistrationID(),
		AdvSecretKey:   randomBytes(32),
	}
	c.bind(d)
	return d
}

// newRegistrationID is a Signal registration id, in Signal's 14-bit range.
func newRegistrationID() uint32 {
	return binary.BigEndian.Uint32(randomBytes(4))%16380 + 1
}

func randomBytes(n int) []byte {
	b := make([]byte, n)
	_, _ = rand.Read(b) // crypto/rand.Read never fails (Go 1.24+)
	return b
}

// bind points every store of d at c.
func (c *Container) bind(d *store.Device) {
	d.Log = c.log
	d.Identities, d.Sessions, d.PreKeys, d.SenderKeys = c, c, c, c
	d.AppStateKeys, d.AppState, d.Contacts, d.ChatSettings = c, c, c, c
	d.MsgSecrets, d.PrivacyTokens, d.EventBuffer, d.LIDs = c, c, c, c
	d.Container = c
}

// GetFirstDevice is the stored device, or a new unpaired one when the
// file holds none.
func (c *Container) GetFirstDevice(ctx context.Context) (*store.Device, error) {
	d, err := c.loadDevice(ctx)
	if err != nil {
		return nil, err
	}
	if d == nil {
		return c.NewDevice(), nil
	}
	return d, nil
}

const deviceColumns = `jid, lid, registration_id, noise_key, identity_key, signed_prekey_id,
	signed_prekey, signed_prekey_sig, adv_secret, account, platform, business_name,
	push_name, lid_migration_ts, facebook_uuid`

func (c *Container) loadDevice(ctx context.Context) (*store.Device, error) {
	var (
		jid, lid, platform, business, push, fbUUID string
		noise, identity, spk, spkSig, adv, account []byte
		regID, spkID                               uint32
		lidMigration                               int64
	)
	err := c.q(ctx).QueryRowContext(ctx, `SELECT `+deviceColumns+` FROM device WHERE id = 1`).Scan(
		&jid, &lid, &regID, &noise, &identity, &spkID, &spk, &spkSig, &adv, &account,
		&platform, &business, &push, &lidMigration, &fbUUID)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	} else if err != nil {
		return nil, fmt.Errorf("load device: %w", err)
	}
	d := &store.Device{
		RegistrationID:        regID,
		AdvSecretKey:          adv,
		Platform:              platform,
		BusinessName:          business,
		PushName:              push,
		LIDMigrationTimestamp: lidMigration,
		Initialized:           true,
	}
	if d.NoiseKey, err = keyPair(noise); err != nil {
		return nil, fmt.Errorf("load device noise key: %w", err)
	}
	if d.IdentityKey, err = keyPair(identity); err != nil {
		return nil, fmt.Errorf("load device identity key: %w", err)
	}
	spkPair, err := keyPair(spk)
	if err != nil {
		return nil, fmt.Errorf("load device signed pre-key: %w", err)
	}
	if len(spkSig) != 64 {
		return nil, fmt.Errorf("load device: signed pre-key signature is %d bytes, want 64", len(spkSig))
	}
	d.SignedPreKey = &keys.PreKey{KeyPair: *spkPair, KeyID: spkID, Signature: (*[64]byte)(spkSig)}
	id, err := types.ParseJID(jid)
	if err != nil {
		return nil, fmt.Errorf("load device jid %q: %w", jid, err)
	}
	d.ID = &id
	if lid != "" {
		if d.LID, err = types.ParseJID(lid); err != nil {
			return nil, fmt.Errorf("load device lid %q: %w", lid, err)
		}
	}
	if account != nil {
		d.Account = &waAdv.ADVSignedDeviceIdentity{}
		if err := proto.Unmarshal(account, d.Account); err != nil {
			return nil, fmt.Errorf("load device account: %w", err)
		}
	}
	if fbUUID != "" {
		if d.FacebookUUID, err = uuid.Parse(fbUUID); err != nil {
			return nil, fmt.Errorf("load device facebook uuid: %w", err)
		}
	}
	c.bind(d)
	return d, nil
}

// keyPair rebuilds a Curve25519 pair from its stored private half.
func keyPair(priv []byte) (*keys.KeyPair, error) {
	if len(priv) != 32 {
		return nil, fmt.Errorf("private key is %d bytes, want 32", len(priv))
	}
	return keys.NewKeyPairFromPrivateKey(*(*[32]byte)(priv)), nil
}

// PutDevice saves d, once paired. The file holds one device: saving a
// different account than the stored one first forgets the old one's data.
func (c *Container) PutDevice(ctx context.Context, d *store.Device) error {
	if d.ID == nil {
		return errors.New("save device: not paired (no JID)")
	}
	if d.NoiseKey == nil || d.IdentityKey == nil || d.SignedPreKey == nil || d.SignedPreKey.Signature == nil {
		return fmt.Errorf("save device %s: keys missing (not made by NewDevice)", d.ID)
	}
	var account []byte
	if d.Account != nil {
		var err error
		if account, err = proto.Marshal(d.Account); err != nil {
			return fmt.Errorf("save device account: %w", err)
		}
	}
	lid := ""
	if !d.LID.IsEmpty() {
		lid = d.LID.String()
	}
	fbUUID := ""
	if d.FacebookUUID != uuid.Nil {
		fbUUID = d.FacebookUUID.String()
	}
	err := c.inTx(ctx, "save device", func(ctx context.Context) error {
		var stored string
		err := c.q(ctx).QueryRowContext(ctx, `SELECT jid FROM device WHERE id = 1`).Scan(&stored)
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("save device: read stored: %w", err)
		}
		if err == nil && stored != d.ID.String() {
			if err := c.wipe(ctx); err != nil {
				return err
			}
		}
		_, err = c.q(ctx).ExecContext(ctx, `INSERT INTO device (id, `+deviceColumns+`)
			VALUES (1, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
			ON CONFLICT (id) DO UPDATE SET jid = excluded.jid, lid = excluded.lid,
				registration_id = excluded.registration_id, noise_key = excluded.noise_key,
				identity_key = excluded.identity_key, signed_prekey_id = excluded.signed_prekey_id,
				signed_prekey = excluded.signed_prekey, signed_prekey_sig = excluded.signed_prekey_sig,
				adv_secret = excluded.adv_secret, account = excluded.account, platform = excluded.platform,
				business_name = excluded.business_name, push_name = excluded.push_name,
				lid_migration_ts = excluded.lid_migration_ts, facebook_uuid = excluded.facebook_uuid`,
			d.ID.String(), lid, d.RegistrationID, d.NoiseKey.Priv[:], d.IdentityKey.Priv[:],
			d.SignedPreKey.KeyID, d.SignedPreKey.Priv[:], d.SignedPreKey.Signature[:], d.AdvSecretKey,
			account, d.Platform, d.BusinessName, d.PushName, d.LIDMigrationTimestamp, fbUUID)
		if err != nil {
			return fmt.Errorf("save device %s: %w", d.ID, err)
		}
		return nil
	})
	if err != nil {
		return err
	}
	c.bind(d)
	d.Initialized = true
	return nil
}

// DeleteDevice forgets the stored device and all its data (the LID map,
// about other users, stays).
func (c *Container) DeleteDevice(ctx context.Context, _ *store.Device) error {
	return c.inTx(ctx, "delete device", c.wipe)
}

// wipe empties the device's tables.
func (c *Container) wipe(ctx context.Context) error {
	for _, table := range deviceTables {
		if _, err := c.q(ctx).ExecContext(ctx, `DELETE FROM `+table); err != nil {
			return fmt.Errorf("delete device: empty %s: %w", table, err)
		}
	}
	return nil
}
