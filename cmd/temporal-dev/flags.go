package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"regexp"
	"slices"
	"strings"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/server/common/searchattribute/sadefs"
)

// defaultNamespace is always registered, like `temporal server start-dev` does.
const defaultNamespace = "default"

// options is the validated command line of one temporal-dev run.
type options struct {
	IP          string
	Port        int
	UIIP        string
	UIPort      int
	HTTPPort    int // 0 = off: nothing here uses the frontend's HTTP API
	MetricsPort int // 0 = metrics off
	Headless    bool
	DBFilename  string // "" = in-memory
	// VisibilityFile keeps visibility in a SQLite file of its own ("" = in DBFilename).
	VisibilityFile string
	DBURL          string // --db as given; "" = SQLite
	// Postgres is the parsed --db, nil on SQLite.
	Postgres   *postgresTarget
	Namespaces []string
	// Retention is how long every namespace keeps a closed workflow's history (and the Web UI shows it).
	Retention time.Duration
	// VacuumFreePercent: at start, a SQLite file whose free pages are at least this share is vacuumed (0 = never).
	VacuumFreePercent int
	// CompactOnly compacts the database file (a stopped server's) and exits.
	CompactOnly bool
	// SearchAttributes keeps flag order so registration and errors are deterministic.
	SearchAttributes []searchAttribute
	DynamicConfig    []dynamicConfigValue
	Pragmas          []pragma
	// SQLiteMaxConns is the plugin's connection pool size; more than one needs a WAL file DB.
	SQLiteMaxConns int
	// LeanVisibility creates visibility without the indexes nanobot never queries.
	LeanVisibility bool
	// ReleaseStartupMemory returns start-up garbage to the OS once the server is up.
	ReleaseStartupMemory bool
	// DropStartupPages also advises the kernel to drop the executable's start-up pages (madvise).
	DropStartupPages bool
	LogLevel         string
	LogFormat        string
	// UIAllowedHosts are Host names the Web UI answers to beside loopback and its bound IP.
	UIAllowedHosts []string
	// TLSCert and TLSKey serve the frontend over TLS; TLSClientCA then requires client certificates.
	TLSCert, TLSKey, TLSClientCA string
}

type searchAttribute struct {
	Name string
	Type enumspb.IndexedValueType
}

type dynamicConfigValue struct {
	Key   string
	Value any
}

type pragma struct {
	Name  string
	Value string
}

// stringList is a repeatable string flag.
type stringList []string

func (s *stringList) String() string { return strings.Join(*s, ",") }

func (s *stringList) Set(v string) error {
	*s = append(*s, v)
	return nil
}

// errHelp is returned when the user asked for usage; main exits 0 then.
var errHelp = flag.ErrHelp

// parseFlags parses and validates args (without the program name).
func parseFlags(args []string, usageOut io.Writer) (*options, error) {
	fs := flag.NewFlagSet("temporal-dev", flag.ContinueOnError)
	fs.SetOutput(io.Discard) // errors are returned and printed once by main

	var (
		o                                           options
		namespaces, searchAttrs, dynValues, pragmas stringList
		uiHosts                                     stringList
	)
	fs.StringVar(&o.IP, "ip", "127.0.0.1", "IP address to bind the frontend gRPC service to")
	fs.IntVar(&o.Port, "port", 7233, "port for the frontend gRPC service")
	fs.IntVar(&o.Port, "p", 7233, "shorthand for --port")
	fs.StringVar(&o.UIIP, "ui-ip", "", "IP address to bind the Web UI to (default: --ip)")
	fs.IntVar(&o.UIPort, "ui-port", 0, "port for the Web UI (default: --port + 1000)")
	fs.IntVar(&o.HTTPPort, "http-port", 0, "port for the frontend HTTP API on --ip (default: off)")
	fs.IntVar(&o.MetricsPort, "metrics-port", 0, "port for Prometheus metrics on --ip (default: off)")
	fs.BoolVar(&o.Headless, "headless", false, "do not start the Web UI")
	fs.StringVar(&o.DBFilename, "db-filename", "", "SQLite file to persist to (default: in-memory)")
	fs.StringVar(&o.DBFilename, "f", "", "shorthand for --db-filename")
	fs.StringVar(&o.DBURL, "db", "", "PostgreSQL to persist to, postgres://user:password@host:port/database (visibility in database_visibility; both set up on first start)")
	fs.Var(&namespaces, "namespace", "extra namespace to register (repeatable)")
	fs.Var(&namespaces, "n", "shorthand for --namespace")
	fs.DurationVar(&o.Retention, "namespace-retention", 24*time.Hour, "how long the namespaces keep closed workflows (set on existing ones too; at least 1h)")
	fs.IntVar(&o.VacuumFreePercent, "sqlite-vacuum-free-percent", 20, "at start, VACUUM a SQLite file whose free pages are at least this percent of it (0 = never)")
	fs.BoolVar(&o.CompactOnly, "compact-only", false, "checkpoint and, per --sqlite-vacuum-free-percent, VACUUM the --db-filename of a stopped server, then exit")
	fs.Var(&searchAttrs, "search-attribute", "custom search attribute NAME=TYPE (repeatable)")
	fs.Var(&dynValues, "dynamic-config-value", "dynamic config KEY=JSONVALUE (repeatable; KEY=null restores the server's default)")
	fs.Var(&pragmas, "sqlite-pragma", "SQLite pragma NAME=VALUE (repeatable)")
	fs.StringVar(&o.VisibilityFile, "sqlite-visibility-file", "", "SQLite file for visibility, apart from --db-filename's history (default: the same file)")
	fs.IntVar(&o.SQLiteMaxConns, "sqlite-max-conns", 1, "SQLite connections (more than 1 needs --db-filename in WAL mode)")
	fs.BoolVar(&o.LeanVisibility, "sqlite-lean-visibility", true, "create the visibility schema without the indexes nanobot never queries (new databases only)")
	fs.BoolVar(&o.ReleaseStartupMemory, "release-startup-memory", true, "return start-up memory to the OS once the server is up")
	fs.BoolVar(&o.DropStartupPages, "drop-startup-pages", true, "with --release-startup-memory, also madvise(DONTNEED) the executable's pages start-up read")
	fs.StringVar(&o.LogLevel, "log-level", "warn", "server log level: debug|info|warn|error")
	fs.StringVar(&o.LogFormat, "log-format", "text", "server log format: text|json")
	fs.Var(&uiHosts, "ui-allowed-host", "a Host name the Web UI answers to beside 127.0.0.1, localhost, [::1] and its IP (repeatable)")
	fs.StringVar(&o.TLSCert, "tls-cert", "", "PEM certificate the frontend serves TLS with (with --tls-key)")
	fs.StringVar(&o.TLSKey, "tls-key", "", "PEM private key of --tls-cert")
	fs.StringVar(&o.TLSClientCA, "tls-client-ca", "", "PEM CA certificates; clients must present a certificate they signed (mTLS)")

	// Tolerate `temporal-dev server start-dev ...` so start-dev command lines can be reused verbatim.
	for len(args) > 0 && (args[0] == "server" || args[0] == "start-dev") {
		args = args[1:]
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fs.SetOutput(usageOut)
			_, _ = fmt.Fprintln(usageOut, "Usage: temporal-dev [flags]  (flags compatible with `temporal server start-dev`)")
			fs.PrintDefaults()
			return nil, errHelp
		}
		return nil, fmt.Errorf("%w (see --help)", err)
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected argument %q (see --help)", fs.Arg(0))
	}

	var err error
	if o.Namespaces, err = parseNamespaces(namespaces); err != nil {
		return nil, err
	}
	if o.SearchAttributes, err = parseSearchAttributes(searchAttrs); err != nil {
		return nil, err
	}
	if o.DynamicConfig, err = parseDynamicConfigValues(dynValues); err != nil {
		return nil, err
	}
	if o.Pragmas, err = parsePragmas(pragmas); err != nil {
		return nil, err
	}
	o.UIAllowedHosts = uiHosts
	if err := o.validate(); err != nil {
		return nil, err
	}
	if err := o.validateTLS(); err != nil {
		return nil, err
	}
	if err := o.validateDB(); err != nil {
		return nil, err
	}
	return &o, nil
}

// validate checks ranges and fills defaults that depend on other flags.
func (o *options) validate() error {
	var err error
	if o.IP, err = normalizeIP("--ip", o.IP); err != nil {
		return err
	}
	if o.UIIP == "" {
		o.UIIP = o.IP
	} else if o.UIIP, err = normalizeIP("--ui-ip", o.UIIP); err != nil {
		return err
	}
	if o.UIPort == 0 {
		o.UIPort = o.Port + 1000
	}
	if err := checkPort("--port", o.Port, false); err != nil {
		return err
	}
	if err := checkPort("--ui-port", o.UIPort, false); err != nil {
		return err
	}
	if err := checkPort("--http-port", o.HTTPPort, true); err != nil {
		return err
	}
	if err := checkPort("--metrics-port", o.MetricsPort, true); err != nil {
		return err
	}
	if o.HTTPPort != 0 && o.HTTPPort == o.Port {
		return fmt.Errorf("--http-port %d must differ from --port", o.HTTPPort)
	}
	if o.MetricsPort == o.Port || (o.MetricsPort != 0 && o.MetricsPort == o.HTTPPort) {
		return fmt.Errorf("--metrics-port %d must differ from --port and --http-port", o.MetricsPort)
	}
	if !o.Headless && o.UIPort == o.Port {
		return fmt.Errorf("--ui-port %d must differ from --port", o.UIPort)
	}
	if o.SQLiteMaxConns < 1 {
		return fmt.Errorf("invalid --sqlite-max-conns %d: want 1 or more", o.SQLiteMaxConns)
	}
	if o.Retention < time.Hour { // the server's own minimum for a namespace's retention
		return fmt.Errorf("invalid --namespace-retention %s: want 1h or more", o.Retention)
	}
	if o.VacuumFreePercent < 0 || o.VacuumFreePercent > 100 {
		return fmt.Errorf("invalid --sqlite-vacuum-free-percent %d: want 0 to 100", o.VacuumFreePercent)
	}
	if o.SQLiteMaxConns > 1 && o.DBFilename == "" {
		return fmt.Errorf("--sqlite-max-conns %d needs --db-filename: an in-memory database runs on one connection", o.SQLiteMaxConns)
	}
	if o.VisibilityFile != "" && o.DBFilename == "" {
		return fmt.Errorf("--sqlite-visibility-file needs --db-filename: an in-memory database keeps both")
	}
	switch o.LogLevel {
	case "debug", "info", "warn", "error":
	default:
		return fmt.Errorf("invalid --log-level %q: want debug, info, warn or error", o.LogLevel)
	}
	switch o.LogFormat {
	case "json":
	case "text", "pretty", "console", "":
		o.LogFormat = "text"
	default:
		return fmt.Errorf("invalid --log-format %q: want text or json", o.LogFormat)
	}
	return nil
}

// validateDB parses --db and refuses the SQLite-only flags beside it.
func (o *options) validateDB() error {
	if o.DBURL == "" {
		return nil
	}
	if o.DBFilename != "" {
		return errors.New("--db and --db-filename both given: choose PostgreSQL or a SQLite file")
	}
	if len(o.Pragmas) > 0 {
		return errors.New("--sqlite-pragma applies to SQLite only, not with --db")
	}
	target, err := parsePostgresURL(o.DBURL)
	if err != nil {
		return err
	}
	o.Postgres = target
	return nil
}

func checkPort(name string, port int, zeroOK bool) error {
	if port == 0 && zeroOK {
		return nil
	}
	if port < 1 || port > 65535 {
		return fmt.Errorf("invalid %s %d: want 1-65535", name, port)
	}
	return nil
}

// normalizeIP accepts an IP literal or "localhost" (mapped to 127.0.0.1, as the server binds IPs only).
func normalizeIP(name, v string) (string, error) {
	if v == "localhost" {
		return "127.0.0.1", nil
	}
	ip := net.ParseIP(v)
	if ip == nil {
		return "", fmt.Errorf("invalid %s %q: want an IP address", name, v)
	}
	return ip.String(), nil
}

// parseNamespaces returns "default" followed by the extra namespaces, without duplicates.
func parseNamespaces(values []string) ([]string, error) {
	out := []string{defaultNamespace}
	for _, v := range values {
		for _, name := range strings.Split(v, ",") {
			name = strings.TrimSpace(name)
			if name == "" {
				return nil, fmt.Errorf("invalid --namespace %q: empty name", v)
			}
			if !slices.Contains(out, name) {
				out = append(out, name)
			}
		}
	}
	return out, nil
}

// searchAttributeTypes maps start-dev's type names (case-insensitive) to the API enum.
var searchAttributeTypes = map[string]enumspb.IndexedValueType{
	"keyword":     enumspb.INDEXED_VALUE_TYPE_KEYWORD,
	"text":        enumspb.INDEXED_VALUE_TYPE_TEXT,
	"int":         enumspb.INDEXED_VALUE_TYPE_INT,
	"double":      enumspb.INDEXED_VALUE_TYPE_DOUBLE,
	"bool":        enumspb.INDEXED_VALUE_TYPE_BOOL,
	"datetime":    enumspb.INDEXED_VALUE_TYPE_DATETIME,
	"keywordlist": enumspb.INDEXED_VALUE_TYPE_KEYWORD_LIST,
}

var identifierRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

func parseSearchAttributes(values []string) ([]searchAttribute, error) {
	var out []searchAttribute
	for _, v := range values {
		name, typ, ok := strings.Cut(v, "=")
		name, typ = strings.TrimSpace(name), strings.TrimSpace(typ)
		if !ok || name == "" || typ == "" {
			return nil, fmt.Errorf("invalid --search-attribute %q: want NAME=TYPE", v)
		}
		if !identifierRE.MatchString(name) {
			return nil, fmt.Errorf("invalid --search-attribute %q: name must be letters, digits and underscores", v)
		}
		if sadefs.IsReserved(name) {
			return nil, fmt.Errorf("invalid --search-attribute %q: %s is a reserved search attribute name", v, name)
		}
		t, known := searchAttributeTypes[strings.ToLower(typ)]
		if !known {
			return nil, fmt.Errorf("invalid --search-attribute %q: unknown type %q (want Keyword, Text, Int, Double, Bool, Datetime or KeywordList)", v, typ)
		}
		if i := slices.IndexFunc(out, func(s searchAttribute) bool { return s.Name == name }); i >= 0 {
			if out[i].Type != t {
				return nil, fmt.Errorf("invalid --search-attribute %q: %s already given with type %s", v, name, out[i].Type)
			}
			continue
		}
		out = append(out, searchAttribute{Name: name, Type: t})
	}
	return out, nil
}

// parseDynamicConfigValues parses KEY=JSON pairs; a later value for the same key wins.
func parseDynamicConfigValues(values []string) ([]dynamicConfigValue, error) {
	var out []dynamicConfigValue
	for _, v := range values {
		key, raw, ok := strings.Cut(v, "=")
		key = strings.TrimSpace(key)
		if !ok || key == "" {
			return nil, fmt.Errorf("invalid --dynamic-config-value %q: want KEY=JSONVALUE", v)
		}
		val, err := parseJSONValue(raw)
		if err != nil {
			return nil, fmt.Errorf("invalid --dynamic-config-value %q: value is not JSON (quote strings, e.g. %s=\"text\"): %w", v, key, err)
		}
		out = append(out, dynamicConfigValue{Key: key, Value: val})
	}
	return out, nil
}

// parseJSONValue decodes one JSON value, turning integral numbers into int because the server's
// dynamic config converters accept int but not float64 for integer settings.
func parseJSONValue(raw string) (any, error) {
	dec := json.NewDecoder(bytes.NewReader([]byte(raw)))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, errors.New("trailing data after the JSON value")
	}
	return normalizeJSON(v)
}

func normalizeJSON(v any) (any, error) {
	switch t := v.(type) {
	case json.Number:
		if i, err := t.Int64(); err == nil {
			return int(i), nil
		}
		f, err := t.Float64()
		if err != nil {
			return nil, fmt.Errorf("number %s: %w", t, err)
		}
		return f, nil
	case []any:
		for i := range t {
			n, err := normalizeJSON(t[i])
			if err != nil {
				return nil, err
			}
			t[i] = n
		}
		return t, nil
	case map[string]any:
		for k := range t {
			n, err := normalizeJSON(t[k])
			if err != nil {
				return nil, err
			}
			t[k] = n
		}
		return t, nil
	default:
		return v, nil
	}
}

// sqliteURIParams are SQLite URI parameters, not pragmas; the plugin would pass them to the URI.
var sqliteURIParams = []string{"cache", "immutable", "mode", "modeof", "nolock", "psow", "setup", "vfs"}

// parsePragmas parses NAME=VALUE pairs; a later value for the same name wins.
func parsePragmas(values []string) ([]pragma, error) {
	var out []pragma
	for _, v := range values {
		name, val, ok := strings.Cut(v, "=")
		name, val = strings.ToLower(strings.TrimSpace(name)), strings.TrimSpace(val)
		if !ok || name == "" || val == "" {
			return nil, fmt.Errorf("invalid --sqlite-pragma %q: want NAME=VALUE", v)
		}
		if !identifierRE.MatchString(name) || slices.Contains(sqliteURIParams, name) {
			return nil, fmt.Errorf("invalid --sqlite-pragma %q: %q is not a pragma name", v, name)
		}
		if i := slices.IndexFunc(out, func(p pragma) bool { return p.Name == name }); i >= 0 {
			out[i].Value = val
			continue
		}
		out = append(out, pragma{Name: name, Value: val})
	}
	return out, nil
}
