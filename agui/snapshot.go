package agui

import (
	"slices"

	"github.com/kindkit/kindkit/store"
)

// snapshotLimit bounds the messages a MESSAGES_SNAPSHOT carries, the
// newest; a longer thread's oldest messages are left out of it (and a
// client that takes the snapshot as the whole conversation drops them).
const snapshotLimit = 1000

// snapshotPage is how many messages one read of the history brings.
const snapshotPage = 200

// snapshotRoles are what the model saw of a conversation, which is what
// AG-UI's messages are: the person's, the model's (text and tool calls)
// and the tools' results. The person's view of a reply (RoleReply) is the
// model's text again, and a turn that ended without one (RoleEnded) has
// no AG-UI message.
var snapshotRoles = []store.Role{store.RoleUser, store.RoleAssistant, store.RoleTool}

// snapshot sends MESSAGES_SNAPSHOT: the thread's messages as they are
// stored, ids included, so that a client that missed part of a run (its
// stream broke) has all that was said.
func (r *run) snapshot() {
	var stored []*store.Message
	before := ""
	for len(stored) < snapshotLimit {
		page, more, err := r.h.store.Messages(r.ctx, r.thread.conv.ID, snapshotRoles, before, min(snapshotPage, snapshotLimit-len(stored)))
		if err != nil {
			r.h.log.Error("agui: load the thread's messages", "err", err)
			return // the run goes on without its snapshot
		}
		stored = append(stored, page...)
		if !more || len(page) == 0 {
			break
		}
		before = page[len(page)-1].ID
	}
	slices.Reverse(stored)
	msgs := make([]any, 0, len(stored))
	for _, m := range stored {
		switch m.Role {
		case store.RoleUser:
			msgs = append(msgs, userMessage{ID: m.ID, Role: "user", Content: m.Text})
		case store.RoleAssistant:
			a := assistantMessage{ID: m.ID, Role: "assistant", Content: m.Text}
			for _, c := range m.ToolCalls {
				a.ToolCalls = append(a.ToolCalls, toolCall{ID: c.ID, Type: "function", Function: functionCall{Name: c.Name, Arguments: c.Arguments}})
			}
			msgs = append(msgs, a)
		case store.RoleTool:
			t := toolMessage{ID: m.ID, Role: "tool", Content: m.Text, ToolCallID: m.ToolCallID}
			if m.IsError {
				t.Error = m.Text
			}
			msgs = append(msgs, t)
		}
	}
	r.send(messagesSnapshot{Type: "MESSAGES_SNAPSHOT", Timestamp: r.now(), Messages: msgs})
}
