package main

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"os"
	"slices"
	"strconv"
	"time"

	"go.temporal.io/sdk/client"
)

// tlsSetting is one setting of the Temporal client and the variables that carry it:
// first the Temporal CLI's and SDKs' name, then the shorter one of the Web UI and
// older CLIs (either works; both set to different values is refused).
type tlsSetting []string

var (
	tlsCertPath = tlsSetting{"TEMPORAL_TLS_CLIENT_CERT_PATH", "TEMPORAL_TLS_CERT"}
	tlsCertData = tlsSetting{"TEMPORAL_TLS_CLIENT_CERT_DATA", "TEMPORAL_TLS_CERT_DATA"}
	tlsKeyPath  = tlsSetting{"TEMPORAL_TLS_CLIENT_KEY_PATH", "TEMPORAL_TLS_KEY"}
	tlsKeyData  = tlsSetting{"TEMPORAL_TLS_CLIENT_KEY_DATA", "TEMPORAL_TLS_KEY_DATA"}
	tlsCAPath   = tlsSetting{"TEMPORAL_TLS_SERVER_CA_CERT_PATH", "TEMPORAL_TLS_CA"}
	tlsCAData   = tlsSetting{"TEMPORAL_TLS_SERVER_CA_CERT_DATA", "TEMPORAL_TLS_CA_DATA"}
	tlsServer   = tlsSetting{"TEMPORAL_TLS_SERVER_NAME"}
	tlsNoVerify = tlsSetting{"TEMPORAL_TLS_DISABLE_HOST_VERIFICATION"}
	tlsOn       = tlsSetting{"TEMPORAL_TLS"}
	temporalKey = tlsSetting{"TEMPORAL_API_KEY"}
	// tlsOnly are the settings that mean TLS whenever one is set.
	tlsOnly = []tlsSetting{tlsCertPath, tlsCertData, tlsKeyPath, tlsKeyData, tlsCAPath, tlsCAData, tlsServer, tlsNoVerify}
)

// tlsPathVariables name files: a service unit, run from the home directory, gets them absolute.
func tlsPathVariables() []string {
	return slices.Concat(tlsCertPath, tlsKeyPath, tlsCAPath)
}

// temporalSecurity is how this process dials Temporal, read from the environment.
type temporalSecurity struct {
	TLS    *tls.Config // nil: plaintext
	MTLS   bool        // a client certificate is presented
	APIKey string
	// Why names the variable that turned TLS on ("" on plaintext).
	Why string
}

// value is the setting's value and the variable it came from.
func (s tlsSetting) value(getenv func(string) string) (val, name string, err error) {
	for _, n := range s {
		switch v := getenv(n); {
		case v == "":
		case name == "":
			val, name = v, n
		case v != val:
			return "", "", fmt.Errorf("%s and %s are both set, to different values: keep one", name, n)
		}
	}
	return val, name, nil
}

// pemOf is a setting's PEM: the file its _PATH variable names, or its _DATA variable.
func pemOf(getenv func(string) string, path, data tlsSetting) (pem []byte, name string, err error) {
	p, pn, err := path.value(getenv)
	if err != nil {
		return nil, "", err
	}
	d, dn, err := data.value(getenv)
	if err != nil {
		return nil, "", err
	}
	switch {
	case p != "" && d != "":
		return nil, "", fmt.Errorf("%s and %s are both set: give the file or the PEM, not both", pn, dn)
	case p != "":
		b, err := os.ReadFile(p)
		if err != nil {
			return nil, "", fmt.Errorf("%s: %w", pn, err)
		}
		return b, pn, nil
	case d != "":
		return []byte(d), dn, nil
	}
	return nil, "", nil
}

// temporalSecurityFromEnv reads TEMPORAL_TLS_* and TEMPORAL_API_KEY as the Temporal CLI
// does: any TLS variable, TEMPORAL_TLS=true or an API key turns TLS on (TEMPORAL_TLS=false
// keeps an API key on plaintext); a file that does not load is named by its variable.
func temporalSecurityFromEnv(getenv func(string) string) (*temporalSecurity, error) {
	sec := &temporalSecurity{}
	on, onName, err := tlsOn.value(getenv)
	if err != nil {
		return nil, err
	}
	if sec.APIKey, _, err = temporalKey.value(getenv); err != nil {
		return nil, err
	}
	for _, s := range tlsOnly {
		_, n, err := s.value(getenv)
		if err != nil {
			return nil, err
		}
		if n != "" && sec.Why == "" {
			sec.Why = n
		}
	}
	if on != "" {
		enabled, err := strconv.ParseBool(on)
		if err != nil {
			return nil, fmt.Errorf("%s=%q: want true or false", onName, on)
		}
		switch {
		case !enabled && sec.Why != "":
			return nil, fmt.Errorf("%s=false but %s is set: unset one", onName, sec.Why)
		case !enabled:
			return sec, nil
		case sec.Why == "":
			sec.Why = onName
		}
	}
	if sec.Why == "" && sec.APIKey != "" {
		sec.Why = temporalKey[0]
	}
	if sec.Why == "" {
		return sec, nil
	}
	if sec.TLS, err = clientTLS(getenv); err != nil {
		return nil, err
	}
	sec.MTLS = len(sec.TLS.Certificates) > 0
	return sec, nil
}

// clientTLS is the TLS config the variables describe.
func clientTLS(getenv func(string) string) (*tls.Config, error) {
	cfg := &tls.Config{MinVersion: tls.VersionTLS12}
	cert, certName, err := pemOf(getenv, tlsCertPath, tlsCertData)
	if err != nil {
		return nil, err
	}
	key, keyName, err := pemOf(getenv, tlsKeyPath, tlsKeyData)
	if err != nil {
		return nil, err
	}
	switch {
	case cert != nil && key != nil:
		pair, err := tls.X509KeyPair(cert, key)
		if err != nil {
			return nil, fmt.Errorf("%s and %s: %w", certName, keyName, err)
		}
		cfg.Certificates = []tls.Certificate{pair}
	case cert != nil:
		return nil, fmt.Errorf("%s is set without its key (%s or %s)", certName, tlsKeyPath[0], tlsKeyData[0])
	case key != nil:
		return nil, fmt.Errorf("%s is set without its certificate (%s or %s)", keyName, tlsCertPath[0], tlsCertData[0])
	}
	ca, caName, err := pemOf(getenv, tlsCAPath, tlsCAData)
	if err != nil {
		return nil, err
	}
	if ca != nil {
		cfg.RootCAs = x509.NewCertPool()
		if !cfg.RootCAs.AppendCertsFromPEM(ca) {
			return nil, fmt.Errorf("%s holds no PEM certificate", caName)
		}
	}
	cfg.ServerName, _, _ = tlsServer.value(getenv) // "" = the host of TEMPORAL_ADDRESS
	if v, n, _ := tlsNoVerify.value(getenv); v != "" {
		skip, err := strconv.ParseBool(v)
		if err != nil {
			return nil, fmt.Errorf("%s=%q: want true or false", n, v)
		}
		cfg.InsecureSkipVerify = skip // the Temporal CLI's meaning: the server's certificate is not checked
	}
	return cfg, nil
}

// clientOptions adds the TLS config and API key to a dial's options.
func (s *temporalSecurity) clientOptions(o client.Options) client.Options {
	o.ConnectionOptions.TLS = s.TLS
	if s.APIKey != "" {
		o.Credentials = client.NewAPIKeyStaticCredentials(s.APIKey)
		o.ConnectionOptions.TLSDisabled = s.TLS == nil // TEMPORAL_TLS=false: the SDK would turn TLS on for a key
	}
	return o
}

// explain adds to a failed dial what a TLS handshake of its own learns: a server that
// requires a client certificate closes the connection, which gRPC reports as a broken pipe.
func (s *temporalSecurity) explain(err error, addr string) error {
	if s.TLS == nil {
		return err
	}
	cfg := s.TLS.Clone()
	cfg.NextProtos = []string{"h2"}
	conn, herr := tls.DialWithDialer(&net.Dialer{Timeout: 3 * time.Second}, "tcp", addr, cfg)
	if herr == nil {
		// TLS 1.3 sends the server's verdict on our certificate after the handshake.
		_ = conn.SetReadDeadline(time.Now().Add(2 * time.Second))
		_, herr = conn.Read(make([]byte, 1))
		_ = conn.Close()
		if ne, ok := herr.(net.Error); (ok && ne.Timeout()) || herr == nil {
			return err
		}
	}
	return fmt.Errorf("%w (TLS handshake: %v)", err, herr)
}

// errEmbeddedPlaintext refuses to start the embedded temporal-dev, which serves plaintext,
// for a process told to speak TLS to Temporal.
var errEmbeddedPlaintext = errors.New("so nanobot does not start its embedded Temporal, which serves plaintext: set TEMPORAL_ADDRESS to your TLS cluster, or unset the TLS variables")
