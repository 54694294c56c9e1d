package scenario_test

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kindkit/kindkit/scenario"
)

// The reference corpus is read where it sits, never copied into the project.
const (
	referenceDir = "../../shared/reference/scenarios"
	ownDir       = "../spec/conformance/scenarios"
)

const okStep = `[{"send":{"action":"ping"},"expect":[{"type":"pong"}]}]`

func TestParseErrors(t *testing.T) {
	t.Parallel()
	cases := map[string]struct {
		file string
		want string
	}{
		"not JSON": {
			file: "{\n  \"name\": \"t\",\n  \"steps\": [}\n",
			want: `x.json: invalid JSON at line 3, column 13: invalid character '}' looking for beginning of value`,
		},
		"cut short": {
			file: `{"name":"t"`,
			want: `x.json: invalid JSON: unexpected end of input`,
		},
		"not an object": {
			file: `[]`,
			want: `x.json: a scenario file must hold a JSON object`,
		},
		"data after the object": {
			file: `{"name":"t","steps":` + okStep + `} {}`,
			want: `x.json: invalid JSON: data after the top-level value`,
		},
		"unknown top-level field": {
			file: `{"name":"t","stepz":[],"steps":` + okStep + `}`,
			want: `x.json: unknown field "stepz"`,
		},
		"no name": {
			file: `{"steps":` + okStep + `}`,
			want: `x.json: name: missing`,
		},
		"no steps": {
			file: `{"name":"t","steps":[]}`,
			want: `x.json: steps: a scenario needs at least one step`,
		},
		"unknown script kind": {
			file: `{"name":"t","mockLlmScript":[{"kind":"text","text":"a"},{"kind":"image"}],"steps":` + okStep + `}`,
			want: `x.json: mockLlmScript[1]: unknown kind "image" (want "text" or "toolCall")`,
		},
		"script entry without kind": {
			file: `{"name":"t","mockLlmScript":[{"text":"a"}],"steps":` + okStep + `}`,
			want: `x.json: mockLlmScript[0]: missing kind (want "text" or "toolCall")`,
		},
		"tool call without name": {
			file: `{"name":"t","mockLlmScript":[{"kind":"toolCall","arguments":"{}"}],"steps":` + okStep + `}`,
			want: `x.json: mockLlmScript[0]: a toolCall entry needs a name`,
		},
		"arguments not a string": {
			file: `{"name":"t","mockLlmScript":[{"kind":"toolCall","name":"x","arguments":{}}],"steps":` + okStep + `}`,
			want: `x.json: mockLlmScript[0]: cannot unmarshal object into Go struct field ScriptEntry.arguments of type string`,
		},
		"matcher without type": {
			file: `{"name":"t","steps":[{"send":{"action":"a"},"expect":[{"type":"x"},{"status":200}]}]}`,
			want: `x.json: steps[0].expect[1]: missing type`,
		},
		"misspelled matcher field": {
			file: `{"name":"t","steps":[{"send":{"action":"a"},"expect":[{"type":"x","asert":{"a":1}}]}]}`,
			want: `x.json: steps[0].expect[0]: unknown field "asert"`,
		},
		"matcher not an object": {
			file: `{"name":"t","steps":[{"send":{"action":"a"},"expect":["pong"]}]}`,
			want: `x.json: steps[0].expect[0]: must be an object`,
		},
		"send not an object": {
			file: `{"name":"t","steps":[{"send":"ping","expect":[]}]}`,
			want: `x.json: steps[0].send: must be a JSON object (one client frame)`,
		},
		"send missing": {
			file: `{"name":"t","steps":[{"expect":[]}]}`,
			want: `x.json: steps[0].send: must be a JSON object (one client frame)`,
		},
		"placeholder never captured": {
			file: `{"name":"t","steps":[{"send":{"a":"x"},"expect":[{"type":"x","capture":{"sessionId":"data.sessionId"}}]},
			                       {"send":{"a":"y","nested":{"id":"{{interactionId}}"}},"expect":[]}]}`,
			want: `x.json: steps[1].send: placeholder {{interactionId}} is not captured by an earlier step`,
		},
		"placeholder captured only by the same step": {
			file: `{"name":"t","steps":[{"send":{"sessionId":"{{sessionId}}"},"expect":[{"type":"x","capture":{"sessionId":"data.sessionId"}}]}]}`,
			want: `x.json: steps[0].send: placeholder {{sessionId}} is not captured by an earlier step`,
		},
		"empty path segment": {
			file: `{"name":"t","steps":[{"send":{"a":"x"},"expect":[{"type":"x","assert":{"data..id":1}}]}]}`,
			want: `x.json: steps[0].expect[0].assert: path "data..id" has an empty segment`,
		},
		"bad variable name": {
			file: `{"name":"t","steps":[{"send":{"a":"x"},"expect":[{"type":"x","capture":{"a b":"data.id"}}]}]}`,
			want: `x.json: steps[0].expect[0].capture: invalid variable name "a b"`,
		},
		"empty capture path": {
			file: `{"name":"t","steps":[{"send":{"a":"x"},"expect":[{"type":"x","capture":{"id":""}}]}]}`,
			want: `x.json: steps[0].expect[0].capture.id: empty path`,
		},
		"accumulate without repeat": {
			file: `{"name":"t","steps":[{"send":{"a":"x"},"expect":[{"type":"stream_token","accumulate":"token"}]}]}`,
			want: `x.json: steps[0].expect[0]: accumulate needs repeat: true`,
		},
		"assertAccumulated without accumulate": {
			file: `{"name":"t","steps":[{"send":{"a":"x"},"expect":[{"type":"stream_token","repeat":true,"assertAccumulated":"a"}]}]}`,
			want: `x.json: steps[0].expect[0]: assertAccumulated needs accumulate`,
		},
		"status not a number": {
			file: `{"name":"t","steps":[{"send":{"a":"x"},"expect":[{"type":"x","status":"200"}]}]}`,
			want: `x.json: steps[0].expect[0]: cannot unmarshal string into Go struct field Matcher.status of type float64`,
		},
		"tool without name": {
			file: `{"name":"t","server":{"tools":[{"result":"ok"}]},"steps":` + okStep + `}`,
			want: `x.json: server.tools[0]: missing name`,
		},
		"tool parameters not a schema": {
			file: `{"name":"t","server":{"tools":[{"name":"a","parameters":[],"result":"ok"}]},"steps":` + okStep + `}`,
			want: `x.json: server.tools[0].parameters: must be a JSON Schema object`,
		},
		"empty confirm substring": {
			file: `{"name":"t","server":{"confirmTools":[""]},"steps":` + okStep + `}`,
			want: `x.json: server.confirmTools[0]: an empty substring would gate every tool`,
		},
		"unknown server field": {
			file: `{"name":"t","server":{"tool":[]},"steps":` + okStep + `}`,
			want: `x.json: server: unknown field "tool"`,
		},
		"empty divergence": {
			file: `{"name":"t","knownDivergences":[""],"knownDivergencesReason":"why","steps":` + okStep + `}`,
			want: `x.json: knownDivergences[0]: empty language name`,
		},
		"divergence without a reason": {
			file: `{"name":"t","knownDivergences":["go"],"steps":` + okStep + `}`,
			want: `x.json: knownDivergencesReason: missing: a known divergence says why it is tolerated`,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			s, err := scenario.Parse("x.json", []byte(tc.file))
			if err == nil {
				t.Fatalf("Parse succeeded: %+v", s)
			}
			if err.Error() != tc.want {
				t.Errorf("Parse error:\n got %s\nwant %s", err, tc.want)
			}
			var fe *scenario.FileError
			if !errors.As(err, &fe) || fe.File != "x.json" {
				t.Errorf("error is not a *FileError naming x.json: %#v", err)
			}
		})
	}
}

func TestParseDefaults(t *testing.T) {
	t.Parallel()
	s, err := scenario.Parse("d.json", []byte(`{
		"name": "d", "description": "defaults",
		"server": {"tools": [{"name": "lookup", "description": "d", "result": "ok"},
		                     {"name": "typed", "parameters": {"type": "object", "properties": {"id": {"type": "string"}}}, "result": "r"}],
		           "confirmTools": ["delete"], "knowledge": [{"source": "a.md", "content": "A"}]},
		"mockLlmScript": [{"kind": "toolCall", "name": "lookup", "arguments": "{\"id\": 1}"},
		                  {"kind": "toolCall", "name": "lookup", "arguments": "not json", "id": "call-9"},
		                  {"kind": "text", "text": "done"}],
		"steps": [{"send": {"action": "ping"}, "expect": null}],
		"knownDivergences": ["rust"], "knownDivergencesReason": "why"}`))
	if err != nil {
		t.Fatal(err)
	}
	want := &scenario.Scenario{
		Name: "d", Description: "defaults",
		Server: scenario.Server{
			Tools: []scenario.Tool{
				{Name: "lookup", Description: "d", Parameters: json.RawMessage(`{"type":"object","properties":{}}`), Result: "ok"},
				{Name: "typed", Parameters: json.RawMessage(`{"type": "object", "properties": {"id": {"type": "string"}}}`), Result: "r"},
			},
			ConfirmTools: []string{"delete"},
			Knowledge:    []scenario.Doc{{Source: "a.md", Content: "A"}},
		},
		MockLLMScript: []scenario.ScriptEntry{
			{Kind: "toolCall", Name: "lookup", Arguments: `{"id": 1}`, ID: "call-1"},
			{Kind: "toolCall", Name: "lookup", Arguments: "not json", ID: "call-9"},
			{Kind: "text", Text: "done"},
		},
		Steps:                  []scenario.Step{{Send: json.RawMessage(`{"action": "ping"}`)}},
		KnownDivergences:       []string{"rust"},
		KnownDivergencesReason: "why",
		File:                   "d.json",
	}
	if diff := cmp.Diff(want, s); diff != "" {
		t.Errorf("Parse (-want +got):\n%s", diff)
	}
}

func TestLoadDirReference(t *testing.T) {
	t.Parallel()
	list, err := scenario.LoadDir(referenceDir)
	if err != nil {
		t.Fatalf("the reference corpus must sit at %s and load: %v", referenceDir, err)
	}
	paths, _ := filepath.Glob(filepath.Join(referenceDir, "*.json"))
	if len(list) != len(paths) {
		t.Errorf("LoadDir returned %d scenarios for %d files", len(list), len(paths))
	}
	for i := 1; i < len(list); i++ {
		if list[i-1].File >= list[i].File {
			t.Errorf("not sorted: %s before %s", list[i-1].File, list[i].File)
		}
	}
}

// kindkit's own scenarios: one name per file, none shadowing a reference
// scenario, every session on the same agent.
func TestLoadDirOwn(t *testing.T) {
	t.Parallel()
	own, err := scenario.LoadDir(ownDir)
	if err != nil {
		t.Fatal(err)
	}
	if len(own) < 10 {
		t.Errorf("%d own scenarios, want at least 10", len(own))
	}
	reference := map[string]bool{}
	if ref, err := scenario.LoadDir(referenceDir); err == nil {
		for _, s := range ref {
			reference[s.Name] = true
		}
	}
	for _, s := range own {
		if stem := strings.TrimSuffix(filepath.Base(s.File), ".json"); s.Name != stem {
			t.Errorf("%s: name %q, want the file's stem %q", s.File, s.Name, stem)
		}
		if reference[s.Name] {
			t.Errorf("%s: shadows the reference scenario of the same name", s.File)
		}
		if strings.TrimSpace(s.Description) == "" {
			t.Errorf("%s: no description", s.File)
		}
		for i, st := range s.Steps {
			var frame map[string]any
			if err := json.Unmarshal(st.Send, &frame); err != nil {
				t.Fatal(err)
			}
			if frame["action"] == "create_conversation_session" && frame["agentId"] != "11111111-1111-1111-1111-111111111111" {
				t.Errorf("%s: steps[%d]: agentId %v", s.File, i, frame["agentId"])
			}
		}
	}
}

func TestLoadErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if _, err := scenario.LoadDir(dir); err == nil || !strings.Contains(err.Error(), "no *.json file") {
		t.Errorf("LoadDir of an empty folder = %v", err)
	}
	if _, err := scenario.LoadDir(filepath.Join(dir, "missing")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("LoadDir of a missing folder = %v, want ErrNotExist", err)
	}
	good := `{"name":"a","steps":` + okStep + `}`
	bad := `{"name":"b","mockLlmScript":[{"kind":"audio"}],"steps":` + okStep + `}`
	for name, text := range map[string]string{"a.json": good, "b.json": bad, "notes.txt": "ignored"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	_, err := scenario.LoadDir(dir)
	want := filepath.Join(dir, "b.json") + `: mockLlmScript[0]: unknown kind "audio" (want "text" or "toolCall")`
	if err == nil || err.Error() != want {
		t.Errorf("LoadDir = %v, want %s", err, want)
	}
	if _, err := scenario.Load(filepath.Join(dir, "c.json")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Load of a missing file = %v, want ErrNotExist", err)
	}
	s, err := scenario.Load(filepath.Join(dir, "a.json"))
	if err != nil || s.File != filepath.Join(dir, "a.json") {
		t.Errorf("Load = %+v, %v", s, err)
	}
}

func FuzzLoad(f *testing.F) {
	for _, dir := range []string{referenceDir, ownDir} {
		paths, _ := filepath.Glob(filepath.Join(dir, "*.json"))
		for _, p := range paths {
			data, err := os.ReadFile(p)
			if err != nil {
				f.Fatal(err)
			}
			f.Add(data)
		}
	}
	f.Add([]byte(`{"name":"t","steps":` + okStep + `}`))
	f.Add([]byte(`{"name":"t","mockLlmScript":[{"kind":"toolCall","name":"x"}],"steps":[{"send":{"a":"{{v}}"},"expect":[]}]}`))
	f.Add([]byte(`{"name":"t","steps":[{"send":{},"expect":[{"type":"x","status":1e999,"assert":{"a.0":[]},"capture":{"v":"a"}}]}]}`))
	f.Add([]byte(`{"name":"t","server":{"tools":[{"name":"x","parameters":null}]},"steps":[{"send":{"a":{"b":"{{v}}"}}}]}`))
	f.Add([]byte("\xff{"))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := scenario.Parse("fuzz.json", data)
		if err != nil {
			var fe *scenario.FileError
			if !errors.As(err, &fe) || fe.File != "fuzz.json" {
				t.Fatalf("error is not a *FileError naming the file: %#v", err)
			}
			return
		}
		if s.Name == "" || len(s.Steps) == 0 {
			t.Fatalf("accepted a scenario without a name or steps: %+v", s)
		}
		for _, e := range s.MockLLMScript {
			if e.Kind != scenario.KindText && (e.Kind != scenario.KindToolCall || e.ID == "") {
				t.Fatalf("accepted script entry %+v", e)
			}
		}
		for _, st := range s.Steps {
			var frame map[string]any
			if json.Unmarshal(st.Send, &frame) != nil || frame == nil {
				t.Fatalf("accepted send %s", st.Send)
			}
			for _, m := range st.Expect {
				if m.Type == "" {
					t.Fatalf("accepted a matcher without a type: %+v", m)
				}
			}
		}
		for _, tool := range s.Server.Tools {
			if !json.Valid(tool.Parameters) {
				t.Fatalf("tool %s has parameters %q", tool.Name, tool.Parameters)
			}
		}
	})
}
