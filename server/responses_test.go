package server_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/responses"

	"kiln/server"
)

// streamed is a Responses stream accumulated event by event.
type streamed struct {
	types    []string
	text     string // the output_text deltas
	textDone string // output_text.done's text
	args     map[string]string
	final    *responses.Response // response.completed or response.incomplete
}

// accumulate reads a NewStreaming stream to its end, checking that the
// sequence numbers count from 0.
func accumulate(t *testing.T, c openai.Client, p responses.ResponseNewParams) *streamed {
	t.Helper()
	stream := c.Responses.NewStreaming(context.Background(), p)
	s := &streamed{args: map[string]string{}}
	for stream.Next() {
		ev := stream.Current()
		if int(ev.SequenceNumber) != len(s.types) {
			t.Errorf("event %d (%s) has sequence_number %d", len(s.types), ev.Type, ev.SequenceNumber)
		}
		s.types = append(s.types, ev.Type)
		switch ev.Type {
		case "response.output_text.delta":
			s.text += ev.Delta
		case "response.output_text.done":
			s.textDone = ev.Text
		case "response.function_call_arguments.delta":
			s.args[ev.ItemID] += ev.Delta
		case "response.completed", "response.incomplete":
			r := ev.Response
			s.final = &r
		case "error":
			t.Fatalf("error event: %s", ev.RawJSON())
		}
	}
	if err := stream.Err(); err != nil {
		t.Fatal(err)
	}
	if s.final == nil {
		t.Fatalf("no response.completed or response.incomplete among %v", s.types)
	}
	return s
}

func respond(t *testing.T, c openai.Client, p responses.ResponseNewParams) *responses.Response {
	t.Helper()
	r, err := c.Responses.New(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestResponsesText: a string input, whole and streamed, through the
// official SDK: one completed message whose text the stream's deltas spell;
// usage adds up; the request's settings are echoed; events come in order.
func TestResponsesText(t *testing.T) {
	ts := start(t, server.Config{APIKey: "sekrit"}, nil)
	c := ts.client(option.WithJSONSet("ignore_eos", true)) // vLLM's extra: exact lengths
	p := responses.ResponseNewParams{Model: "tiny", Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("tell me a story")},
		MaxOutputTokens: openai.Int(10), Temperature: openai.Float(0)}
	r := respond(t, c, p)
	if !strings.HasPrefix(r.ID, "resp_") || r.Object != "response" || r.Model != "tiny" || r.CreatedAt == 0 || len(r.Output) != 1 {
		t.Fatalf("response %s", r.RawJSON())
	}
	// 10 tokens exactly: max_output_tokens is reached, so the reply is incomplete.
	if r.Status != responses.ResponseStatusIncomplete || r.IncompleteDetails.Reason != "max_output_tokens" {
		t.Errorf("status %q, incomplete_details %+v", r.Status, r.IncompleteDetails)
	}
	m := r.Output[0].AsMessage()
	if r.Output[0].Type != "message" || !strings.HasPrefix(m.ID, "msg_") || m.Role != "assistant" || len(m.Content) != 1 || m.Content[0].Type != "output_text" {
		t.Fatalf("output %s", r.Output[0].RawJSON())
	}
	if r.OutputText() != m.Content[0].Text || r.OutputText() == "" {
		t.Errorf("OutputText %q, content %q", r.OutputText(), m.Content[0].Text)
	}
	u := r.Usage
	if u.OutputTokens != 10 || u.InputTokens < 2 || u.TotalTokens != u.InputTokens+u.OutputTokens || u.OutputTokensDetails.ReasoningTokens != 0 {
		t.Errorf("usage %+v", u)
	}
	if r.MaxOutputTokens != 10 || r.Temperature != 0 || r.TopP != 1 || !r.ParallelToolCalls || r.Text.Format.Type != "text" ||
		r.ToolChoice.OfToolChoiceMode != "auto" || len(r.Tools) != 0 || !strings.Contains(r.RawJSON(), `"store":false`) {
		t.Errorf("echoed settings %s", r.RawJSON())
	}

	s := accumulate(t, c, p)
	want := []string{"response.created", "response.in_progress", "response.output_item.added", "response.content_part.added"}
	if len(s.types) < 8 || strings.Join(s.types[:4], " ") != strings.Join(want, " ") {
		t.Fatalf("events %v", s.types)
	}
	tail := []string{"response.output_text.done", "response.content_part.done", "response.output_item.done", "response.incomplete"}
	if got := s.types[len(s.types)-4:]; strings.Join(got, " ") != strings.Join(tail, " ") {
		t.Errorf("last events %v, want %v", got, tail)
	}
	if s.text != r.OutputText() || s.textDone != s.text || s.final.OutputText() != s.text {
		t.Errorf("streamed %q (done %q, final %q), whole %q", s.text, s.textDone, s.final.OutputText(), r.OutputText())
	}
	if s.final.Usage.OutputTokens != 10 || s.final.Usage.InputTokens != u.InputTokens || s.final.Status != responses.ResponseStatusIncomplete {
		t.Errorf("final %s", s.final.RawJSON())
	}

	// Room to spare: the reply ends by itself and is completed.
	short := responses.ResponseNewParams{Model: "tiny", Input: p.Input, MaxOutputTokens: openai.Int(400), Temperature: openai.Float(0)}
	stop := "" // vLLM's extra: a character of the greedy reply ends it there
	for _, ch := range []rune(r.OutputText())[1:] {
		if ch != '\uFFFD' && stop == "" {
			stop = string(ch)
		}
	}
	short.SetExtraFields(map[string]any{"stop": []string{stop}})
	if r := respond(t, c, short); r.Status != responses.ResponseStatusCompleted || r.IncompleteDetails.Reason != "" {
		t.Errorf("short reply: status %q %s", r.Status, r.RawJSON())
	}
}

// TestResponsesMessages: instructions and a message list with every role
// and both content shapes render like the chat completion of the same
// conversation (the same greedy text and input tokens).
func TestResponsesMessages(t *testing.T) {
	ts := start(t, server.Config{APIKey: "sekrit"}, nil)
	c := ts.client(option.WithJSONSet("ignore_eos", true))
	input := responses.ResponseInputParam{
		responses.ResponseInputItemParamOfMessage("be kind", responses.EasyInputMessageRoleDeveloper),
		responses.ResponseInputItemParamOfMessage(responses.ResponseInputMessageContentListParam{
			{OfInputText: &responses.ResponseInputTextParam{Text: "hello"}}, {OfInputText: &responses.ResponseInputTextParam{Text: "there"}}},
			responses.EasyInputMessageRoleUser),
		responses.ResponseInputItemParamOfMessage("hi!", responses.EasyInputMessageRoleAssistant),
		responses.ResponseInputItemParamOfMessage("a story, please", responses.EasyInputMessageRoleUser),
	}
	r := respond(t, c, responses.ResponseNewParams{Model: "tiny", Instructions: openai.String("be brief"), MaxOutputTokens: openai.Int(8),
		Temperature: openai.Float(0), Input: responses.ResponseNewParamsInputUnion{OfInputItemList: input},
		Store: openai.Bool(true), Metadata: map[string]string{"run": "7"}})
	if r.Instructions.OfString != "be brief" || r.Metadata["run"] != "7" {
		t.Errorf("instructions echoed as %s, metadata %v", r.Instructions.RawJSON(), r.Metadata)
	}
	if !strings.Contains(r.RawJSON(), `"store":false`) { // store: true is not honoured: nothing is kept
		t.Errorf("store echoed as %s", r.RawJSON())
	}
	ch, err := c.Chat.Completions.New(context.Background(), openai.ChatCompletionNewParams{Model: "tiny", MaxTokens: openai.Int(8), Temperature: openai.Float(0),
		Messages: []openai.ChatCompletionMessageParamUnion{openai.SystemMessage("be brief"), openai.DeveloperMessage("be kind"),
			openai.UserMessage("hello\nthere"), openai.AssistantMessage("hi!"), openai.UserMessage("a story, please")}})
	if err != nil {
		t.Fatal(err)
	}
	if r.OutputText() != ch.Choices[0].Message.Content || r.Usage.InputTokens != ch.Usage.PromptTokens {
		t.Errorf("responses %q (%d input tokens), chat %q (%d)", r.OutputText(), r.Usage.InputTokens, ch.Choices[0].Message.Content, ch.Usage.PromptTokens)
	}
}

// TestResponsesTools: tool_choice required gives function_call items whose
// arguments parse (whole and streamed); their output goes back as a
// function_call_output item and the model answers in text.
func TestResponsesTools(t *testing.T) {
	ts := start(t, server.Config{APIKey: "sekrit"}, nil)
	c := ts.client()
	clock := responses.ToolUnionParam{OfFunction: &responses.FunctionToolParam{Name: "get_time", Strict: openai.Bool(true),
		Parameters: map[string]any{"type": "object", "properties": map[string]any{"tz": map[string]any{"enum": []string{"UTC", "CET"}}},
			"required": []string{"tz"}, "additionalProperties": false}}}
	ask := responses.ResponseInputItemParamOfMessage("what time is it?", responses.EasyInputMessageRoleUser)
	p := responses.ResponseNewParams{Model: "tiny", MaxOutputTokens: openai.Int(120), Temperature: openai.Float(0.8), ParallelToolCalls: openai.Bool(false),
		Input: responses.ResponseNewParamsInputUnion{OfInputItemList: responses.ResponseInputParam{ask}}, Tools: []responses.ToolUnionParam{clock},
		ToolChoice: responses.ResponseNewParamsToolChoiceUnion{OfToolChoiceMode: openai.Opt(responses.ToolChoiceOptionsRequired)}}
	var call responses.ResponseFunctionToolCall
	for seed := range 4 {
		p.SetExtraFields(map[string]any{"seed": seed})
		r := respond(t, c, p)
		if r.Status != responses.ResponseStatusCompleted {
			continue // cut off by max_output_tokens: try another seed
		}
		if len(r.Output) != 1 || r.Output[0].Type != "function_call" {
			t.Fatalf("output %s", r.RawJSON())
		}
		call = r.Output[0].AsFunctionCall()
		break
	}
	if call.Name == "" {
		t.Fatal("no seed made a complete call")
	}
	var args struct{ Tz string }
	if err := json.Unmarshal([]byte(call.Arguments), &args); err != nil || (args.Tz != "UTC" && args.Tz != "CET") || call.Name != "get_time" ||
		!strings.HasPrefix(call.CallID, "call_") || !strings.HasPrefix(call.ID, "fc_") || call.Status != "completed" {
		t.Errorf("call %+v (%v)", call, err)
	}

	s := accumulate(t, c, p)
	var fc responses.ResponseFunctionToolCall
	for _, it := range s.final.Output {
		if it.Type == "function_call" {
			fc = it.AsFunctionCall()
		}
	}
	if s.final.Status == responses.ResponseStatusCompleted && (fc.Name != "get_time" || s.args[fc.ID] != fc.Arguments || !json.Valid([]byte(fc.Arguments))) {
		t.Errorf("streamed call %+v, arguments deltas %q; events %v", fc, s.args, s.types)
	}

	// tool_choice auto: the tools are shown, the random model writes text,
	// which streams (held while it may be a call) as it comes whole.
	auto := responses.ResponseNewParams{Model: "tiny", MaxOutputTokens: openai.Int(8), Temperature: openai.Float(0), Input: p.Input, Tools: p.Tools}
	auto.SetExtraFields(map[string]any{"ignore_eos": true})
	whole, s2 := respond(t, c, auto), accumulate(t, c, auto)
	if whole.OutputText() == "" || s2.text != whole.OutputText() || s2.final.OutputText() != whole.OutputText() || len(s2.final.Output) != 1 {
		t.Errorf("auto: streamed %q (final %s), whole %q", s2.text, s2.final.RawJSON(), whole.OutputText())
	}

	// The round trip: the call and its output go back; no tool choice now.
	out := responses.ResponseInputItemParamOfFunctionCallOutput(`{"time":"12:00"}`)
	out.OfFunctionCallOutput.CallID = openai.String(call.CallID)
	back := responses.ResponseNewParams{Model: "tiny", MaxOutputTokens: openai.Int(6), Temperature: openai.Float(0), Tools: p.Tools,
		Input: responses.ResponseNewParamsInputUnion{OfInputItemList: responses.ResponseInputParam{ask,
			responses.ResponseInputItemParamOfFunctionCall(call.Arguments, call.CallID, call.Name), out}},
		ToolChoice: responses.ResponseNewParamsToolChoiceUnion{OfToolChoiceMode: openai.Opt(responses.ToolChoiceOptionsNone)}}
	r := respond(t, c, back)
	if len(r.Output) != 1 || r.Output[0].Type != "message" || r.Usage.InputTokens <= 20 {
		t.Errorf("answer to the call's output %s", r.RawJSON())
	}
	if len(r.Tools) != 1 || r.Tools[0].Type != "function" || r.Tools[0].Name != "get_time" || r.ToolChoice.OfToolChoiceMode != "none" {
		t.Errorf("echoed tools %s, tool_choice %s", r.JSON.Tools.Raw(), r.JSON.ToolChoice.Raw())
	}
	if r.Temperature != 0 || r.ParallelToolCalls != true {
		t.Errorf("echoed temperature %v, parallel_tool_calls %v", r.Temperature, r.ParallelToolCalls)
	}
	first := respond(t, c, p)
	if first.Temperature != 0.8 || first.ParallelToolCalls || first.ToolChoice.OfToolChoiceMode != "required" {
		t.Errorf("echoed temperature %v (want 0.8 as sent), parallel_tool_calls %v, tool_choice %s", first.Temperature, first.ParallelToolCalls, first.JSON.ToolChoice.Raw())
	}
}

// TestResponsesJSONSchema: text.format json_schema constrains the reply
// to valid JSON of the schema, whole and streamed.
func TestResponsesJSONSchema(t *testing.T) {
	ts := start(t, server.Config{APIKey: "sekrit"}, nil)
	c := ts.client()
	schema := map[string]any{"type": "object", "properties": map[string]any{"mood": map[string]any{"enum": []string{"happy", "sad"}},
		"n": map[string]any{"type": "integer", "minimum": 0, "maximum": 9}}, "required": []string{"mood", "n"}, "additionalProperties": false}
	p := responses.ResponseNewParams{Model: "tiny", MaxOutputTokens: openai.Int(60), Temperature: openai.Float(0),
		Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("how are you?")},
		Text: responses.ResponseTextConfigParam{Format: responses.ResponseFormatTextConfigUnionParam{OfJSONSchema: &responses.ResponseFormatTextJSONSchemaConfigParam{
			Name: "mood", Schema: schema, Strict: openai.Bool(true)}}}}
	check := func(how string, r *responses.Response) {
		t.Helper()
		var v struct {
			Mood string
			N    *int
		}
		if r.Status != responses.ResponseStatusCompleted || json.Unmarshal([]byte(r.OutputText()), &v) != nil || (v.Mood != "happy" && v.Mood != "sad") || v.N == nil {
			t.Errorf("%s: status %q, text %q", how, r.Status, r.OutputText())
		}
		if r.Text.Format.Type != "json_schema" || r.Text.Format.Name != "mood" {
			t.Errorf("%s: text echoed as %s", how, r.Text.RawJSON())
		}
	}
	check("whole", respond(t, c, p))
	check("streamed", accumulate(t, c, p).final)
}

// TestResponsesErrors: what needs a stored response, and malformed input,
// are 400s in OpenAI's envelope naming the field.
func TestResponsesErrors(t *testing.T) {
	ts := start(t, server.Config{APIKey: "sekrit"}, nil)
	c := ts.client()
	_, err := c.Responses.New(context.Background(), responses.ResponseNewParams{Model: "tiny", PreviousResponseID: openai.String("resp_123"),
		Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("and then?")}})
	var apiErr *openai.Error
	if !errorsAs(err, &apiErr) || apiErr.StatusCode != 400 || apiErr.Param != "previous_response_id" || apiErr.Message == "" {
		t.Errorf("previous_response_id: %v", err)
	}
	for _, tc := range []struct{ body, param string }{
		{`{"model":"tiny"}`, "input"},
		{`{"model":"tiny","input":[]}`, "input"},
		{`{"model":"tiny","input":[{"role":"robot","content":"x"}]}`, "input[0].role"},
		{`{"model":"tiny","input":[{"role":"user","content":[{"type":"input_image","image_url":"x"}]}]}`, "input[0].content"},
		{`{"model":"tiny","input":[{"type":"item_reference","id":"msg_1"}]}`, "input[0]"},
		{`{"model":"tiny","input":"x","tools":[{"type":"web_search"}]}`, "tools[0].type"},
		{`{"model":"tiny","input":"x","tool_choice":"required"}`, "tool_choice"},
		{`{"model":"tiny","input":"x","text":{"format":{"type":"xml"}}}`, "text.format.type"},
		{`{"model":"tiny","input":"x","text":{"format":{"type":"json_schema","name":"x","schema":{"type":"array","uniqueItems":true}}}}`, "text.format"},
		{`{"model":"tiny","input":"x","max_output_tokens":0}`, "max_output_tokens"},
		{`{"model":"tiny","input":"x","background":true}`, "background"},
		{`{"model":"tiny","input":"x","tools":[{"type":"function","name":"f"},{"type":"function","name":"f"}]}`, "tools[1].name"},
		{`{"model":"tiny","input":"x","tools":[{"type":"function","name":"f"}],"tool_choice":{"type":"function","name":"g"}}`, "tool_choice"},
		{`{"model":"tiny","input":[{"type":"function_call_output","output":"x"}]}`, "input[0].call_id"},
		{`{"model":"tiny","input":"x","conversation":"conv_1"}`, "conversation"},
	} {
		status, _, body := ts.post(t, "/v1/responses", tc.body, "Authorization", "Bearer sekrit")
		if status != 400 {
			t.Errorf("%s: status %d %s", tc.body, status, body)
			continue
		}
		_, typ, param, _ := errorOf(t, body)
		if typ != "invalid_request_error" || param == nil || *param != tc.param {
			t.Errorf("%s: %s, want param %q", tc.body, body, tc.param)
		}
	}
}

// TestResponsesShutdownCut: a stream cut by the end of Shutdown's drain
// ends with an "error" event naming the shutdown, numbered in sequence,
// rather than stopping mid-message.
func TestResponsesShutdownCut(t *testing.T) {
	ts := start(t, server.Config{}, nil)
	resp, err := http.Post(ts.URL+"/v1/responses", "application/json",
		strings.NewReader(`{"model":"tiny","input":"go on","max_output_tokens":3900,"ignore_eos":true,"temperature":0,"stream":true}`))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	r := bufio.NewReader(resp.Body)
	if line, err := r.ReadString('\n'); resp.StatusCode != 200 || line != "event: response.created\n" {
		t.Fatalf("status %d, first line %q (%v)", resp.StatusCode, line, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	ts.Shutdown(ctx)
	rest, _ := io.ReadAll(r)
	events := strings.Split(strings.TrimSpace(string(rest)), "\n\n")
	last := events[len(events)-1]
	if !strings.HasPrefix(last, "event: error\ndata: {\"type\":\"error\"") || !strings.Contains(last, `"code":"shutting_down"`) {
		t.Errorf("the cut stream ends %q; want an error event with code shutting_down", last)
	}
	if strings.Contains(string(rest), "[DONE]") || strings.Contains(string(rest), "response.completed") {
		t.Errorf("the cut stream says it completed")
	}
}

// TestResponsesDisconnect: a client that leaves a stream has its
// generation aborted; asking for a stored response is a 404 saying none
// is stored.
func TestResponsesDisconnect(t *testing.T) {
	ts := start(t, server.Config{APIKey: "sekrit"}, nil)
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, "POST", ts.URL+"/v1/responses",
		strings.NewReader(`{"model":"tiny","input":"go on","max_output_tokens":3900,"ignore_eos":true,"stream":true}`))
	req.Header.Set("Authorization", "Bearer sekrit")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if line, err := bufio.NewReader(resp.Body).ReadString('\n'); resp.StatusCode != 200 || err != nil {
		t.Fatalf("status %d, first line %q (%v)", resp.StatusCode, line, err)
	}
	cancel()
	resp.Body.Close()
	ts.idle(t)
	ts.waitAborted(t, 1)

	c := ts.client()
	_, err = c.Responses.Get(context.Background(), "resp_123", responses.ResponseGetParams{})
	var apiErr *openai.Error
	if !errorsAs(err, &apiErr) || apiErr.StatusCode != 404 || apiErr.Code != "response_not_found" || !strings.Contains(apiErr.Message, "stores no responses") {
		t.Errorf("GET a stored response: %v", err)
	}
}
