package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kindkit/kindkit/internal/servertest"
)

// aguiClient is the folder scripts/agui.sh installed the AG-UI client
// into (servertest.AGUIClient).
func aguiClient(t *testing.T) string { return servertest.AGUIClient(t) }

// confirmScript gates a server tool behind a person's confirmation.
const confirmScript = `{
 "server": {"tools": [{"name": "delete_record", "description": "Deletes a record.", "result": "record 42 deleted"}], "confirmTools": ["delete"]},
 "mockLlmScript": [
  {"kind": "toolCall", "name": "delete_record", "arguments": "{\"id\":42}"},
  {"kind": "text", "text": "Done."}
 ]
}`

// aguiURL is a process's AG-UI endpoint.
func aguiURL(p *proc) string {
	return "http://" + strings.TrimSuffix(strings.TrimPrefix(p.url, "ws://"), "/ws") + "/agui"
}

// TestAGUIClient drives kindserver's /agui from node with the real AG-UI
// client, on both stores: a whole card cycle, a cancelled interrupt, new
// input while an interrupt is open, the same resume twice, a confirmation
// approved and denied, one approved with edited arguments, and the
// declared capabilities. The scenarios and
// their checks are in testdata/agui-client.cjs; every event passes
// @ag-ui/core's schemas and the client's own verification.
func TestAGUIClient(t *testing.T) {
	dir := aguiClient(t)
	confirm := filepath.Join(t.TempDir(), "confirm.json")
	if err := os.WriteFile(confirm, []byte(confirmScript), 0o644); err != nil {
		t.Fatal(err)
	}
	for name, store := range stores(t) {
		t.Run(name, func(t *testing.T) {
			cards := start(t, store(t))
			gated := start(t, store(t), "-script", confirm)
			editable := start(t, store(t), "-script", confirm, "-tool-decisions", "approve,reject,edit")
			for _, c := range []struct {
				scenario string
				p        *proc
			}{{"cycle", cards}, {"cancelled", cards}, {"inputWhileOpen", cards}, {"resumeTwice", cards}, {"confirm", gated}, {"confirmEdit", editable}, {"capabilities", cards}} {
				t.Run(c.scenario, func(t *testing.T) {
					nodeScenario(t, dir, c.scenario, aguiURL(c.p))
				})
			}
		})
	}
}

func nodeScenario(t *testing.T, dir, scenario, url string) {
	t.Helper()
	cmd := exec.Command("node", "testdata/agui-client.cjs", scenario, url)
	cmd.Env = append(os.Environ(), "KINDKIT_TEST_AGUI="+dir)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("node %s: %v\n%s", scenario, err, out)
	}
}
