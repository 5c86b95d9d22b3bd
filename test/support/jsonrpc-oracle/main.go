// Command jsonrpc-oracle reads JSON-RPC request bodies the way the nodes behind the gateway read
// them, with Go's encoding/json, for the gateway's differential fuzz (test/gatewayLua.test.ts).
//
// Input, one JSON object per line: {"body": "<hex>", "norm": ["<hex>", ...]}. Output, one line
// each: how geth and Juno read the body, and each "norm" text as Go reads a JSON value (so the
// fuzz can compare the spans the gateway's Lua took for params and id with the node's values).
// Strings in the output are hex, so bytes that are not UTF-8 survive the round trip.
//
// geth (rpc/json.go, rpc/http.go): one JSON value is decoded from the body (UseNumber) into a
// json.RawMessage, whatever follows it is never read; a body whose first non-blank byte is '['
// is a batch read item by item with a Decoder; each message is json.Unmarshal'ed into
// {jsonrpc, id RawMessage, method, params RawMessage, error, result} with errors ignored (a field
// of the wrong type is left as it was); a call needs jsonrpc "2.0", a method, and an id that is
// not an object or an array; with no id it is a notification (executed, no answer).
//
// Juno (jsonrpc/server.go): the same first-value read (UseNumber) into {jsonrpc, method, params
// any, id any}, where any decoding error refuses the request (a batch is []json.RawMessage, each
// decoded alone); isSane wants jsonrpc "2.0", a method, params an array or object, and an id
// that is a string or a number without "."; no id (or null) is a notification.
//
// Both match object keys to fields as encoding/json does: an exact name, else one equal under
// Unicode case folding (so "METHOD" and "paramſ" count), the last occurrence winning.
package main

import (
	"bufio"
	"bytes"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
)

type input struct {
	Body string   `json:"body"`
	Norm []string `json:"norm"`
}

// call is one message of a body as a node read it.
type call struct {
	// Call: the node executes it and answers; Notification: executes it without an answer.
	// Method, Params and ID as `normalized` writes them (hex), "" when absent.
	Call         bool   `json:"call"`
	Notification bool   `json:"notification"`
	Method       string `json:"method"`
	Params       string `json:"params"`
	ID           string `json:"id"`
}

type reading struct {
	// Parsed: the node read JSON from the body at all (otherwise it answers a parse error).
	Parsed bool   `json:"parsed"`
	Batch  bool   `json:"batch"`
	Calls  []call `json:"calls"`
}

type output struct {
	Geth reading   `json:"geth"`
	Juno reading   `json:"juno"`
	Norm []*string `json:"norm"`
}

func main() {
	flag.Usage = func() {
		fmt.Fprintln(flag.CommandLine.Output(), "usage: jsonrpc-oracle < bodies.jsonl > readings.jsonl")
		fmt.Fprintln(flag.CommandLine.Output(), "Reads JSON-RPC bodies as geth and Juno do (see the package comment).")
	}
	flag.Parse()
	if flag.NArg() > 0 {
		fmt.Fprintf(os.Stderr, "jsonrpc-oracle: takes no arguments (got %q)\n", flag.Arg(0))
		os.Exit(2)
	}
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 64<<20)
	out := bufio.NewWriter(os.Stdout)
	defer out.Flush()
	enc := json.NewEncoder(out)
	for line := 1; in.Scan(); line++ {
		var req input
		if err := json.Unmarshal(in.Bytes(), &req); err != nil {
			fail(line, err)
		}
		body, err := hex.DecodeString(req.Body)
		if err != nil {
			fail(line, err)
		}
		o := output{Geth: geth(body), Juno: juno(body)}
		for _, h := range req.Norm {
			text, err := hex.DecodeString(h)
			if err != nil {
				fail(line, err)
			}
			o.Norm = append(o.Norm, normalized(text))
		}
		if err := enc.Encode(o); err != nil {
			fail(line, err)
		}
	}
	if err := in.Err(); err != nil {
		fail(0, err)
	}
}

func fail(line int, err error) {
	fmt.Fprintf(os.Stderr, "jsonrpc-oracle: input line %d: %v\n", line, err)
	os.Exit(1)
}

func hexOf(s string) string { return hex.EncodeToString([]byte(s)) }

// normalized is a JSON text as Go reads it (numbers kept as written), written back with sorted
// object keys: two texts a node reads alike give the same result. nil: not one JSON value.
func normalized(text []byte) *string {
	if len(text) == 0 {
		empty := ""
		return &empty
	}
	dec := json.NewDecoder(bytes.NewReader(text))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil
	}
	var buf bytes.Buffer
	w := json.NewEncoder(&buf)
	w.SetEscapeHTML(false)
	if err := w.Encode(v); err != nil {
		return nil
	}
	s := hexOf(strings.TrimSuffix(buf.String(), "\n"))
	return &s
}

// quoted is a method name as a JSON string text, written as normalized writes strings.
func quoted(s string) string {
	b, err := json.Marshal(s)
	if err != nil {
		return ""
	}
	return normalizedRaw(b)
}

func normalizedRaw(raw json.RawMessage) string {
	if raw == nil {
		return ""
	}
	if n := normalized(raw); n != nil {
		return *n
	}
	return ""
}

// isBatch: the first non-blank byte (JSON blanks only) is '['.
func isBatch(body []byte) bool {
	for _, c := range body {
		if c == ' ' || c == '\t' || c == '\n' || c == '\r' {
			continue
		}
		return c == '['
	}
	return false
}

type gethMessage struct {
	Version string          `json:"jsonrpc,omitempty"`
	ID      json.RawMessage `json:"id,omitempty"`
	Method  string          `json:"method,omitempty"`
	Params  json.RawMessage `json:"params,omitempty"`
	Error   json.RawMessage `json:"error,omitempty"`
	Result  json.RawMessage `json:"result,omitempty"`
}

func geth(body []byte) reading {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var raw json.RawMessage
	if err := dec.Decode(&raw); err != nil {
		return reading{}
	}
	r := reading{Parsed: true, Batch: isBatch(raw)}
	var msgs []*gethMessage
	if !r.Batch {
		msgs = []*gethMessage{{}}
		_ = json.Unmarshal(raw, msgs[0]) // errors ignored, as geth does
	} else {
		items := json.NewDecoder(bytes.NewReader(raw))
		_, _ = items.Token()
		for items.More() {
			msgs = append(msgs, new(gethMessage))
			_ = items.Decode(msgs[len(msgs)-1])
		}
	}
	for _, m := range msgs {
		valid := m.Version == "2.0" && m.Method != ""
		hasID := len(m.ID) > 0 && m.ID[0] != '{' && m.ID[0] != '['
		r.Calls = append(r.Calls, call{
			Call:         valid && hasID,
			Notification: valid && m.ID == nil,
			Method:       quoted(m.Method),
			Params:       normalizedRaw(m.Params),
			ID:           normalizedRaw(m.ID),
		})
	}
	return r
}

type junoRequest struct {
	Version string `json:"jsonrpc"`
	Method  string `json:"method"`
	Params  any    `json:"params,omitempty"`
	ID      any    `json:"id,omitempty"`
}

func junoCall(dec *json.Decoder) call {
	var req junoRequest
	if err := dec.Decode(&req); err != nil {
		return call{}
	}
	sane := req.Version == "2.0" && req.Method != ""
	switch req.Params.(type) {
	case nil, []any, map[string]any:
	default:
		sane = false
	}
	switch id := req.ID.(type) {
	case nil, string:
	case json.Number:
		sane = sane && !strings.Contains(id.String(), ".")
	default:
		sane = false
	}
	c := call{Method: quoted(req.Method), Params: normalizedAny(req.Params), ID: normalizedAny(req.ID)}
	c.Call = sane && req.ID != nil
	c.Notification = sane && req.ID == nil
	return c
}

func normalizedAny(v any) string {
	if v == nil {
		return ""
	}
	b, err := json.Marshal(v)
	if err != nil {
		return ""
	}
	return normalizedRaw(b)
}

func juno(body []byte) reading {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	if !isBatch(body) {
		// A body that does not decode (syntax or types) gets an error: nothing is executed.
		return reading{Parsed: true, Calls: []call{junoCall(dec)}}
	}
	var items []json.RawMessage
	if err := dec.Decode(&items); err != nil {
		return reading{}
	}
	r := reading{Parsed: true, Batch: true}
	for _, raw := range items {
		item := json.NewDecoder(bytes.NewReader(raw))
		item.UseNumber()
		r.Calls = append(r.Calls, junoCall(item))
	}
	return r
}
