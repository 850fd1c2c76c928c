package benchserve

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"time"
)

// Endpoint paths the client knows how to speak to.
const (
	CompletionsPath = "/v1/completions"
	ChatPath        = "/v1/chat/completions"
)

// Client sends streamed completion requests to one OpenAI-compatible
// server and times them. It is safe for concurrent use.
type Client struct {
	// BaseURL is the server's root, "http://127.0.0.1:8080" (no /v1).
	BaseURL string
	// Path is CompletionsPath or ChatPath; a path ending in
	// "/chat/completions" is spoken to as the chat API.
	Path string
	// Model is the "model" field of every request.
	Model string
	// APIKey, when set, is sent as "Authorization: Bearer APIKey".
	APIKey string
	// Temperature is the sampling temperature of every request (0: greedy).
	Temperature float64
	// Timeout bounds one request, from send to the end of its stream
	// (0: no bound beyond the caller's context).
	Timeout time.Duration
	// Extra holds fields merged into every request body after kiln's own
	// (vLLM bench's --extra-body): structured output, penalties, ...
	Extra map[string]any
	// HTTP is the client that sends the requests (nil: NewHTTPClient(0)).
	HTTP *http.Client
}

// NewHTTPClient returns an http.Client for benchmark traffic: keep-alive
// connections for up to conns requests in flight at once (0: 256), and no
// compression, which would hold chunks back in the server's compressor.
func NewHTTPClient(conns int) *http.Client {
	if conns <= 0 {
		conns = 256
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConns = conns
	tr.MaxIdleConnsPerHost = conns
	tr.DisableCompression = true
	return &http.Client{Transport: tr}
}

// Chat reports whether the client speaks the chat completions API.
func (c *Client) Chat() bool { return strings.HasSuffix(c.Path, "/chat/completions") }

// URL is the endpoint's full address.
func (c *Client) URL() string { return strings.TrimRight(c.BaseURL, "/") + c.Path }

func (c *Client) httpClient() *http.Client {
	if c.HTTP != nil {
		return c.HTTP
	}
	return defaultHTTP
}

var defaultHTTP = NewHTTPClient(0)

// body builds the request's JSON: streamed with usage in the last chunk,
// exactly OutputLen tokens (ignore_eos), Temperature.
func (c *Client) body(r Request) ([]byte, error) {
	m := map[string]any{
		"model":          c.Model,
		"stream":         true,
		"stream_options": map[string]any{"include_usage": true},
		"max_tokens":     r.OutputLen,
		"ignore_eos":     true,
		"temperature":    c.Temperature,
	}
	if c.Chat() {
		if r.PromptIDs != nil {
			return nil, errors.New("a token-id prompt needs the completions endpoint, not chat")
		}
		m["messages"] = []map[string]string{{"role": "user", "content": r.Text}}
		// The chat API's newer name for max_tokens; servers that know
		// only one of the two ignore the other.
		m["max_completion_tokens"] = r.OutputLen
	} else if r.PromptIDs != nil {
		m["prompt"] = r.PromptIDs
	} else {
		m["prompt"] = r.Text
	}
	for k, v := range c.Extra {
		m[k] = v
	}
	return json.Marshal(m)
}

// Do sends one request and times its stream. It never returns an error:
// a failure (connection refused, non-200 status, an error event, a
// malformed chunk, a cut stream, a timeout) is Output.Error.
func (c *Client) Do(ctx context.Context, r Request) Output {
	out := Output{PromptLen: r.PromptLen}
	body, err := c.body(r)
	if err != nil {
		out.Error = err.Error()
		return out
	}
	if c.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, c.Timeout)
		defer cancel()
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.URL(), bytes.NewReader(body))
	if err != nil {
		out.Error = err.Error()
		return out
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "text/event-stream")
	if c.APIKey != "" {
		req.Header.Set("Authorization", "Bearer "+c.APIKey)
	}
	// llama-server closes the connection after each streamed response
	// without saying so (no "Connection: close"), and now and then the
	// transport sends the next request on it before it sees the close:
	// the request fails with EOF though the server never read it. An
	// Idempotency-Key makes the POST replayable, so net/http retries it on
	// a new connection when a reused one dies before the first response
	// byte (and only then). The retry's connect time counts in TTFT, as
	// the client did wait for it.
	req.Header.Set("Idempotency-Key", idempotencyKey())
	start := time.Now()
	out.Start = start
	resp, err := c.httpClient().Do(req)
	if err != nil {
		out.Error = requestError(err)
		return out
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
		out.Error = fmt.Sprintf("HTTP %d: %s", resp.StatusCode, bodyError(b))
		return out
	}
	if ct := resp.Header.Get("Content-Type"); strings.HasPrefix(ct, "application/json") {
		// A server that ignores "stream": true answers with one JSON
		// body, which has no chunks to time.
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
		out.Error = fmt.Sprintf("not streamed: the server answered %s, not text/event-stream: %s", ct, clip(string(b), 120))
		return out
	}
	err = out.readStream(resp.Body, start)
	out.Latency = time.Since(start)
	if err != nil {
		out.Error = requestError(err)
		return out
	}
	out.Success = true
	return out
}

// readStream consumes the event stream, timing content chunks against
// start, until "[DONE]".
func (out *Output) readStream(body io.Reader, start time.Time) error {
	er := NewEventReader(body)
	var last time.Time
	for {
		ev, err := er.Next()
		if err == io.EOF {
			return errors.New("stream ended before data: [DONE]")
		}
		if err != nil {
			return err
		}
		now := time.Now()
		if ev.Name == "error" {
			return fmt.Errorf("error event: %s", bodyError([]byte(ev.Data)))
		}
		if strings.TrimSpace(ev.Data) == "[DONE]" {
			if out.Chunks == 0 {
				return errors.New("stream had no content chunk (no first token to time)")
			}
			if !out.UsageReported {
				out.OutputTokens = out.Chunks
			}
			return nil
		}
		c, err := parseChunk(ev.Data)
		if err != nil {
			return err
		}
		if len(c.Error) > 0 && string(c.Error) != "null" {
			return fmt.Errorf("error in stream: %s", errorMessage(c.Error))
		}
		if c.Usage != nil {
			if c.Usage.CompletionTokens < 0 || c.Usage.PromptTokens < 0 {
				return fmt.Errorf("malformed usage %s: negative count", clip(ev.Data, 120))
			}
			out.UsageReported = true
			out.OutputTokens = c.Usage.CompletionTokens
			if c.Usage.PromptTokens > 0 {
				out.PromptLen = c.Usage.PromptTokens
			}
		}
		if !c.content() {
			continue
		}
		if out.Chunks == 0 {
			out.TTFT = now.Sub(start)
		} else {
			out.ITL = append(out.ITL, now.Sub(last))
		}
		last = now
		out.Chunks++
	}
}

// keyPrefix and keySeq make Idempotency-Keys unique across runs and
// processes.
var (
	keyPrefix = rand.Uint64()
	keySeq    atomic.Uint64
)

func idempotencyKey() string {
	return fmt.Sprintf("kiln-bench-%016x-%d", keyPrefix, keySeq.Add(1))
}

// requestError renders a transport error without Go's "Post \"URL\":"
// prefix, which repeats the same address on every failed request.
func requestError(err error) string {
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return "timed out: " + err.Error()
	}
	return err.Error()
}

// FirstModel asks the server's /v1/models for the id of its first model,
// for runs that do not name one (vLLM does the same).
func (c *Client) FirstModel(ctx context.Context) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimRight(c.BaseURL, "/")+"/v1/models", nil)
	if err != nil {
		return "", err
	}
	if c.APIKey != "" {
		req.Header.Set("Authorization", "Bearer "+c.APIKey)
	}
	resp, err := c.httpClient().Do(req)
	if err != nil {
		return "", fmt.Errorf("list models: %s", requestError(err))
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 4<<20))
	if err != nil {
		return "", fmt.Errorf("list models: %v", err)
	}
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("list models: HTTP %d: %s", resp.StatusCode, bodyError(b))
	}
	var list struct {
		Data []struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	if err := json.Unmarshal(b, &list); err != nil {
		return "", fmt.Errorf("list models: malformed response %s: %v", clip(string(b), 120), err)
	}
	if len(list.Data) == 0 || list.Data[0].ID == "" {
		return "", errors.New("list models: the server lists no model; pass --model")
	}
	return list.Data[0].ID, nil
}
