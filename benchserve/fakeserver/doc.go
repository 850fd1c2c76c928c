// Package fakeserver is an OpenAI-compatible completions server for tests
// of benchmark clients: it streams server-sent events with controlled
// delays (time to first chunk, gap between chunks), counts requests in
// flight, checks the fields of every request body, and injects faults
// (HTTP errors, malformed chunks, cut connections, error events) on chosen
// requests. It generates no text: each chunk is the word "tok".
package fakeserver
