package agui

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestParseInput(t *testing.T) {
	for name, c := range map[string]struct {
		in      string
		wantErr string
	}{
		"minimal":            {in: `{"threadId":"t","runId":"r","messages":[]}`},
		"parts":              {in: `{"threadId":"t","runId":"r","messages":[{"id":"m","role":"user","content":[{"type":"text","text":"hi"},{"type":"image","source":{"type":"url","value":"x"}}]}]}`},
		"not an object":      {in: `[]`, wantErr: "not a JSON object"},
		"null":               {in: `null`, wantErr: "not a JSON object"},
		"no thread":          {in: `{"runId":"r"}`, wantErr: "threadId is required"},
		"no run":             {in: `{"threadId":"t"}`, wantErr: "runId is required"},
		"long thread":        {in: `{"threadId":"` + strings.Repeat("t", 300) + `","runId":"r"}`, wantErr: "threadId is longer"},
		"bad role":           {in: `{"threadId":"t","runId":"r","messages":[{"id":"m","role":"robot","content":"x"}]}`, wantErr: `messages[0]: role "robot"`},
		"user without text":  {in: `{"threadId":"t","runId":"r","messages":[{"id":"m","role":"user","content":3}]}`, wantErr: "messages[0]: content"},
		"message without id": {in: `{"threadId":"t","runId":"r","messages":[{"role":"user","content":"x"}]}`, wantErr: "messages[0]: id is required"},
		"bad status":         {in: `{"threadId":"t","runId":"r","resume":[{"interruptId":"i","status":"done"}]}`, wantErr: `resume[0]: status "done"`},
		"twice":              {in: `{"threadId":"t","runId":"r","resume":[{"interruptId":"i","status":"cancelled"},{"interruptId":"i","status":"cancelled"}]}`, wantErr: "answered twice"},
		"trailing":           {in: `{"threadId":"t","runId":"r"} x`, wantErr: "invalid RunAgentInput"},
	} {
		t.Run(name, func(t *testing.T) {
			in, err := ParseInput([]byte(c.in))
			switch {
			case c.wantErr == "" && err != nil:
				t.Fatalf("error %v", err)
			case c.wantErr != "" && (err == nil || !strings.Contains(err.Error(), c.wantErr)):
				t.Fatalf("error %v, want one saying %q", err, c.wantErr)
			case name == "parts" && in.Messages[0].Text != "hi":
				t.Fatalf("text %q, want the text part only", in.Messages[0].Text)
			}
		})
	}
}

// FuzzParseInput: whatever a client sends, ParseInput returns an input
// that keeps its promises, or an error; it never panics.
func FuzzParseInput(f *testing.F) {
	f.Add([]byte(`{"threadId":"t","runId":"r","messages":[{"id":"m","role":"user","content":"hi"}]}`))
	f.Add([]byte(`{"threadId":"t","runId":"r","messages":[{"id":"m","role":"user","content":[{"type":"text","text":"a"}]}],"resume":[{"interruptId":"i","status":"resolved","payload":{"answers":[]}}]}`))
	f.Add([]byte(`{"threadId":"t","runId":"r","resume":[{"interruptId":"i","status":"cancelled","payload":1}],"tools":[],"context":[],"state":{},"forwardedProps":{}}`))
	f.Add([]byte(`{"threadId":"","runId":null,"messages":{}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		in, err := ParseInput(data)
		if err != nil {
			return
		}
		for _, id := range []string{in.ThreadID, in.RunID} {
			if id == "" || len(id) > maxIDBytes || !utf8.ValidString(id) {
				t.Fatalf("id %q accepted", id)
			}
		}
		seen := map[string]bool{}
		for _, r := range in.Resume {
			if r.InterruptID == "" || seen[r.InterruptID] || (r.Status != StatusResolved && r.Status != StatusCancelled) {
				t.Fatalf("resume %+v accepted", r)
			}
			if r.Status == StatusCancelled && r.Payload != nil {
				t.Fatalf("a cancelled resume kept its payload: %+v", r)
			}
			seen[r.InterruptID] = true
		}
		for _, m := range in.Messages {
			if m.ID == "" || !roles[m.Role] || (m.Role != "user" && m.Text != "") {
				t.Fatalf("message %+v accepted", m)
			}
		}
	})
}
