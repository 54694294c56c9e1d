package kindserver

import (
	"context"

	"github.com/kindkit/kindkit"
	"github.com/kindkit/kindkit/gen/identityintakegen"
	"github.com/kindkit/kindkit/store"
)

// hooks are what kindserver does with accepted answers: an identity
// intake's contact is stamped on the session that gave it.
func hooks(st store.Store) []kindkit.Hook {
	return []kindkit.Hook{identityintakegen.OnAnswer(func(ctx context.Context, a kindkit.Answered, v *identityintakegen.Values) error {
		return st.SetContact(ctx, a.SessionID, deref(v.Name), deref(v.Email), deref(v.Phone))
	})}
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
