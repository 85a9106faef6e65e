package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"os"
	"time"

	uiconfig "github.com/temporalio/ui-server/v2/server/config"
	"go.temporal.io/server/common/config"
)

// frontendTLS is the frontend's TLS (--tls-cert, --tls-key, --tls-client-ca) and the
// identity this process's own clients (system worker, Web UI, bootstrap) present to it.
type frontendTLS struct {
	certFile, keyFile string
	clientCAs         [][]byte // PEM; none = TLS without client certificates
	// pinned is the frontend's own certificate: the one root internal clients trust.
	pinned []byte
	// serverName is a name that certificate carries, which internal clients verify.
	serverName string
	// self is the internal clients' certificate and key (PEM), made at start and never
	// written anywhere; with client certificates required it is trusted beside --tls-client-ca.
	selfCert, selfKey []byte
}

// loadFrontendTLS reads the TLS flags; nil when TLS is off.
func loadFrontendTLS(o *options) (*frontendTLS, error) {
	if o.TLSCert == "" {
		return nil, nil
	}
	pair, err := tls.LoadX509KeyPair(o.TLSCert, o.TLSKey)
	if err != nil {
		return nil, fmt.Errorf("--tls-cert %s / --tls-key %s: %w", o.TLSCert, o.TLSKey, err)
	}
	leaf, err := x509.ParseCertificate(pair.Certificate[0])
	if err != nil {
		return nil, fmt.Errorf("--tls-cert %s: %w", o.TLSCert, err)
	}
	t := &frontendTLS{certFile: o.TLSCert, keyFile: o.TLSKey, pinned: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: leaf.Raw})}
	if t.serverName = nameIn(leaf, dialHost(o.IP)); t.serverName == "" {
		return nil, fmt.Errorf("--tls-cert %s names no host or IP (no subject alternative names): clients cannot verify it", o.TLSCert)
	}
	if o.TLSClientCA != "" {
		ca, err := os.ReadFile(o.TLSClientCA)
		if err != nil {
			return nil, fmt.Errorf("--tls-client-ca: %w", err)
		}
		if !x509.NewCertPool().AppendCertsFromPEM(ca) {
			return nil, fmt.Errorf("--tls-client-ca %s holds no PEM certificate", o.TLSClientCA)
		}
		t.clientCAs = append(t.clientCAs, ca)
	}
	if t.selfCert, t.selfKey, err = internalIdentity(); err != nil {
		return nil, err
	}
	return t, nil
}

// nameIn is the name of leaf internal clients verify: dial when it is one of its names, else its first.
func nameIn(leaf *x509.Certificate, dial string) string {
	if leaf.VerifyHostname(dial) == nil {
		return dial
	}
	if len(leaf.DNSNames) > 0 {
		return leaf.DNSNames[0]
	}
	if len(leaf.IPAddresses) > 0 {
		return leaf.IPAddresses[0].String()
	}
	return ""
}

// internalIdentity is a self-signed client certificate for this process's own clients.
func internalIdentity() (certPEM, keyPEM []byte, err error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, fmt.Errorf("internal client key: %w", err)
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	if err != nil {
		return nil, nil, fmt.Errorf("internal client certificate: %w", err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial,
		Subject:      pkix.Name{CommonName: "temporal-dev internal client"},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().AddDate(10, 0, 0), // lives as long as the process, which may run for years
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, nil, fmt.Errorf("internal client certificate: %w", err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return nil, nil, fmt.Errorf("internal client key: %w", err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}), nil
}

func b64(b []byte) string { return base64.StdEncoding.EncodeToString(b) }

// rootTLS is the server's TLS config: the frontend serves with the user's certificate, the
// system worker dials it with the internal identity; internal services stay on loopback.
func (t *frontendTLS) rootTLS() config.RootTLS {
	if t == nil {
		return config.RootTLS{}
	}
	server := config.ServerTLS{CertFile: t.certFile, KeyFile: t.keyFile}
	if len(t.clientCAs) > 0 {
		server.RequireClientAuth = true
		server.ClientCAData = []string{b64(t.selfCert)}
		for _, ca := range t.clientCAs {
			server.ClientCAData = append(server.ClientCAData, b64(ca))
		}
	}
	return config.RootTLS{
		Frontend: config.GroupTLS{Server: server},
		SystemWorker: config.WorkerTLS{
			CertData: b64(t.selfCert), KeyData: b64(t.selfKey),
			Client: config.ClientTLS{ServerName: t.serverName, RootCAData: []string{b64(t.pinned)}},
		},
	}
}

// uiTLS is how the Web UI dials the frontend.
func (t *frontendTLS) uiTLS() uiconfig.TLS {
	if t == nil {
		return uiconfig.TLS{}
	}
	return uiconfig.TLS{
		CaData: b64(t.pinned), CertData: b64(t.selfCert), KeyData: b64(t.selfKey),
		ServerName: t.serverName, EnableHostVerification: true,
	}
}

// clientConfig is how the bootstrap dials the frontend; nil for plaintext.
func (t *frontendTLS) clientConfig() (*tls.Config, error) {
	if t == nil {
		return nil, nil
	}
	pair, err := tls.X509KeyPair(t.selfCert, t.selfKey)
	if err != nil {
		return nil, fmt.Errorf("internal client certificate: %w", err)
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(t.pinned) {
		return nil, errors.New("the frontend's own certificate does not parse")
	}
	return &tls.Config{Certificates: []tls.Certificate{pair}, RootCAs: roots, ServerName: t.serverName, MinVersion: tls.VersionTLS12}, nil
}

// validateTLS checks the TLS flags go together.
func (o *options) validateTLS() error {
	switch {
	case (o.TLSCert == "") != (o.TLSKey == ""):
		return errors.New("--tls-cert and --tls-key go together")
	case o.TLSClientCA != "" && o.TLSCert == "":
		return errors.New("--tls-client-ca needs --tls-cert and --tls-key: client certificates are asked for over TLS")
	}
	return nil
}
