package agent

import (
	"context"
	"encoding/json"
	"log/slog"

	"github.com/kindkit/kindkit/store"
)

// hostEffect runs what the host does with valid values: an identity
// intake's contact is stamped on the session. Errors never fail the turn.
func hostEffect(ctx context.Context, st store.Store, log *slog.Logger, sessionID, kind string, values []byte) {
	if kind != "identity_intake" {
		return
	}
	var v struct{ Name, Email, Phone string }
	if json.Unmarshal(values, &v) != nil {
		return
	}
	if err := st.SetContact(ctx, sessionID, v.Name, v.Email, v.Phone); err != nil {
		log.Warn("stamp contact on session", "err", err)
	}
}
