package channels

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"mime"
	"mime/multipart"
	"net/http"
	"net/textproto"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// API is a platform's HTTP JSON API as a channel calls it: requests carry
// the bot's token, answers are decoded, and a refusal comes back as an
// *HTTPError that delivery already knows how to treat (see Judge).
type API struct {
	// Name starts every error ("mattermost").
	Name string
	// Base goes before every path; "" when paths are whole URLs.
	Base string
	HTTP *http.Client
	// Token is a fixed token; Tokens a cached one, dropped when the
	// platform refuses it (401): the call's error is then one delivery
	// tries again, or with RetryRefused the call is made again at once.
	Token        string
	Tokens       *TokenCache
	RetryRefused bool
	// Scheme is the word before the token in Authorization ("": Bearer);
	// TokenHeader a header the token goes in as it is instead, TokenQuery a
	// query parameter (added after the call is named, so a refusal's error
	// does not carry it).
	Scheme, TokenHeader, TokenQuery string
	// Header sets the platform's own headers on each request (nil: none).
	Header func(http.Header)
	// RetryAfterHeader names the header of a rate limit's wait in seconds
	// ("": Retry-After).
	RetryAfterHeader string
	// Judge classifies a refusal for delivery (nil: JudgeHTTP).
	Judge func(*HTTPError) error
	// Envelope reads a platform's own verdict in an answer's JSON body
	// (nil: the status alone decides): code is its error code ("": none; a
	// 2xx answer with one is a refusal too), tokenRefused that the token
	// itself was refused, which is then dropped as on a 401.
	Envelope func(status int, body []byte) (code string, tokenRefused bool)
}

// HTTPError is a refused call: its status, the platform's own code (see
// API.Envelope), the start of its body, and the wait a rate limit named.
type HTTPError struct {
	Op         string // "mattermost POST /posts"
	Status     int
	Code       string
	Body       []byte
	RetryAfter time.Duration
}

func (e *HTTPError) Error() string {
	return fmt.Sprintf("%s: HTTP %d: %s", e.Op, e.Status, strings.TrimSpace(string(e.Body[:min(len(e.Body), 300)])))
}

// JudgeHTTP is the usual rule: a 429 waits what the platform asked (a
// second at least); a refusal by PermanentStatus is permanent; a 5xx is
// retried with backoff.
func JudgeHTTP(e *HTTPError) error {
	switch {
	case e.Status == http.StatusTooManyRequests:
		return &SendError{Err: e, RetryAfter: max(e.RetryAfter, time.Second)}
	case PermanentStatus(e.Status):
		return &SendError{Err: e, Permanent: true}
	}
	return e
}

// PermanentStatus tells whether an HTTP status is a refusal the same
// request would meet again: a 4xx but a timeout (408) or a rate limit (429).
func PermanentStatus(s int) bool {
	return s >= 400 && s < 500 && s != http.StatusRequestTimeout && s != http.StatusTooManyRequests
}

// IsPermanent tells whether delivery would meet the same refusal again.
func IsPermanent(err error) bool {
	var se *SendError
	return errors.As(err, &se) && se.Permanent
}

// StatusOf is the HTTP status of a refused call (0: none).
func StatusOf(err error) int {
	var he *HTTPError
	if errors.As(err, &he) {
		return he.Status
	}
	return 0
}

// maxAnswer bounds an answer read into memory.
const maxAnswer = 8 << 20

// Call sends in as JSON (nil: no body) and decodes the answer into out
// (nil, or an empty answer: nothing decoded).
func (a *API) Call(ctx context.Context, method, path string, in, out any) error {
	var body []byte
	if in != nil {
		var err error
		if body, err = json.Marshal(in); err != nil {
			return fmt.Errorf("%s %s %s: %w", a.Name, method, path, err)
		}
	}
	return a.Send(ctx, method, path, body, "application/json", out)
}

// Send sends a prepared body of contentType (a form, a file) and decodes
// the answer into out as Call does.
func (a *API) Send(ctx context.Context, method, path string, body []byte, contentType string, out any) error {
	resp, token, err := a.do(ctx, method, path, body, contentType)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswer))
	if err != nil {
		return fmt.Errorf("%s %s %s: %w", a.Name, method, path, err)
	}
	if a.Envelope != nil {
		if code, tokenRefused := a.Envelope(resp.StatusCode, raw); code != "" {
			e := &HTTPError{Op: a.Name + " " + method + " " + path, Status: resp.StatusCode, Code: code, Body: raw}
			if tokenRefused && a.Tokens != nil {
				a.Tokens.Invalidate(token)
				return &SendError{Err: e} // the next attempt takes a new token
			}
			return a.judge(e)
		}
	}
	if out == nil || len(bytes.TrimSpace(raw)) == 0 {
		return nil
	}
	if err := json.Unmarshal(raw, out); err != nil {
		return fmt.Errorf("%s %s %s: the answer is not JSON: %w", a.Name, method, path, err)
	}
	return nil
}

// Open makes the request and hands back the body of a 2xx answer (a
// download); a refusal is judged for delivery.
func (a *API) Open(ctx context.Context, method, path string, body []byte, contentType string) (io.ReadCloser, error) {
	resp, err := a.Do(ctx, method, path, body, contentType)
	if err != nil {
		return nil, err
	}
	return resp.Body, nil
}

// Download saves the answer to a GET of path into <workspace>/media under
// name, as SaveMedia does (at most limit bytes); a refusal is judged as Open's.
func (a *API) Download(ctx context.Context, path, workspace, name string, limit int64) (string, error) {
	body, err := a.Open(ctx, http.MethodGet, path, nil, "")
	if err != nil {
		return "", err
	}
	defer body.Close()
	return SaveMedia(workspace, name, body, limit)
}

// Do is Open with the whole 2xx answer, for its headers (a file's name).
func (a *API) Do(ctx context.Context, method, path string, body []byte, contentType string) (*http.Response, error) {
	resp, _, err := a.do(ctx, method, path, body, contentType)
	return resp, err
}

// do is Do, telling the token it used.
func (a *API) do(ctx context.Context, method, path string, body []byte, contentType string) (*http.Response, string, error) {
	op := a.Name + " " + method + " " + path
	for attempt := 0; ; attempt++ {
		token := a.Token
		if a.Tokens != nil {
			var err error
			if token, err = a.Tokens.Get(ctx); err != nil {
				return nil, "", fmt.Errorf("%s: %w", op, err)
			}
		}
		req, err := http.NewRequestWithContext(ctx, method, a.Base+path, bytes.NewReader(body))
		if err != nil {
			return nil, "", &SendError{Err: fmt.Errorf("%s: %w", op, err), Permanent: true}
		}
		if a.Header != nil {
			a.Header(req.Header)
		}
		if body != nil {
			req.Header.Set("Content-Type", contentType)
		}
		switch {
		case token == "":
		case a.TokenQuery != "":
			q := req.URL.Query()
			q.Set(a.TokenQuery, token)
			req.URL.RawQuery = q.Encode()
		case a.TokenHeader != "":
			req.Header.Set(a.TokenHeader, token)
		default:
			req.Header.Set("Authorization", cmp.Or(a.Scheme, "Bearer")+" "+token)
		}
		resp, err := a.HTTP.Do(req)
		if err != nil {
			return nil, "", fmt.Errorf("%s: %w", op, err)
		}
		if resp.StatusCode < 300 {
			return resp, token, nil
		}
		raw, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
		resp.Body.Close()
		e := &HTTPError{Op: op, Status: resp.StatusCode, Body: raw}
		tokenRefused := resp.StatusCode == http.StatusUnauthorized
		if a.Envelope != nil {
			var refused bool
			e.Code, refused = a.Envelope(resp.StatusCode, raw)
			tokenRefused = tokenRefused || refused
		}
		if tokenRefused && a.Tokens != nil {
			a.Tokens.Invalidate(token)
			if a.RetryRefused && attempt == 0 {
				continue
			}
			return nil, "", &SendError{Err: e} // the next attempt takes a new token
		}
		if s, err := strconv.Atoi(resp.Header.Get(cmp.Or(a.RetryAfterHeader, "Retry-After"))); err == nil && s > 0 {
			e.RetryAfter = time.Duration(s) * time.Second
		}
		return nil, "", a.judge(e)
	}
}

func (a *API) judge(e *HTTPError) error {
	if a.Judge != nil {
		return a.Judge(e)
	}
	return JudgeHTTP(e)
}

// FormFile is the file part of an upload as multipart/form-data.
type FormFile struct {
	Field, Name string // the part's form name ("file") and the file's name
	// Type is the part's Content-Type ("": by Name's extension, else
	// application/octet-stream).
	Type string
	Data []byte
}

// quoteInForm escapes a name inside a Content-Disposition's quotes.
var quoteInForm = strings.NewReplacer(`\`, `\\`, `"`, `\"`)

// Form is an upload's body: fields (in name order) and then f, and its
// Content-Type with the boundary, for Send.
func Form(fields map[string]string, f FormFile) (body []byte, contentType string, err error) {
	var buf bytes.Buffer
	w := multipart.NewWriter(&buf)
	for _, k := range slices.Sorted(maps.Keys(fields)) {
		if err := w.WriteField(k, fields[k]); err != nil {
			return nil, "", fmt.Errorf("form field %s: %w", k, err)
		}
	}
	h := textproto.MIMEHeader{}
	h.Set("Content-Disposition", `form-data; name="`+quoteInForm.Replace(f.Field)+`"; filename="`+quoteInForm.Replace(f.Name)+`"`)
	h.Set("Content-Type", cmp.Or(f.Type, mime.TypeByExtension(filepath.Ext(f.Name)), "application/octet-stream"))
	part, err := w.CreatePart(h)
	if err == nil {
		_, err = part.Write(f.Data)
	}
	if err == nil {
		err = w.Close()
	}
	if err != nil {
		return nil, "", fmt.Errorf("form file %s: %w", f.Name, err)
	}
	return buf.Bytes(), w.FormDataContentType(), nil
}
