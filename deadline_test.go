package kindkit_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/kindkit/kindkit"
)

func TestDeadlineCheck(t *testing.T) {
	for _, c := range []struct {
		d  kindkit.Deadline
		ok bool
	}{
		{kindkit.Deadline{}, true},
		{kindkit.Deadline{After: time.Hour, OnExpiry: kindkit.ExpireEndTurn}, true},
		{kindkit.Deadline{OnExpiry: kindkit.ExpireDefault, Default: json.RawMessage(`{"a":1}`)}, true},
		{kindkit.Deadline{After: -time.Second}, false},
		{kindkit.Deadline{OnExpiry: kindkit.ExpireDefault}, false},                                 // no values
		{kindkit.Deadline{OnExpiry: kindkit.ExpireDefault, Default: json.RawMessage(`{`)}, false},  // not JSON
		{kindkit.Deadline{OnExpiry: kindkit.ExpireEndTurn, Default: json.RawMessage(`{}`)}, false}, // values that nothing uses
		{kindkit.Deadline{OnExpiry: "later"}, false},
	} {
		if err := c.d.Check(); (err == nil) != c.ok {
			t.Errorf("%+v.Check() = %v, want ok %v", c.d, err, c.ok)
		}
	}
}
