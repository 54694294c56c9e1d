package server_test

import (
	"regexp"
	"strings"
	"testing"

	"github.com/kindkit/kindkit/internal/demo"
	"github.com/kindkit/kindkit/internal/readmetest"
	"github.com/kindkit/kindkit/internal/servertest"
)

// TestREADMEFrames sends the frames of docs/websocket.md's "Try it with any
// WebSocket client" (once the README's section), as a reader would, to the
// demo model, and checks that what comes back is what the page says.
func TestREADMEFrames(t *testing.T) {
	section := readmetest.Section(t, "../docs/websocket.md", "Try it with any WebSocket client")
	blocks := regexp.MustCompile("(?s)```json\n(.*?)\n```").FindAllStringSubmatch(section, -1)
	if len(blocks) != 3 {
		t.Fatalf("%d json frames in the section, want create, message and submit", len(blocks))
	}
	_, url := startServer(t, servertest.Config{Model: demo.Model{}})
	c := dial(t, url)

	c.Send(blocks[0][1])
	sid, _ := path(c.Expect("immediate_response")[0], "data", "sessionId").(string)
	if sid == "" {
		t.Fatal("the create frame gave no sessionId")
	}
	c.Send(strings.ReplaceAll(blocks[1][1], "SESSION", sid))
	evs := c.Expect("immediate_response", "interaction_required", "stream_chunk")
	if evs[0]["status"] != 202.0 {
		t.Errorf("the message's ack: %v", evs[0])
	}
	iid, _ := path(evs[1], "data", "data", "interactionId").(string)
	c.Send(strings.NewReplacer("SESSION", sid, "INTERACTION", iid).Replace(blocks[2][1]))
	if ack := c.Expect("immediate_response")[0]; ack["status"] != 200.0 {
		t.Fatalf("the submit's ack: %v", ack)
	}
	result, _ := path(c.Expect("stream_chunk")[0], "data", "state", "rawResponse", "toolResult", "result").(string)
	if !strings.Contains(result, `"status":"submitted"`) {
		t.Errorf("the raise tool's result: %s", result)
	}
	if text, end := c.Turn(); end["type"] != "eventual_response" || !strings.Contains(text, "Plan: Team") {
		t.Errorf("the reply: %q, %v", text, end)
	}
}
